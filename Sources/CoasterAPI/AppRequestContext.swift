import CoasterCore
import CoasterHTTP
import CoasterService
import Foundation
import Hummingbird
import HummingbirdWebSocket
import NIOCore

/// The request context of every CoasterLife route.
public struct AppRequestContext: RequestContext, WebSocketRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Set by the authentication middleware when the request carries a valid token.
    public var identity: Identity?
    /// The session token, when the map's cookie authenticated the request (``MapSession``): the
    /// pages derive their form tokens from it.
    var cookieSession: String?
    /// Why a presented token was refused, for the 401 problem's detail.
    var authenticationFailure: String?
    /// The peer's IP address (no port), or "unknown"; throttles key on it. Written out only when
    /// asked (a login): formatting it for every request was a hundredth of `/health`.
    public var clientAddress: String { self.forwardedFor ?? self.remoteAddress?.ipAddress ?? "unknown" }
    /// The client as a trusted reverse proxy named it (``TrustedProxyMiddleware``).
    var forwardedFor: String?
    /// The socket peer's IP address, or `nil` if it has none.
    var peerAddress: String? { self.remoteAddress?.ipAddress }
    private let remoteAddress: SocketAddress?
    /// Carries the WebSocket handler from the upgrade route to the upgraded channel.
    public let webSocket: WebSocketHandlerReference<Self>
    /// The connection the request came on (its channel's identity; ``UpgradeRefusals``).
    public let connection: ObjectIdentifier
    /// Set while hummingbird-websocket asks the router whether to upgrade: what the client is
    /// sent is decided after the router answers, so ``UpgradeRefusals/RecordingResponder``
    /// counts the request, not ``RequestMetricsMiddleware``.
    public var negotiatingUpgrade = false

    public init(source: Source) {
        self.coreContext = .init(source: source)
        self.webSocket = .init()
        self.remoteAddress = source.channel.remoteAddress
        self.connection = ObjectIdentifier(source.channel)
    }

    /// Park files are the largest bodies the service takes (docs: OperationsAndSecurity, "Limits"); routes that take
    /// smaller bodies collect them with their own limit.
    public var maxUploadSize: Int { 16 * 1024 * 1024 }

    /// RFC 3339 times, keys in a stable order, `/` unescaped (time zone names, URLs).
    public var responseEncoder: JSONEncoder { Self.encoder }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// The caller, or a 401 problem.
    func requireIdentity() throws -> Identity {
        guard let identity else { throw Problem.unauthorized(self.authenticationFailure) }
        return identity
    }
}
