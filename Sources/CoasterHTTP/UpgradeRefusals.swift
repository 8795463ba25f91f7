import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTPTypes
import Synchronization

/// A refused WebSocket upgrade answered with the route's own answer.
///
/// hummingbird-websocket asks the router whether to upgrade (the WebSocket route with its
/// middleware: a bearer token, say), but when the route answers anything but `200` it drops that
/// answer and writes a bare `400 Bad Request`. An app whose token had expired could not tell that
/// from a malformed handshake, so it could not know to log in again. The router's answer is kept
/// here (``RecordingResponder``), by connection, and written in place of the bare 400
/// (``Writer``): a `401` problem for a missing or expired token, as every other route answers; a
/// `400` `not-websocket` problem for a route that answers but does not upgrade.
public final class UpgradeRefusals: Sendable {
    /// What the route answered.
    public struct Refusal: Sendable {
        public var status: HTTPResponse.Status
        public var headers: HTTPFields
        public var body: ByteBuffer
        /// When it was kept: a connection that closed before it was written leaves it behind,
        /// and what is older than ``keptFor`` goes when the next is kept.
        public var at: ContinuousClock.Instant

        public init(status: HTTPResponse.Status, headers: HTTPFields, body: ByteBuffer, at: ContinuousClock.Instant) {
            self.status = status
            self.headers = headers
            self.body = body
            self.at = at
        }
    }

    /// Longer than an upgrade's negotiation takes, by far.
    static let keptFor: Duration = .seconds(60)

    private let kept = Mutex<[ObjectIdentifier: Refusal]>([:])

    public init() {}

    public func keep(_ refusal: Refusal, for connection: ObjectIdentifier) {
        self.kept.withLock { kept in
            kept = kept.filter { refusal.at - $0.value.at < Self.keptFor }
            kept[connection] = refusal
        }
    }

    public func take(for connection: ObjectIdentifier) -> Refusal? {
        self.kept.withLock { $0.removeValue(forKey: connection) }
    }

    /// The router as hummingbird-websocket asks it whether to upgrade, keeping what it answers
    /// when that is not an upgrade, and counting the request by what the client is sent: `101`
    /// for an upgrade, the kept answer's status for a refusal.
    public struct RecordingResponder<Inner: HTTPResponder, Metrics: HTTPMetricsRecording>: HTTPResponder
    where Inner.Context: UpgradeNegotiatingContext {
        public typealias Context = Inner.Context
        let inner: Inner
        let refusals: UpgradeRefusals
        let metrics: Metrics

        public init(inner: Inner, refusals: UpgradeRefusals, metrics: Metrics) {
            self.inner = inner
            self.refusals = refusals
            self.metrics = metrics
        }

        public func respond(to request: Request, context: Context) async throws -> Response {
            var context = context
            context.negotiatingUpgrade = true
            let start = ContinuousClock.now
            func count(_ status: HTTPResponse.Status) {
                self.metrics.recordRequest(method: request.method.rawValue, route: context.endpointPath ?? "unmatched", status: status.code,
                                     duration: ContinuousClock.now - start)
            }
            do {
                let (response, sent) = try await self.answer(request, context)
                count(sent)
                return response
            } catch {
                count((error as? any HTTPResponseError)?.status ?? .internalServerError)
                throw error
            }
        }

        /// The router's answer, and the status the client is sent for it.
        private func answer(_ request: Request, _ context: Context) async throws -> (Response, sent: HTTPResponse.Status) {
            let response = try await self.inner.respond(to: request, context: context)
            if response.status == .ok {
                guard request.uri.path != Context.webSocketPath else { return (response, .switchingProtocols) }
                // A route that answers but is not a WebSocket (`GET /health`): hummingbird-websocket
                // refuses the upgrade with its bare 400, which now says why.
                let problem = Problem(.notWebSocket, status: .badRequest, title: "Not a WebSocket",
                                      detail: "\(request.method) \(request.uri.path) does not upgrade to a WebSocket; "
                                          + "GET \(Context.webSocketPath) does. Send the request without Upgrade: websocket.")
                var headers = problem.responseHeaders
                headers[.requestID] = context.id
                let body = ByteBuffer(bytes: try problem.body(path: request.uri.path, requestID: context.id))
                self.refusals.keep(Refusal(status: problem.status, headers: headers, body: body, at: .now), for: context.connection)
                return (response, problem.status)
            }
            let sink = Sink()
            try await response.body.write(Sink.Writer(sink: sink))
            self.refusals.keep(Refusal(status: response.status, headers: response.headers, body: sink.buffer, at: .now),
                               for: context.connection)
            return (response, response.status)
        }
    }

