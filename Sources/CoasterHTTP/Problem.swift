import Foundation
import HTTPTypes
import Hummingbird

/// A stable kind of problem: the `type` of an RFC 9457 problem, as a relative URI
/// `/problems/<slug>`. The kinds any HTTP service has are here; a service adds its own
/// (`extension ProblemType { static let … }`), and lists them all where its docs are checked.
public struct ProblemType: RawRepresentable, Hashable, Sendable {
    /// The slug: `not-found` of `/problems/not-found`.
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public var uri: String { "/problems/\(self.rawValue)" }

    public static let notFound = Self(rawValue: "not-found")
    public static let methodNotAllowed = Self(rawValue: "method-not-allowed")
    public static let invalidParameter = Self(rawValue: "invalid-parameter")
    public static let malformedBody = Self(rawValue: "malformed-body")
    public static let malformedRequest = Self(rawValue: "malformed-request")
    public static let payloadTooLarge = Self(rawValue: "payload-too-large")
    public static let unsupportedMediaType = Self(rawValue: "unsupported-media-type")
    public static let notReady = Self(rawValue: "not-ready")
    public static let internalError = Self(rawValue: "internal-error")
    public static let unauthorized = Self(rawValue: "unauthorized")
    public static let forbidden = Self(rawValue: "forbidden")
    public static let tooManyRequests = Self(rawValue: "too-many-requests")
    public static let upgradeRequired = Self(rawValue: "upgrade-required")
    public static let notWebSocket = Self(rawValue: "not-websocket")

    /// The kinds above, for a service's list of all of its own.
    public static let generic: [Self] = [
        .notFound, .methodNotAllowed, .invalidParameter, .malformedBody, .malformedRequest, .payloadTooLarge, .unsupportedMediaType,
        .notReady, .internalError, .unauthorized, .forbidden, .tooManyRequests, .upgradeRequired, .notWebSocket,
    ]
}

/// An RFC 9457 problem (`application/problem+json`): an error that answers as one.
public struct Problem: Error, HTTPResponseError, Sendable {
    /// A query or path parameter that was wrong (RFC 9457's `invalid-params`).
    public struct InvalidParameter: Codable, Hashable, Sendable {
        public var name: String
        public var reason: String

        public init(name: String, reason: String) {
            self.name = name
            self.reason = reason
        }
    }

    /// A place in a request body that was wrong: a JSON pointer, and for GeoJSON the feature index.
    public struct BodyError: Codable, Hashable, Sendable {
        public var pointer: String
        public var feature: Int?
        public var detail: String

        public init(pointer: String, feature: Int?, detail: String) {
            self.pointer = pointer
            self.feature = feature
            self.detail = detail
        }
    }

    public var type: ProblemType
    public var title: String
    public var status: HTTPResponse.Status
    public var detail: String
    public var invalidParams: [InvalidParameter] = []
    public var errors: [BodyError] = []
    /// A stable reason code (e.g. `not_in_park`) for problems that have several causes.
    public var reason: String?
    /// RFC 9457 extension members that are numbers a client acts on (`"limit": 1000`, the id of
    /// the row a request collided with), written beside the standard ones. A name that is a
    /// standard member's is not written.
    public var numbers: [String: Int64] = [:]
    public var headers: HTTPFields = [:]

    public init(
        _ type: ProblemType, status: HTTPResponse.Status, title: String, detail: String,
        invalidParams: [InvalidParameter] = [], errors: [BodyError] = []
    ) {
        self.type = type
        self.status = status
        self.title = title
        self.detail = detail
        self.invalidParams = invalidParams
        self.errors = errors
    }

    public static func notFound(_ detail: String) -> Problem {
        Problem(.notFound, status: .notFound, title: "Not found", detail: detail)
    }

    public static func invalidParameter(_ name: String, _ reason: String) -> Problem {
        Problem(.invalidParameter, status: .badRequest, title: "Invalid parameter", detail: "Query parameter \(name): \(reason).",
                invalidParams: [InvalidParameter(name: name, reason: reason)])
    }

    /// 400 for a path parameter (`{name}` of the route) that cannot be what it names.
    public static func invalidPathParameter(_ name: String, _ reason: String) -> Problem {
        Problem(.invalidParameter, status: .badRequest, title: "Invalid parameter", detail: "Path parameter \(name): \(reason).",
                invalidParams: [InvalidParameter(name: name, reason: reason)])
    }

    /// 429 with `Retry-After` in whole seconds.
    public static func tooManyRequests(_ detail: String, retryAfter: Double) -> Problem {
        var problem = Problem(.tooManyRequests, status: .tooManyRequests, title: "Too many requests", detail: detail)
        problem.headers[.retryAfter] = String(Int(retryAfter.rounded(.up)))
        return problem
    }

    public static func internalError() -> Problem {
        Problem(.internalError, status: .internalServerError, title: "Internal error",
                detail: "The server could not complete the request. Quote the request id when reporting it.")
    }

    private struct Body: Encodable {
        var type: String
        var title: String
        var status: Int
        var detail: String
        var instance: String?
        var requestId: String
        var invalidParams: [InvalidParameter]?
        var errors: [BodyError]?
        var reason: String?
        var numbers: [String: Int64]

        enum CodingKeys: String, CodingKey {
            case type, title, status, detail, instance, requestId, reason
            case invalidParams = "invalid-params"
            case errors
        }

        struct NumberKey: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(self.type, forKey: .type)
            try c.encode(self.title, forKey: .title)
            try c.encode(self.status, forKey: .status)
            try c.encode(self.detail, forKey: .detail)
            try c.encodeIfPresent(self.instance, forKey: .instance)
            try c.encode(self.requestId, forKey: .requestId)
            try c.encodeIfPresent(self.invalidParams, forKey: .invalidParams)
            try c.encodeIfPresent(self.errors, forKey: .errors)
            try c.encodeIfPresent(self.reason, forKey: .reason)
            let standard = Set(["type", "title", "status", "detail", "instance", "requestId", "reason", "invalid-params", "errors"])
            var extra = encoder.container(keyedBy: NumberKey.self)
            for (name, value) in self.numbers where !standard.contains(name) { try extra.encode(value, forKey: NumberKey(stringValue: name)) }
        }
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        Response(status: self.status, headers: self.responseHeaders,
                 body: .init(byteBuffer: ByteBuffer(bytes: try self.body(path: request.uri.path, requestID: context.id))))
    }

    /// The problem's own headers and its content type.
    public var responseHeaders: HTTPFields {
        var headers = self.headers
        headers[.contentType] = "application/problem+json"
        return headers
    }

    /// The JSON body for a request to `path` (its `instance`; none for a request that could not
    /// be read) with this request id.
    public func body(path: String?, requestID: String) throws -> Data {
        let body = Body(
            type: self.type.uri, title: self.title, status: Int(self.status.code), detail: self.detail,
            instance: path, requestId: requestID,
            invalidParams: self.invalidParams.isEmpty ? nil : self.invalidParams,
            errors: self.errors.isEmpty ? nil : self.errors, reason: self.reason, numbers: self.numbers)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(body)
    }
}

extension HTTPField.Name {
    /// The id of the request, for matching a client's report with the server's log.
    public static let requestID = HTTPField.Name("X-Request-Id")!
}
