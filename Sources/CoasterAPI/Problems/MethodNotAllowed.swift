import HTTPTypes
import Hummingbird

/// Answers a request to a path the service has, with a method it does not serve there, with a
/// `405 Method Not Allowed` problem and an `Allow` header (RFC 9110 §15.5.6), where Hummingbird's
/// router answers 404 as if the path did not exist.
///
/// Added to the router after every route, so it wraps only the router's not-found responder: it
/// costs nothing on a route that matched.
struct MethodNotAllowedMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext

    /// Each route's path, and the methods it is served with (HEAD wherever GET is: the router
    /// generates those).
    private let paths: [(path: RouterPath, methods: [HTTPRequest.Method])]

    init(routes: [Router<Context>.RouteDescription]) {
        var methods: [String: (path: RouterPath, methods: Set<HTTPRequest.Method>)] = [:]
        for route in routes {
            methods[route.path.description, default: (route.path, [])].methods.insert(route.method)
        }
        self.paths = methods.values.map { route in
            (route.path, Array(route.methods.contains(.get) ? route.methods.union([.head]) : route.methods))
        }
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let (route, allowed) = self.served(at: request.uri.path) {
            // The request metrics label it with the route, as every answer of a route is, not as
            // a path no route has.
            context.coreContext.endpointPath.value = route
            throw Problem.methodNotAllowed(request.method, path: request.uri.path, allowed: allowed)
        }
        return try await next(request, context)
    }

    /// The route at `path` (the one with the most fixed segments where several match) and the
    /// methods served there, as an `Allow` header lists them; `nil` if no route has it.
    func served(at path: String) -> (route: String, allowed: String)? {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        let matching = self.paths.filter { Self.matches($0.path, segments) }
        let methods = matching.reduce(into: Set<HTTPRequest.Method>()) { $0.formUnion($1.methods) }
        let best = matching.map(\.path).sorted { a, b in
            let (x, y) = (Self.fixedSegments(a), Self.fixedSegments(b))
            return x != y ? x > y : a.description < b.description
        }
        guard let route = best.first else { return nil }
        return (route.description, methods.map(\.rawValue).sorted().joined(separator: ", "))
    }

    /// How many of a path's segments are fixed, not captured.
    private static func fixedSegments(_ path: RouterPath) -> Int {
        path.components.count { $0 == .path(Substring($0.description)) }
    }

    /// Whether a route's path matches the request's segments, one element a segment (the
    /// service's routes have no recursive wildcards).
    private static func matches(_ path: RouterPath, _ segments: [Substring]) -> Bool {
        guard path.components.count == segments.count else { return false }
        return zip(path.components, segments).allSatisfy { element, segment in element ~= segment }
    }
}

extension Problem {
    /// `/problems/method-not-allowed` (405) for `method` on `path`, with the `Allow` header when
    /// the methods served there are known.
    static func methodNotAllowed(_ method: HTTPRequest.Method, path: String, allowed: String?) -> Problem {
        var problem = Problem(.methodNotAllowed, status: .methodNotAllowed, title: "Method not allowed",
                              detail: "\(method) is not allowed on \(path)" + (allowed.map { "; allowed: \($0)." } ?? "."))
        problem.headers[.allow] = allowed
        return problem
    }
}
