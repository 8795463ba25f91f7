import Foundation
import HTTPTypes
import Hummingbird

/// The stable kinds of problem this service answers with. Each is the `type` of an RFC 9457
/// problem, as a relative URI `/problems/<slug>`; the OperationsAndSecurity article (docs: "Errors") lists them.
public enum ProblemType: String, Sendable, CaseIterable {
    case notFound = "not-found"
    case methodNotAllowed = "method-not-allowed"
    case invalidParameter = "invalid-parameter"
    case malformedBody = "malformed-body"
    case malformedRequest = "malformed-request"
    case invalidParkFile = "invalid-park-file"
    case payloadTooLarge = "payload-too-large"
    case unsupportedMediaType = "unsupported-media-type"
    case notReady = "not-ready"
    case internalError = "internal-error"
    case unauthorized = "unauthorized"
    case forbidden = "forbidden"
    case invalidField = "invalid-field"
    case usernameTaken = "username-taken"
    case invalidCredentials = "invalid-credentials"
    case tooManyRequests = "too-many-requests"
    case noSuchUser = "no-such-user"
    case cannotBefriendSelf = "cannot-befriend-self"
    case noPendingRequest = "no-pending-request"
    case notFriends = "not-friends"
    case notBlocked = "not-blocked"
    case friendLimit = "friend-limit"
    case noSuchRide = "no-such-ride"
    case checkinRefused = "checkin-refused"
    case rideRefused = "ride-refused"
    case rideCooldown = "ride-cooldown"
    case nearbyRefused = "nearby-refused"
    case upgradeRequired = "upgrade-required"
    case notWebSocket = "not-websocket"
    case reportRefused = "report-refused"
    case invalidPostedWaits = "invalid-posted-waits"
    case invalidPhoto = "invalid-photo"
    case noSuchPhoto = "no-such-photo"
    case photoTagNotVisited = "photo-tag-not-visited"

    public var uri: String { "/problems/\(self.rawValue)" }
}

/// An RFC 9457 problem: every error this service returns is one (`application/problem+json`).
public struct Problem: Error, HTTPResponseError, Sendable {
    /// A query or path parameter that was wrong (RFC 9457's `invalid-params`).
    public struct InvalidParameter: Codable, Hashable, Sendable {
        public var name: String
        public var reason: String
    }

    /// A place in a request body that was wrong: a JSON pointer, and for GeoJSON the feature index.
    public struct BodyError: Codable, Hashable, Sendable {
        public var pointer: String
        public var feature: Int?
        public var detail: String
    }

    public var type: ProblemType
    public var title: String
    public var status: HTTPResponse.Status
    public var detail: String
    public var invalidParams: [InvalidParameter] = []
    public var errors: [BodyError] = []
    /// A stable reason code (e.g. `not_in_park`) for problems that have several causes.
    public var reason: String?
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

    /// 401, with the `WWW-Authenticate` challenge RFC 6750 asks for.
    public static func unauthorized(_ detail: String? = nil) -> Problem {
        var problem = Problem(.unauthorized, status: .unauthorized, title: "Authentication required",
                              detail: detail ?? "Log in with POST /v1/sessions and send Authorization: Bearer <token>.")
        problem.headers[.wwwAuthenticate] = "Bearer realm=\"coasterlife\""
        return problem
    }

    /// 400 for one member of a JSON body that decoded but breaks a rule.
    public static func invalidField(_ pointer: String, _ detail: String) -> Problem {
        Problem(.invalidField, status: .badRequest, title: "Invalid field", detail: pointer.isEmpty ? detail : "\(pointer): \(detail)",
                errors: [BodyError(pointer: pointer, feature: nil, detail: detail)])
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

        enum CodingKeys: String, CodingKey {
            case type, title, status, detail, instance, requestId, reason
            case invalidParams = "invalid-params"
            case errors
        }
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        Response(status: self.status, headers: self.responseHeaders,
                 body: .init(byteBuffer: ByteBuffer(bytes: try self.body(path: request.uri.path, requestID: context.id))))
    }

    /// The problem's own headers and its content type.
    var responseHeaders: HTTPFields {
        var headers = self.headers
        headers[.contentType] = "application/problem+json"
        return headers
    }

    /// The JSON body for a request to `path` (its `instance`; none for a request that could not
    /// be read) with this request id.
    func body(path: String?, requestID: String) throws -> Data {
        let body = Body(
            type: self.type.uri, title: self.title, status: Int(self.status.code), detail: self.detail,
            instance: path, requestId: requestID,
            invalidParams: self.invalidParams.isEmpty ? nil : self.invalidParams,
            errors: self.errors.isEmpty ? nil : self.errors, reason: self.reason)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(body)
    }
}
