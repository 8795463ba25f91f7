import CoasterCore
import CoasterHTTP
import CoasterService
import CoasterStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// The routes the fast lane answers on the event loop, and how: each runs the same code as its
/// route in the router (``ParksController/locate(_:in:)``,
/// ``NearbyController/friendsNearby(of:query:)``, ``PlacesController/places(of:in:query:)``,
/// ``FixRecorder``), with the router's
/// authentication and metrics, and says `nil` — the router's, untouched — for whatever would need
/// to wait: a token the session cache cannot vouch for, a caller the directory does not hold yet.
///
/// These are the requests clients send most. The reads touch no database: the directory and the
/// fence index are in memory. Fixes are written by the store's group commit, which calls back
/// when they are committed; the answer is written then. Through the router each request costs two
/// hops between the event loop and the task running the handler, and the async machinery around
/// them, several times the work of a read's answer (tools/bench/README.md).
struct FastRoutes: FastLaneRoutes, Sendable {
    let sessions: Sessions
    let fences: FencePlaces
    let nearby: NearbyController
    let places: PlacesController
    let people: People
    let fixes: FixRecorder
    let fixRates: RequestRates
    let metrics: ServiceMetrics
    let logger: Logger
    /// `GET /health`'s body, encoded as the router encodes it.
    let health: ByteBuffer
    /// Where each route's `200 OK` answers are counted.
    let healthSeries, locateSeries, nearbySeries, placesSeries, fixesSeries: ServiceMetrics.LaneSeries
    /// The places route's template, as the router's metrics name it.
    static let placesRoute = "/v1/parks/{parkId}/places"

    init(_ service: Service, logger: Logger) throws {
        self.sessions = service.sessions
        self.fences = FencePlaces(service.fences)
        self.nearby = NearbyController(people: service.people, fences: self.fences, policy: service.location, rates: service.limiters.nearby,
                                       now: service.now)
        self.places = PlacesController(people: service.people, places: PlacesInForce(service.fences), policy: service.location, now: service.now)
        self.people = service.people
        self.fixes = service.fixRecorder
        self.fixRates = service.limiters.fixes
        self.metrics = service.metrics
        self.logger = logger
        self.health = ByteBuffer(bytes: try AppRequestContext.encoder.encode(HealthController.alive))
        self.healthSeries = service.metrics.laneSeries(method: "GET", route: "/health")
        self.locateSeries = service.metrics.laneSeries(method: "GET", route: "/v1/locate")
        self.nearbySeries = service.metrics.laneSeries(method: "GET", route: "/v1/friends/nearby")
        self.placesSeries = service.metrics.laneSeries(method: "GET", route: Self.placesRoute)
        self.fixesSeries = service.metrics.laneSeries(method: "POST", route: "/v1/fixes")
    }

    /// A fast-lane answer: the status, the problem's headers if it is one, the body.
    typealias Answer = FastLaneAnswer<ServiceMetrics.LaneSeries>

    /// The answer to `head`, or `nil` to leave the request to the router.
    func answer(_ head: HTTPRequestHead) -> Answer? {
        guard head.method == .GET, let target = Self.originForm(head.uri), let headers = Self.read(head.headers), headers.contentLength == nil
        else { return nil }
        let uri = RequestTarget(target)
        switch uri.path {
        case "/health":
            return Answer(status: .ok, headers: Self.json, body: self.health, route: "/health", requestID: RequestID().description,
                          series: self.healthSeries)
        case "/v1/locate":
            // A parameter given twice is the router's to refuse, here and below.
            guard self.caller(headers.authorization) != nil, !uri.queryParameters.mayRepeatAName else { return nil }
            return self.run("/v1/locate", self.locateSeries) {
                try ParksController.locate(uri.queryParameters, in: self.fences.indexAndPlaces).jsonBuffer
            }
        case "/v1/friends/nearby":
            guard let me = self.caller(headers.authorization), !uri.queryParameters.mayRepeatAName else { return nil }
            return self.run("/v1/friends/nearby", self.nearbySeries) {
                try self.nearby.friendsNearby(of: me.id, query: uri.queryParameters)?.jsonBuffer
            }
        default:
            guard let park = Self.placesPark(uri.path), let me = self.caller(headers.authorization), !uri.queryParameters.mayRepeatAName
            else { return nil }
            return self.run(Self.placesRoute, self.placesSeries, instance: String(uri.path)) {
                try self.places.places(of: me.id, in: park, query: uri.queryParameters)?.jsonBuffer
            }
        }
    }

