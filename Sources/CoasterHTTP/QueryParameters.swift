import Hummingbird
import HummingbirdCore

/// Query parameters by name, the first of a name given twice: Hummingbird's parsed ones, or the
/// fast lane's reading of a plain target (``TargetQuery``).
public protocol QueryLookup {
    func value(named name: String) -> Substring?
}

extension FlatDictionary<Substring, Substring>: QueryLookup {
    public func value(named name: String) -> Substring? { self[name[...]] }

    /// The first name the query gives a second time (not the empty one: `a=1&&b=2`).
    public var repeatedName: Substring? {
        var seen = Set<Substring>()
        for (name, _) in self where !name.isEmpty && !seen.insert(name).inserted { return name }
        return nil
    }
}

/// Refuses a query that gives a parameter more than once (`?lat=1&lat=2`): which one a route read
/// was the first, silently, so a client's mistake (or a proxy's appended copy) answered another
/// question than it asked. A `400` `invalid-parameter` problem naming it. (The fast lane leaves
/// such targets to the router: ``TargetQuery/mayRepeatAName``.)
public struct RepeatedQueryMiddleware<Context: RequestContext>: RouterMiddleware {
    public init() {}

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if request.uri.query != nil, let name = request.uri.queryParameters.repeatedName {
            throw Problem.invalidParameter(String(name), "given more than once; give each query parameter once")
        }
        return try await next(request, context)
    }
}
