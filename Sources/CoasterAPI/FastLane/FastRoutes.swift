import CoasterCore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore

/// The routes the fast lane answers on the event loop, and how: each runs the same code as its
/// route in the router (``ParksController/locate(_:index:)``,
/// ``NearbyController/friendsNearby(of:query:)``), with the router's authentication and metrics,
/// and says `nil` — the router's, untouched — for whatever would need to wait: a token the
/// session cache cannot vouch for, a caller the directory does not hold yet.
///
/// These are the requests clients send most and the ones that touch no database: the directory
/// and the fence index are in memory. Through the router each costs two hops between the event
/// loop and the task running the handler, and the async machinery around them, several times
/// the work of the answer itself (tools/bench/README.md).
struct FastRoutes: Sendable {
    let sessions: Sessions
    let fences: Fences
    let nearby: NearbyController
    let metrics: ServiceMetrics
    let logger: Logger
    /// `GET /health`'s body, encoded as the router encodes it.
    let health: ByteBuffer

    init(_ service: Service, logger: Logger) throws {
        self.sessions = service.sessions
        self.fences = service.fences
        self.nearby = NearbyController(people: service.people, fences: service.fences, policy: service.location, rates: service.nearbyRates,
                                       now: service.now)
        self.metrics = service.metrics
        self.logger = logger
        self.health = ByteBuffer(bytes: try AppRequestContext.encoder.encode(HealthController.alive))
    }

    /// A fast-lane answer: the status, the problem's headers if it is one, the body.
    struct Answer {
        var status: HTTPResponse.Status
        var headers: HTTPFields
        var body: ByteBuffer
        /// The route template the router's metrics count it under.
        var route: String
        /// The request's id, as Hummingbird makes them (also in a problem's body).
        var requestID: String
    }

    /// The answer to `head`, or `nil` to leave the request to the router.
    func answer(_ head: HTTPRequest) -> Answer? {
        guard head.method == .get, let target = head.path, let headers = Self.read(head.headerFields) else { return nil }
        let uri = URI(target)
        switch uri.path {
        case "/health":
            return Answer(status: .ok, headers: Self.json, body: self.health, route: "/health", requestID: RequestID().description)
        case "/v1/locate":
            guard self.caller(headers.authorization) != nil else { return nil }
            return self.run("/v1/locate", path: uri.path) {
                try ParksController.locate(uri.queryParameters, index: self.fences.index).jsonBuffer
            }
        case "/v1/friends/nearby":
            guard let me = self.caller(headers.authorization) else { return nil }
            return self.run("/v1/friends/nearby", path: uri.path) {
                try self.nearby.friendsNearby(of: me.id, query: uri.queryParameters)?.jsonBuffer
            }
        default:
            return nil
        }
    }

    /// The request's caller, if its bearer token is one the session cache vouches for.
    private func caller(_ authorization: String?) -> Identity? {
        guard let header = authorization, let token = BearerAuthentication.token(header) else { return nil }
        return self.sessions.cachedIdentity(token: token)
    }

    /// Runs a route's code: its JSON, or the problem it throws written as ``ProblemMiddleware``
    /// writes it; `nil` if the route's code leaves the request to the router.
    private func run(_ route: String, path: String, _ body: () throws -> ByteBuffer?) -> Answer? {
        let requestID = RequestID().description
        do {
            guard let json = try body() else { return nil }
            return Answer(status: .ok, headers: Self.json, body: json, route: route, requestID: requestID)
        } catch {
            let problem: Problem
            if let thrown = error as? Problem {
                problem = thrown
            } else {
                self.logger.error("request failed", metadata: ["hb.request.id": "\(requestID)", "error": "\(error)"])
                problem = .internalError()
            }
            guard let data = try? problem.body(path: path, requestID: requestID) else { return nil }
            return Answer(status: problem.status, headers: problem.responseHeaders, body: ByteBuffer(bytes: data), route: route,
                          requestID: requestID)
        }
    }

    private static let json: HTTPFields = [.contentType: "application/json; charset=utf-8"]

    /// What the fast lane reads of a request's headers.
    private struct Headers {
        var authorization: String?
    }

    /// The request's `Authorization` value, read in the same pass that makes sure it carries
    /// nothing the fast lane leaves to the router (`nil` if it does): a body, an expectation, an
    /// upgrade, a connection option other than `keep-alive` (which many clients send, and HTTP/1.1
    /// means anyway), two `Authorization` fields. One pass: looking each name up walked the fields
    /// six times and joined repeated values into new strings.
    private static func read(_ fields: HTTPFields) -> Headers? {
        var authorization: String?
        for field in fields {
            switch field.name {
            case .authorization:
                guard authorization == nil else { return nil }
                authorization = field.value
            case .contentLength, .transferEncoding, .expect, .upgrade:
                return nil
            case .connection:
                guard Self.keepAliveOnly(field.value) else { return nil }
            default:
                continue
            }
        }
        return Headers(authorization: authorization)
    }

    /// Whether a `Connection` value lists `keep-alive` alone, in any case and spacing.
    private static func keepAliveOnly(_ value: String) -> Bool {
        value.split(separator: ",").allSatisfy { $0.trimmingSpacesAndTabs.lowercased() == "keep-alive" }
    }
}
