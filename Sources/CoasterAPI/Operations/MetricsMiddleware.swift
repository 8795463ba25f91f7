import CoasterService
import Hummingbird

/// Counts and times every request by method, route template (not the raw path, which would make
/// one series per user id) and status.
struct RequestMetricsMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let metrics: ServiceMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard !context.negotiatingUpgrade else { return try await next(request, context) }
        let start = ContinuousClock.now
        do {
            let response = try await next(request, context)
            self.metrics.request(method: request.method.rawValue, route: context.endpointPath ?? "unmatched", status: Int(response.status.code),
                                 duration: ContinuousClock.now - start)
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status.code ?? 500
            self.metrics.request(method: request.method.rawValue, route: context.endpointPath ?? "unmatched", status: Int(status),
                                 duration: ContinuousClock.now - start)
            throw error
        }
    }
}
