import CoasterService
import CoasterStore
import Hummingbird

/// `GET /metrics`: Prometheus text format. Expose it to the monitoring network only.
struct MetricsController {
    let service: Service

    var endpoints: RouteCollection<AppRequestContext> {
        let routes = RouteCollection(context: AppRequestContext.self)
        routes.get("metrics") { _, _ in
            self.service.metrics.gauges(index: self.service.fences.index, people: self.service.people.count,
                                        liveConnections: self.service.live.connectionCount, fixCommits: self.service.store.fixCommits)
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                            body: .init(byteBuffer: ByteBuffer(bytes: self.service.metrics.render())))
        }
        return routes
    }
}
