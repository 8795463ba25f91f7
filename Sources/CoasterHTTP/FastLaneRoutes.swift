import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1

/// The routes a ``FastLane`` answers on the event loop, and how: a service's hot requests, each
/// answered by the same code as its route in the router, or left to the router (`nil`) whenever
/// that code would need to wait.
///
/// The lane is generic over its routes, not handed an existential: each request's calls into them
/// are direct once the lane is specialised for them.
public protocol FastLaneRoutes {
    /// A request whose body the lane reads before the routes answer it (a batch to record).
    associatedtype BodyRequest: FastLaneBodyRequest
    /// Where a `200 OK` answer is counted: series the routes found once, when they were built.
    associatedtype Series
    associatedtype Metrics: HTTPMetricsRecording

    var metrics: Metrics { get }
    var logger: Logger { get }

    /// The answer to `head`, a request without a body, or `nil` to leave it to the router.
    func answer(_ head: HTTPRequestHead) -> FastLaneAnswer<Series>?

    /// `head` as a request the lane reads the body of and the routes answer once it is read, or
    /// `nil` to leave it to the router.
    func bodyRequest(_ head: HTTPRequestHead, start: ContinuousClock.Instant) -> BodyRequest?

    /// Answers `request`, whose body has been read: calls `answer` on `loop`, now or later (once
    /// what it asked for is done).
    func answer(_ request: BodyRequest, on loop: any EventLoop, _ answer: @escaping (FastLaneAnswer<Series>) -> Void)

    /// Counts a `200 OK` answered in `duration`, in the series its answer named.
    func count(_ series: Series, duration: Duration)
}

/// A request the lane reads the body of (``FastLaneRoutes/bodyRequest(_:start:)``).
public protocol FastLaneBodyRequest {
    /// When its head was read.
    var start: ContinuousClock.Instant { get }
    /// Its body so far.
    var body: ByteBuffer { get set }
}

/// A whole response the lane writes itself: the status, the headers (a content type, a problem's
/// own), the body, and what it is counted and logged by.
public struct FastLaneAnswer<Series> {
    public var status: HTTPResponse.Status
    public var headers: HTTPFields
    public var body: ByteBuffer
    /// The route template the router's metrics count it under.
    public var route: String
    /// The request's id, as Hummingbird makes them (also in a problem's body).
    public var requestID: String
    /// Where it is counted, if it is a `200 OK` (else by its route and status).
    public var series: Series?

    public init(status: HTTPResponse.Status, headers: HTTPFields, body: ByteBuffer, route: String, requestID: String, series: Series? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.route = route
        self.requestID = requestID
        self.series = series
    }

    /// `problem` as an answer, its `instance` the request's path if it has one; a bare 500 if it
    /// cannot be encoded.
    public init(_ problem: Problem, instance: String?, route: String, requestID: String) {
        guard let data = try? problem.body(path: instance, requestID: requestID) else {
            self.init(status: .internalServerError, headers: [:], body: ByteBuffer(), route: route, requestID: requestID)
            return
        }
        self.init(status: problem.status, headers: problem.responseHeaders, body: ByteBuffer(bytes: data), route: route,
                  requestID: requestID)
    }
}

/// An answer written before any route could be (a connection's first request, refused).
typealias BareAnswer = FastLaneAnswer<Never>

/// What the HTTP handlers count: requests by method, route and status, and those the fast lane or
/// a guard answered itself.
public protocol HTTPMetricsRecording: Sendable {
    /// One request: its count by method, route template and status, and its latency.
    func recordRequest(method: String, route: String, status: Int, duration: Duration)
    /// A request the decoder could not read, answered with a problem (400 or 431).
    func recordMalformedRequest(status: Int)
    /// A request the fast lane answered (besides ``recordRequest(method:route:status:duration:)``).
    func recordFastLaneAnswer(route: String)
}

extension FastLaneAnswer: Sendable where Series: Sendable {}
