import CoasterHTTP
import CoasterService

/// CoasterHTTP's handlers (the fast lane, the first-request guard, the upgrade refusals) count
/// what they answer in the service's metrics, under the same series as the router's answers.
extension ServiceMetrics: HTTPMetricsRecording {
    public func recordRequest(method: String, route: String, status: Int, duration: Duration) {
        self.request(method: method, route: route, status: status, duration: duration)
    }

    public func recordMalformedRequest(status: Int) {
        self.malformedRequest(status: status)
    }

    public func recordFastLaneAnswer(route: String) {
        self.fastLaneAnswered(route: route)
    }
}
