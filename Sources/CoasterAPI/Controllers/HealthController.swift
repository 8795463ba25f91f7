import CoasterCore
import CoasterHTTP
import CoasterService
import CoasterStore
import Hummingbird
import Logging

/// Liveness and readiness for process supervisors and load balancers.
struct HealthController {
    let store: any Store
    let fences: Fences

    struct Status: ResponseEncodable, Sendable {
        var status: String
        var parks: Int?
        var zones: Int?
    }

    /// `GET /health`'s answer: the process is up and serving (the fast lane's too).
    static let alive = Status(status: "ok")

    var endpoints: RouteCollection<AppRequestContext> {
        let routes = RouteCollection(context: AppRequestContext.self)
        routes.get("health") { _, _ in Self.alive }
        routes.get("ready", use: self.ready)
        return routes
    }

    /// Ready once the store answers and the fences are loaded.
    @Sendable func ready(_ request: Request, context: AppRequestContext) async throws -> Status {
        do {
            _ = try await self.store.parkLoads()
        } catch {
            context.logger.error("readiness check failed", metadata: ["error": "\(error)"])
            throw Problem(.notReady, status: .serviceUnavailable, title: "Not ready", detail: "The store does not answer.")
        }
        let index = self.fences.index
        return Status(status: "ready", parks: index.parkCount, zones: index.zoneCount)
    }
}
