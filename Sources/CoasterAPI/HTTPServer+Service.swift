import CoasterHTTP
import HummingbirdWebSocket
import NIOCore

/// Upgrades are negotiated at `GET /v1/live` (``LiveController``).
extension AppRequestContext: UpgradeNegotiatingContext {
    public static var webSocketPath: String { LiveController.path }
}