    /// Collects a response body.
    private final class Sink: @unchecked Sendable {
        // Unchecked: written by one body write, then read after it has finished.
        var buffer = ByteBuffer()

        struct Writer: ResponseBodyWriter {
            let sink: Sink
            mutating func write(_ buffer: ByteBuffer) async throws {
                var buffer = buffer
                self.sink.buffer.writeBuffer(&buffer)
            }
            mutating func write(contentsOf buffers: some Sequence<ByteBuffer>) async throws {
                for buffer in buffers { try await self.write(buffer) }
            }
            consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
        }
    }

    /// On each HTTP/1 connection: if the connection's upgrade was refused with an answer kept for
    /// it, writes that answer in place of hummingbird-websocket's bare 400 (then leaves); on any
    /// other connection it leaves at once.
    public final class Writer: ChannelOutboundHandler, RemovableChannelHandler {
        public typealias OutboundIn = HTTPResponsePart
        public typealias OutboundOut = HTTPResponsePart

        private let refusals: UpgradeRefusals
        private var refusal: Refusal?
        /// Between the replaced head and its end: the bare answer's own parts are dropped.
        private var replacing = false

        public init(_ refusals: UpgradeRefusals) {
            self.refusals = refusals
        }

        public func handlerAdded(context: ChannelHandlerContext) {
            self.refusal = self.refusals.take(for: ObjectIdentifier(context.channel))
            if self.refusal == nil { self.leave(context) }
        }

        public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            guard let refusal = self.refusal else {
                context.write(data, promise: promise)
                return
            }
            switch self.unwrapOutboundIn(data) {
            case .head(let head) where Self.isBareRefusal(head) && !self.replacing:
                self.replacing = true
                var fields = refusal.headers
                fields[.connection] = "close"
                fields[.contentLength] = String(refusal.body.readableBytes)
                context.write(self.wrapOutboundOut(.head(HTTPResponse(status: refusal.status, headerFields: fields))), promise: promise)
                if refusal.body.readableBytes > 0 { context.write(self.wrapOutboundOut(.body(refusal.body)), promise: nil) }
            case .body where self.replacing:
                promise?.succeed()
            case .end where self.replacing:
                self.refusal = nil
                context.write(self.wrapOutboundOut(.end(nil)), promise: promise)
                self.leave(context)
            default:
                // Not the bare answer this was waiting for: nothing to replace.
                self.refusal = nil
                context.write(data, promise: promise)
                self.leave(context)
            }
        }

        /// hummingbird-websocket's answer to a refused upgrade: a 400 with no body and no type,
        /// which no route of this service writes (its 400s are problems). A refusal kept for a
        /// connection that closed before its answer could be written, whose identity a new
        /// connection then took, replaces nothing else.
        static func isBareRefusal(_ head: HTTPResponse) -> Bool {
            head.status == .badRequest && head.headerFields[.contentType] == nil && head.headerFields[.contentLength] == "0"
        }

        private func leave(_ context: ChannelHandlerContext) {
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }
}

/// The request context of a router that WebSocket upgrades are negotiated with
/// (``UpgradeRefusals/RecordingResponder``).
public protocol UpgradeNegotiatingContext: RequestContext {
    /// Set while hummingbird-websocket asks the router whether to upgrade: what the client is sent
    /// is decided after the router answers, so the responder counts the request, not the router's
    /// metrics middleware.
    var negotiatingUpgrade: Bool { get set }
    /// The connection the request came on (its channel's identity).
    var connection: ObjectIdentifier { get }
    /// The path of the route that upgrades to a WebSocket when it answers `200 OK`.
    static var webSocketPath: String { get }
}
