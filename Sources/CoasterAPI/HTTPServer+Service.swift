import CoasterHTTP
import HummingbirdWebSocket
import NIOCore

/// The `Server` header of every answer: Hummingbird writes the router's (the application's
/// configuration, ``buildApplication(_:service:logger:)``), CoasterHTTP's handlers their own.
let serverName = "coasterlife"

extension FastLane where Routes == FastRoutes {
    /// The lane over the service's hot routes, its answers signed as the router's are.
    convenience init(routes: FastRoutes, idleTimeout: TimeAmount?) {
        self.init(routes: routes, idleTimeout: idleTimeout, serverName: serverName)
    }
}

extension GuardedHTTPChannel where Metrics == ServiceMetrics {
    /// The service's channel, its guards' answers signed as the router's are.
    init(inner: HTTP1WebSocketUpgradeChannel, idleTimeout: TimeAmount?, metrics: ServiceMetrics) {
        self.init(inner: inner, idleTimeout: idleTimeout, metrics: metrics, serverName: serverName)
    }
}

/// Upgrades are negotiated at `GET /v1/live` (``LiveController``).
extension AppRequestContext: UpgradeNegotiatingContext {
    public static var webSocketPath: String { LiveController.path }
}
