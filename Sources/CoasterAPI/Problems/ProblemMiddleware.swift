import CoasterCore
import CoasterHTTP
import CoasterService
import CoasterStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOHTTP1

/// Turns every error a route throws into an RFC 9457 problem. The one place that maps errors to
/// HTTP: routes throw ``Problem``s or domain errors, never hand-built error bodies.
///
/// A 500 says nothing about internals; the error is logged with the request id, which the client
/// gets in the problem and in the `X-Request-Id` header of every response.
public struct ProblemMiddleware<Context: RequestContext>: RouterMiddleware {
    public init() {}

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            let problem = Self.problem(for: error, request: request, context: context)
            response = try problem.response(from: request, context: context)
        }
        response.headers[.requestID] = context.id
        return response
    }

    static func problem(for error: any Error, request: Request, context: Context) -> Problem {
        switch error {
        case let problem as Problem:
            return problem
        case let limited as RateLimited:
            return Problem(limited)
        case let unavailable as StoreUnavailable:
            context.logger.warning("store unavailable", metadata: ["error": "\(unavailable)"])
            return Problem(unavailable)
        case let error as DecodingError:
            return Self.problem(decoding: error)
        case let error as ChallengeError:
            return Problem(error)
        case let refusal as ChallengeBodyRefusal:
            return Problem(refusal)
        case let error as ListError:
            return Problem(error)
        case let refusal as ListBodyRefusal:
            return Problem(refusal)
        case let error as PeopleError:
            return Problem(error)
        case let refusal as ProfileBodyRefusal:
            return Problem(refusal)
        case let error as PostError:
            return Problem(error)
        case let refusal as PostBodyRefusal:
            return Problem(refusal)
        case let refusal as CatalogFiles.Refusal:
            return Problem(refusal)
        case let rejection as ImportRejection:
            if rejection.issues.count == 1, let issue = rejection.issues.first, issue.feature == nil, issue.pointer.isEmpty {
                return Problem(.malformedBody, status: .badRequest, title: "Malformed request body", detail: issue.reason)
            }
            return .invalidParkFile(rejection)
        case let violation as AccountRuleViolation:
            return .invalidField("/\(violation.field)", violation.description)
        case AccountError.usernameTaken(let name):
            return Problem(.usernameTaken, status: .conflict, title: "Username taken", detail: "The username \"\(name)\" is taken.",
                           errors: [Problem.BodyError(pointer: "/username", feature: nil, detail: "taken")])
        case AccountError.noSuchUser, FriendshipError.noSuchUser:
            return Problem(.noSuchUser, status: .notFound, title: "No such user", detail: "There is no such user.")
        case FriendshipError.cannotBefriendSelf:
            return Problem(.cannotBefriendSelf, status: .unprocessableContent, title: "Cannot befriend yourself",
                           detail: "A friend request must name another user.")
        case FriendshipError.noPendingRequest:
            return Problem(.noPendingRequest, status: .notFound, title: "No pending request",
                           detail: "There is no pending friend request between you and that user in that direction.")
        case FriendshipError.notFriends:
            return Problem(.notFriends, status: .notFound, title: "Not friends", detail: "You are not friends with that user.")
        case PostedWaitError.unknownRides(let rows):
            return Problem(.invalidPostedWaits, status: .unprocessableContent, title: "Invalid posted waits",
                           detail: "Nothing was written: \(rows.count) row(s) name rides that are not listed in this park.",
                           errors: rows.map { Problem.BodyError(pointer: "/\($0.0)/ride", feature: $0.0, detail: "no listed ride \"\($0.1)\" in this park") })
        case PhotoError.noSuchPhoto:
            return Problem(.noSuchPhoto, status: .notFound, title: "No such photo", detail: "There is no photo with that id that you may see.")
        case PhotoError.tagNotVisited(let what):
            return Problem(.photoTagNotVisited, status: .unprocessableContent, title: "Photo tag refused",
                           detail: "You can tag a photo only with a park you have visited, or a ride of one; not \"\(what)\".")
        case RideError.noSuchRide:
            return Problem(.noSuchRide, status: .notFound, title: "No such ride", detail: "There is no listed ride with that id.")
        case FriendshipError.notBlocked:
            return Problem(.notBlocked, status: .notFound, title: "Not blocked", detail: "You have not blocked that user.")
        case FriendshipError.tooManyFriends(let yours):
            return Problem(.friendLimit, status: .conflict, title: "Too many friends",
                           detail: yours ? "You have \(FriendRules.maximumFriends) friends, the most anyone can have; remove one first."
                                         : "That user has \(FriendRules.maximumFriends) friends, the most anyone can have.")
        case FriendshipError.tooManyPendingRequests:
            return Problem(.friendLimit, status: .conflict, title: "Too many pending requests",
                           detail: "You have \(FriendRules.maximumPendingRequests) friend requests waiting on others; cancel some first.")
        case let error as HTTPError:
            switch error.status {
            case .notFound:
                return .notFound("No route matches \(request.method) \(request.uri.path).")
            case .methodNotAllowed:
                return .methodNotAllowed(request.method, path: request.uri.path, allowed: nil)
            case .contentTooLarge:
                return Problem(.payloadTooLarge, status: .contentTooLarge, title: "Request body too large",
                               detail: "The request body is larger than this route accepts (docs: OperationsAndSecurity, Limits).")
            case .badRequest:
                return Problem(.malformedBody, status: .badRequest, title: "Malformed request",
                               detail: error.body ?? "The request could not be read.")
            default:
                var problem = Problem(.internalError, status: error.status, title: error.status.reasonPhrase,
                                      detail: error.body ?? error.status.reasonPhrase)
                problem.headers = error.headers
                return problem
            }
        case let error as HTTPParserError:
            // The body of a request the router was reading did not parse (a bad chunk size):
            // the decoder can read nothing more of the connection, which closes.
            return .malformedRequest(error)
        case let error as any HTTPResponseError where error.status == .contentTooLarge:
            return Problem(.payloadTooLarge, status: .contentTooLarge, title: "Request body too large",
                           detail: "The request body is larger than this route accepts (docs: OperationsAndSecurity, Limits).")
        default:
            context.logger.error("request failed", metadata: ["error": "\(String(reflecting: error))"])
            return .internalError()
        }
    }

    /// A JSON body that did not decode: say where (a JSON pointer) and what was expected.
    static func problem(decoding error: DecodingError) -> Problem {
        func pointer(_ path: [any CodingKey]) -> String {
            path.reduce(JSONPointer()) { p, key in
                key.intValue.map { p.appending($0) } ?? p.appending(key.stringValue)
            }.description
        }
        let (where_, detail): (String, String)
        switch error {
        case .keyNotFound(let key, let context):
            (where_, detail) = (pointer(context.codingPath + [key]), "required member \"\(key.stringValue)\" is missing")
        case .typeMismatch(let type, let context):
            (where_, detail) = (pointer(context.codingPath), "expected \(Self.describe(type))")
        case .valueNotFound(let type, let context):
            (where_, detail) = (pointer(context.codingPath), "expected \(Self.describe(type)), found null")
        case .dataCorrupted(let context):
            let reason = (context.underlyingError as NSError?)?.userInfo[NSDebugDescriptionErrorKey] as? String
            (where_, detail) = (pointer(context.codingPath), reason ?? context.debugDescription)
        @unknown default:
            (where_, detail) = ("", "the body could not be decoded")
        }
        return Problem(.malformedBody, status: .badRequest, title: "Malformed request body",
                       detail: where_.isEmpty ? detail : "\(where_): \(detail)",
                       errors: [Problem.BodyError(pointer: where_, feature: nil, detail: detail)])
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Double.Type, is Float.Type: "a number"
        case is Int.Type, is Int64.Type: "an integer"
        case is Bool.Type: "a boolean"
        default: "a value of type \(type)"
        }
    }
}
