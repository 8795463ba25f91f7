import HTTPTypes
import Hummingbird

/// Refuses a request whose body is sent with a content coding (`Content-Encoding: gzip`…): no
/// route decodes one, and reading compressed bytes as JSON only said "not valid JSON" or, for an
/// empty-looking batch, something stranger. A `415` problem with `Accept-Encoding: identity`, as
/// RFC 9110 §15.5.16 asks. (The fast lane leaves such requests to the router.)
public struct ContentEncodingMiddleware<Context: RequestContext>: RouterMiddleware {
    public init() {}

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let coding = request.headers[.contentEncoding], !Self.isIdentity(coding) {
            var problem = Problem(.unsupportedMediaType, status: .unsupportedMediaType, title: "Unsupported content coding",
                                  detail: "The body is sent with Content-Encoding \(coding); this service reads bodies uncompressed only "
                                      + "(identity): send it without Content-Encoding.")
            problem.headers[.acceptEncoding] = "identity"
            throw problem
        }
        return try await next(request, context)
    }

    /// Whether every coding listed is `identity` (in any case), which changes nothing.
    public static func isIdentity(_ value: String) -> Bool {
        value.split(separator: ",").allSatisfy { $0.trimmingSpacesAndTabs.lowercased() == "identity" }
    }
}

extension Substring {
    /// Without the spaces and tabs at either end (HTTP's optional whitespace). By hand:
    /// Foundation's `trimmingCharacters(in:)` went through NSString and cost 3 % of a locate request.
    public var trimmingSpacesAndTabs: Substring {
        var trimmed = self
        while let c = trimmed.first, c == " " || c == "\t" { trimmed.removeFirst() }
        while let c = trimmed.last, c == " " || c == "\t" { trimmed.removeLast() }
        return trimmed
    }
}
