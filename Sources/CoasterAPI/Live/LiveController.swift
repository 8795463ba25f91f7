import CoasterCore
import CoasterHTTP
import CoasterService
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOWebSocket
import ServiceLifecycle

/// `GET /v1/live`: a WebSocket of friends' location changes and park transitions, after the
/// privacy rules, with heartbeats. Authenticated by the bearer token of the upgrade request.
struct LiveController {
    let live: Live
    let heartbeat: Duration

    /// The route's path: the only one that upgrades (``UpgradeRefusals/RecordingResponder``).
    static let path = "/v1/live"

    func addRoutes(to group: RouterGroup<AppRequestContext>) {
        group.ws("live", shouldUpgrade: { request, context in
            _ = try context.requireIdentity()
            guard request.headers[.upgrade]?.lowercased() == "websocket" else {
                var problem = Problem(.upgradeRequired, status: .upgradeRequired, title: "Upgrade required",
                                      detail: "GET /v1/live is a WebSocket; connect with Upgrade: websocket.")
                problem.headers[.upgrade] = "websocket"
                throw problem
            }
            return .upgrade([:])
        }, onUpgrade: { inbound, outbound, context in
            guard let me = context.requestContext.identity else { return }
            let (id, stream) = self.live.subscribe(me.id, tokenHash: me.tokenHash)
            defer { self.live.unsubscribe(me.id, id) }
            let seconds = Double(self.heartbeat.components.seconds) + Double(self.heartbeat.components.attoseconds) / 1e18
            try await outbound.write(.text(LiveMessage.hello(user: me.id, heartbeat: seconds).json))
            // On SIGTERM the server drains: end this session so the drain can finish.
            try await withGracefulShutdownHandler {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await message in stream {
                        if message == Live.sessionEnded {
                            // Nothing more goes out on a revoked session, whatever was waiting.
                            try await outbound.close(.policyViolation, reason: "session ended: log in again")
                            return
                        }
                        try await outbound.write(.text(message))
                    }
                    // The stream ended without the client leaving: it fell behind and was dropped.
                    try await outbound.close(.policyViolation, reason: "too slow: the client did not keep up")
                }
                group.addTask {
                    while true {
                        try await Task.sleep(for: self.heartbeat)
                        self.live.send(LiveMessage.heartbeat(at: Date()).json, to: me.id, only: id)
                    }
                }
                group.addTask {
                    // Clients send nothing we need; reading notices when they leave.
                    for try await _ in inbound.messages(maxSize: 4096) {}
                }
                _ = try await group.next()
                group.cancelAll()
            }
            } onGracefulShutdown: {
                self.live.unsubscribe(me.id, id)
            }
        })
    }
}