    /// The park of a `/v1/parks/{parkId}/places` path, if `path` is one with a well-formed id
    /// (the router answers any other, a 404 for a malformed id included).
    static func placesPark(_ path: Substring) -> ParkID? {
        let prefix = "/v1/parks/", suffix = "/places"
        guard path.utf8.count > prefix.utf8.count + suffix.utf8.count, path.hasPrefix(prefix), path.hasSuffix(suffix) else { return nil }
        let id = path.dropFirst(prefix.count).dropLast(suffix.count)
        guard Slug.isValid(String(id)) else { return nil }
        return ParkID(rawValue: String(id))
    }

    /// A `POST /v1/fixes` the lane takes: its caller, and its body as it is read.
    struct FixRequest: FastLaneBodyRequest {
        let caller: UserID
        let start: ContinuousClock.Instant
        let requestID = RequestID().description
        var body: ByteBuffer
    }

    /// `head` as a `POST /v1/fixes` the lane takes, or `nil` to leave it to the router: a body of
    /// a stated length within the route's limit (chunked bodies, and what the route refuses as too
    /// large, go to the router), a caller the session cache vouches for and the directory holds.
    func bodyRequest(_ head: HTTPRequestHead, start: ContinuousClock.Instant) -> FixRequest? {
        guard head.method == .POST, head.uri == "/v1/fixes", let headers = Self.read(head.headers),
              let length = headers.contentLength, length <= FixBatchBody.bodyLimit,
              let me = self.caller(headers.authorization), self.people.holds(me.id)
        else { return nil }
        return FixRequest(caller: me.id, start: start, body: ByteBuffer())
    }

    /// Records the fixes of `request`, whose body has been read, and calls `answer` with the
    /// answer, on `loop`: right away for a request refused before the store (the rate limit, the
    /// body), else once the store has committed the fixes.
    func answer(_ request: FixRequest, on loop: any EventLoop, _ answer: @escaping (Answer) -> Void) {
        let route = "/v1/fixes"
        let fixes: [IncomingFix]
        do {
            try self.fixRates.take(request.caller, what: "fix")
            fixes = try FixBatchBody.fixes(in: request.body, policy: self.fixes.policy)
        } catch {
            answer(self.answer(route, self.fixesSeries, requestID: request.requestID, .failure(error)))
            return
        }
        let reply = NIOLoopBound(answer, eventLoop: loop)
        self.fixes.record(fixes, for: request.caller, source: .api) { result in
            loop.execute {
                let json = result.map { FixesResponse(fixes: fixes, results: $0.results).jsonBuffer }
                reply.value(self.answer(route, self.fixesSeries, requestID: request.requestID, json))
            }
        }
    }

    /// Counts a `200 OK` in the series found for its route when the lane was built.
    func count(_ series: ServiceMetrics.LaneSeries, duration: Duration) {
        self.metrics.laneAnswered(series, duration: duration)
    }

    /// The request's caller, if its bearer token is one the session cache vouches for.
    private func caller(_ authorization: String?) -> Identity? {
        guard let header = authorization, let token = BearerAuthentication.token(header) else { return nil }
        return self.sessions.cachedIdentity(token: token)
    }

    /// Runs a route's code: its JSON, or the problem it throws written as ``ProblemMiddleware``
    /// writes it; `nil` if the route's code leaves the request to the router.
    private func run(_ route: String, _ series: ServiceMetrics.LaneSeries, instance: String? = nil, _ body: () throws -> ByteBuffer?) -> Answer? {
        let requestID = RequestID().description
        let json: Result<ByteBuffer, any Error>
        do {
            guard let answer = try body() else { return nil }
            json = .success(answer)
        } catch {
            json = .failure(error)
        }
        return self.answer(route, series, requestID: requestID, instance: instance, json)
    }

    /// The answer carrying `json` (counted in `series`), or the problem ``ProblemMiddleware``
    /// makes of the error, whose `instance` is the request's path (`instance`; the route's own
    /// when it has no parameters).
    private func answer(_ route: String, _ series: ServiceMetrics.LaneSeries, requestID: String, instance: String? = nil,
                        _ json: Result<ByteBuffer, any Error>) -> Answer {
        let problem: Problem
        switch json {
        case .success(let body):
            return Answer(status: .ok, headers: Self.json, body: body, route: route, requestID: requestID, series: series)
        case .failure(let thrown as Problem):
            problem = thrown
        case .failure(let limited as RateLimited):
            problem = Problem(limited)
        case .failure(let unavailable as StoreUnavailable):
            self.logger.warning("store unavailable", metadata: ["hb.request.id": "\(requestID)", "error": "\(unavailable)"])
            problem = Problem(unavailable)
        case .failure(let thrown as DecodingError):
            problem = ProblemMiddleware<AppRequestContext>.problem(decoding: thrown)
        case .failure(let error):
            self.logger.error("request failed", metadata: ["hb.request.id": "\(requestID)", "error": "\(String(reflecting: error))"])
            problem = .internalError()
        }
        // The path is the route's, or the one given for a route with parameters (a problem's `instance`).
        return Answer(problem, instance: instance ?? route, route: route, requestID: requestID)
    }

