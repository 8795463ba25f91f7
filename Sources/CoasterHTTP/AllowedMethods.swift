import HTTPTypes
import Hummingbird

/// What a path a service has answers to a method no route serves there, where Hummingbird's
/// router answers 404 as if the path did not exist:
///
/// - `OPTIONS` is `204 No Content` with an `Allow` header naming the methods served there
///   (RFC 9110 §9.3.7); `OPTIONS *`, about the server as a whole, names every method it serves;
/// - any other method is a `405 Method Not Allowed` problem with the same `Allow` header
///   (RFC 9110 §15.5.6).
///
/// Added to the router after every route, so it wraps only the router's not-found responder: it
/// costs nothing on a route that matched.
public struct AllowedMethodsMiddleware<Context: RequestContext>: RouterMiddleware {
    /// Each route's path, and the methods it is served with as its `Allow` header lists them (HEAD
    /// wherever GET is: the router generates those; OPTIONS everywhere: this middleware answers it).
    private let paths: [(path: RouterPath, allowed: String)]
    /// Every method served somewhere, as `OPTIONS *`'s `Allow` header lists them.
    private let everywhere: String

    public init(routes: [Router<Context>.RouteDescription]) {
        var methods: [String: (path: RouterPath, methods: Set<HTTPRequest.Method>)] = [:]
        for route in routes {
            methods[route.path.description, default: (route.path, [])].methods.insert(route.method)
        }
        let served = methods.values.map { route in
            (path: route.path, methods: route.methods.union(route.methods.contains(.get) ? [.head, .options] : [.options]))
        }
        self.paths = served.map { ($0.path, Self.allowHeader($0.methods)) }
        self.everywhere = Self.allowHeader(served.reduce(into: Set()) { $0.formUnion($1.methods) })
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if request.method == .options, request.uri.path == "*" {
            context.coreContext.endpointPath.value = "*"
            return Response(status: .noContent, headers: [.allow: self.everywhere])
        }
        if let (route, allowed) = self.served(at: request.uri.path) {
            // The request metrics label it with the route, as every answer of a route is, not as
            // a path no route has.
            context.coreContext.endpointPath.value = route
            if request.method == .options {
                return Response(status: .noContent, headers: [.allow: allowed])
            }
            // The route serves this method, yet the router did not reach it: a longer route's
            // fixed segment took the path (`/v1/lists/following` is `/v1/lists/{listId}`'s
            // shape, but the router follows `/v1/lists/following/changes`, which ends deeper).
            // Not a method the path lacks, so no 405 that lists the method it refuses.
            if allowed.split(separator: ", ").contains(Substring(request.method.rawValue)) {
                return try await next(request, context)
            }
            throw Problem.methodNotAllowed(request.method, path: request.uri.path, allowed: allowed)
        }
        return try await next(request, context)
    }

    /// Methods as an `Allow` header lists them: by name, comma-separated.
    private static func allowHeader(_ methods: Set<HTTPRequest.Method>) -> String {
        methods.map(\.rawValue).sorted().joined(separator: ", ")
    }

    /// The route at `path` (the one with the most fixed segments where several match) and the
    /// methods it is served with, as an `Allow` header lists them; `nil` if no route has it.
    /// Only that route's: `/v1/friends/nearby` also fits `/v1/friends/{userId}`, but a DELETE
    /// there asks to unfriend a user named "nearby" (a 404), not for anything nearby, and the
    /// OpenAPI document lists GET alone at that path.
    public func served(at path: String) -> (route: String, allowed: String)? {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        let best = self.paths.filter { Self.matches($0.path, segments) }.min { a, b in
            let (x, y) = (Self.fixedSegments(a.path), Self.fixedSegments(b.path))
            return x != y ? x > y : a.path.description < b.path.description
        }
        guard let best else { return nil }
        return (best.path.description, best.allowed)
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
    public static func methodNotAllowed(_ method: HTTPRequest.Method, path: String, allowed: String?) -> Problem {
        var problem = Problem(.methodNotAllowed, status: .methodNotAllowed, title: "Method not allowed",
                              detail: "\(method) is not allowed on \(path)" + (allowed.map { "; allowed: \($0)." } ?? "."))
        problem.headers[.allow] = allowed
        return problem
    }
}