    private static let json: HTTPFields = [.contentType: "application/json; charset=utf-8"]

    /// What the fast lane reads of a request's headers.
    private struct Headers {
        var authorization: String?
        /// `Content-Length`, if the request has one (a single field, a number).
        var contentLength: Int?
    }

    /// The target as the router's request would carry it, if it is in origin form (`/path?query`):
    /// the conversion to `HTTPTypes` keeps such a target as it is. An absolute URL (which the
    /// conversion rewrites to its path) or `*` is left to the router.
    private static func originForm(_ target: String) -> String? {
        target.utf8.first == UInt8(ascii: "/") ? target : nil
    }

    /// The request's `Authorization` and `Content-Length` values, read in the same pass that
    /// makes sure it carries nothing the fast lane leaves to the router (`nil` if it does): a
    /// chunked body, an expectation, an upgrade, a content coding, a content type other than JSON
    /// (the router refuses it), a connection option other than `keep-alive`
    /// (which many clients send, and HTTP/1.1 means anyway), two `Authorization` or
    /// `Content-Length` fields. One pass: looking each name up walked the fields six times and
    /// joined repeated values into new strings.
    ///
    /// Names are matched as HTTP matches them, in any case; a field whose name is not a token,
    /// which the conversion to `HTTPTypes` would drop, is passed over here too (NIO's parser
    /// refuses such requests before they get here).
    private static func read(_ fields: HTTPHeaders) -> Headers? {
        var authorization: String?
        var contentLength: Int?
        for (name, value) in fields {
            switch Self.field(name) {
            case .authorization:
                guard authorization == nil else { return nil }
                authorization = value
            case .contentLength:
                guard contentLength == nil, let length = Int(value), length >= 0 else { return nil }
                contentLength = length
            case .refused:
                return nil
            case .connection:
                guard Self.keepAliveOnly(value) else { return nil }
            case .contentType:
                // A body said to be something other than JSON: the router's 415.
                guard MediaType.isJSON(value) else { return nil }
            case nil:
                continue
            }
        }
        return Headers(authorization: authorization, contentLength: contentLength)
    }

    /// The fields ``read(_:)`` looks at.
    private enum Field {
        case authorization, contentLength, connection, contentType
        /// `Transfer-Encoding`, `Expect`, `Upgrade`, `Content-Encoding`: the request is the router's.
        case refused
    }

    /// Which of ``Field`` a field's name is, in any case; `nil` for every other name. By length
    /// first: most fields a client sends are none of these.
    private static func field(_ name: String) -> Field? {
        var name = name
        return name.withUTF8 { bytes -> Field? in
            func named(_ lowercase: StaticString) -> Bool {
                lowercase.withUTF8Buffer { expected in
                    // ASCII letters differ from their capitals by 0x20 alone; `-` is kept as is.
                    zip(bytes, expected).allSatisfy { $0 == $1 || ($1 >= UInt8(ascii: "a") && $1 <= UInt8(ascii: "z") && $0 == $1 - 0x20) }
                }
            }
            switch bytes.count {
            case 13: return named("authorization") ? .authorization : nil
            case 14: return named("content-length") ? .contentLength : nil
            case 10: return named("connection") ? .connection : nil
            case 12: return named("content-type") ? .contentType : nil
            case 17: return named("transfer-encoding") ? .refused : nil
            case 6: return named("expect") ? .refused : nil
            case 7: return named("upgrade") ? .refused : nil
            case 16: return named("content-encoding") ? .refused : nil
            default: return nil
            }
        }
    }

    /// Whether a `Connection` value lists `keep-alive` alone, in any case and spacing.
    private static func keepAliveOnly(_ value: String) -> Bool {
        value.split(separator: ",").allSatisfy { $0.trimmingSpacesAndTabs.lowercased() == "keep-alive" }
    }
}
