import CoasterCore
import CoasterStore
import Foundation
import Prometheus
import Synchronization

/// The service's Prometheus metrics (`GET /metrics`): one registry per service, so tests never
/// share global state; `serve` also points swift-metrics at it.
public final class ServiceMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry

    public static let latencyBuckets: [Duration] = [.microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2),
                                             .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
                                             .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5)]

    private static func name(_ subsystem: String?, _ metric: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "coasterlife", subsystem: subsystem, metricName: metric, unitName: unit, helpText: help)
    }

    public static var requests: MetricNameDescriptor { name("http", "requests", "total", "HTTP requests by method, route template and status.") }
    public static var requestDuration: MetricNameDescriptor { name("http", "request_duration", "seconds", "HTTP request latency by method and route template.") }
    public static var fastLaneRequests: MetricNameDescriptor {
        name("http", "fast_lane_requests", "total",
             "Requests answered on the event loop by the fast lane, by route template; each is also counted in coasterlife_http_requests_total.")
    }
    public static var fixesTotal: MetricNameDescriptor { name(nil, "fixes", "total", "GPS fixes by result, rejection reason and source.") }
    public static var transitionsTotal: MetricNameDescriptor { name(nil, "transitions", "total", "Enter/exit transitions by event and fence kind.") }
    public static var storeWrites: MetricNameDescriptor { name("store", "write_duration", "seconds", "Time of store write transactions by operation.") }
    public static var fixCommits: MetricNameDescriptor {
        name("store", "fix_commits", "total", "Transactions that wrote fix batches; several requests' batches share one (group commit).")
    }
    public static var fixCommitBatches: MetricNameDescriptor {
        name("store", "fix_commit_batches", "total", "Fix batches written by those transactions; batches / commits is the mean group size.")
    }
    public static var fenceParks: MetricNameDescriptor { name("fence", "parks", "count", "Parks in the in-memory fence index.") }
    public static var fenceZones: MetricNameDescriptor { name("fence", "zones", "count", "Zones in the in-memory fence index.") }
    public static var fenceVertices: MetricNameDescriptor { name("fence", "vertices", "count", "Vertices in the in-memory fence index.") }
    public static var people: MetricNameDescriptor { name(nil, "people", "count", "Users in the live directory.") }
    public static var liveConnections: MetricNameDescriptor { name("live", "connections", "count", "Open /v1/live WebSocket connections.") }
    public static var residentMemory: MetricNameDescriptor {
        name("process", "resident_memory", "bytes", "Resident set size of the server process (Linux: /proc/self/statm).")
    }
    public static var sqliteMemory: MetricNameDescriptor {
        name("store", "sqlite_memory", "bytes", "Heap SQLite holds in this process: page caches of every connection, statements.")
    }

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
    }

    private static let knownMethods: Set<String> = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

    /// A series: its metric (our metric names are unique without their namespace) and label values
    /// (each metric always has the same label names).
    private struct SeriesKey: Hashable {
        var metric: String
        var values: [String]

        init(_ descriptor: MetricNameDescriptor, _ labels: [(String, String)]) {
            self.metric = descriptor.metricName
            self.values = labels.map(\.1)
        }
    }

    /// Every series, made by the registry once: it builds names and label lists on each lookup,
    /// which cost more than a small dictionary of what it handed out before (requests, fixes and
    /// store writes count on every request).
    private let counters = Mutex<[SeriesKey: Counter]>([:])
    private let histograms = Mutex<[SeriesKey: DurationHistogram]>([:])

    private func counter(_ descriptor: MetricNameDescriptor, _ labels: [(String, String)] = []) -> Counter {
        let key = SeriesKey(descriptor, labels)
        return self.counters.withLock { cache in
            if let found = cache[key] { return found }
            let made = self.registry.makeCounter(descriptor: descriptor, labels: labels)
            cache[key] = made
            return made
        }
    }

    private func latency(_ descriptor: MetricNameDescriptor, _ labels: [(String, String)]) -> DurationHistogram {
        let key = SeriesKey(descriptor, labels)
        return self.histograms.withLock { cache in
            if let found = cache[key] { return found }
            let made = self.registry.makeDurationHistogram(descriptor: descriptor, labels: labels, buckets: Self.latencyBuckets)
            cache[key] = made
            return made
        }
    }

    /// A request's count and latency series, by what tells them apart.
    private struct RequestKey: Hashable {
        var method: String
        var route: String
        var status: Int
    }

    /// Both series of each kind of request, found with one lookup: going through ``counter(_:_:)``
    /// and ``latency(_:_:)`` built four arrays and took two locks per request.
    private let requestSeries = Mutex<[RequestKey: (count: Counter, latency: DurationHistogram)]>([:])

    /// One request: its count by method, route template and status, and its latency.
    public func request(method: String, route: String, status: Int, duration: Duration) {
        // Clients may send any method name; the series stay bounded by the routes.
        let series = self.series(RequestKey(method: Self.knownMethods.contains(method) ? method : "other", route: route, status: status))
        series.count.increment()
        series.latency.record(duration)
    }

    private func series(_ key: RequestKey) -> (count: Counter, latency: DurationHistogram) {
        self.requestSeries.withLock { cache in
            if let found = cache[key] { return found }
            let made = (count: self.counter(Self.requests, [("method", key.method), ("route", key.route), ("status", String(key.status))]),
                        latency: self.latency(Self.requestDuration, [("method", key.method), ("route", key.route)]))
            cache[key] = made
            return made
        }
    }

    /// A request NIO's decoder could not read, answered with a problem (400 or 431): counted as
    /// method `other` (it has none that could be read) and route `malformed`, without a latency
    /// (the request has no start that was read either).
    public func malformedRequest(status: Int) {
        self.counter(Self.requests, [("method", "other"), ("route", "malformed"), ("status", String(status))]).increment()
    }

    /// A request the fast lane answered (besides ``request(method:route:status:duration:)``).
    public func fastLaneAnswered(route: String) {
        self.counter(Self.fastLaneRequests, [("route", route)]).increment()
    }

    /// The series a fast-lane route's `200 OK` answers are counted in: its requests by method,
    /// route and status, its latency, its fast-lane count. Found once, when the lane is built.
    public struct LaneSeries: Sendable {
        fileprivate let count: Counter
        fileprivate let latency: DurationHistogram
        fileprivate let lane: Counter
    }

    public func laneSeries(method: String, route: String) -> LaneSeries {
        let series = self.series(RequestKey(method: method, route: route, status: 200))
        return LaneSeries(count: series.count, latency: series.latency, lane: self.counter(Self.fastLaneRequests, [("route", route)]))
    }

    /// A `200 OK` the fast lane answered: what ``request(method:route:status:duration:)`` and
    /// ``fastLaneAnswered(route:)`` count, without looking its series up by their labels (two
    /// locks and a dictionary lookup each, a label array built for one: ~0.5 µs of a lane request
    /// in `perf`).
    public func laneAnswered(_ series: LaneSeries, duration: Duration) {
        series.count.increment()
        series.latency.record(duration)
        series.lane.increment()
    }

    /// A fix batch: accepted and rejected by reason, transitions by event, and the write's time.
    public func fixes(_ batch: FixBatch, source: String, writeDuration: Duration) {
        for result in batch.results {
            switch result.decision {
            case .accepted(_, let transitions):
                self.counter(Self.fixesTotal, [("result", "accepted"), ("reason", ""), ("source", source)]).increment()
                for t in transitions {
                    self.counter(Self.transitionsTotal, [("event", t.event.rawValue), ("kind", t.zoneKind?.rawValue ?? "park")]).increment()
                }
            case .rejected(let reason):
                self.counter(Self.fixesTotal, [("result", "rejected"), ("reason", reason.rawValue), ("source", source)]).increment()
            }
        }
        self.storeWrite("fixes", writeDuration)
    }

    public func storeWrite(_ operation: String, _ duration: Duration) {
        self.latency(Self.storeWrites, [("operation", operation)]).record(duration)
    }

    /// Totals already added to the fix commit counters.
    private let fixCommitsSeen = Mutex((transactions: 0, batches: 0))

    /// Sizes and totals read when `/metrics` is scraped.
    public func gauges(index: FenceIndex, people: Int, liveConnections: Int, fixCommits: (transactions: Int, batches: Int)) {
        // Concurrent scrapes may arrive with their totals out of order: only ever add what is new.
        let (transactions, batches) = self.fixCommitsSeen.withLock { seen in
            defer { seen = (max(seen.transactions, fixCommits.transactions), max(seen.batches, fixCommits.batches)) }
            return (max(0, fixCommits.transactions - seen.transactions), max(0, fixCommits.batches - seen.batches))
        }
        self.counter(Self.fixCommits).increment(by: Int64(transactions))
        self.counter(Self.fixCommitBatches).increment(by: Int64(batches))
        self.registry.makeGauge(descriptor: Self.fenceParks).set(Double(index.parkCount))
        self.registry.makeGauge(descriptor: Self.fenceZones).set(Double(index.zoneCount))
        self.registry.makeGauge(descriptor: Self.fenceVertices).set(Double(index.vertexCount))
        self.registry.makeGauge(descriptor: Self.people).set(Double(people))
        self.registry.makeGauge(descriptor: Self.liveConnections).set(Double(liveConnections))
        self.registry.makeGauge(descriptor: Self.sqliteMemory).set(Double(SpatiaLiteStore.sqliteMemoryUsed))
        if let rss = Self.residentBytes() { self.registry.makeGauge(descriptor: Self.residentMemory).set(Double(rss)) }
    }

    /// The process's resident set size: `/proc/self/statm`'s second field, in pages. `nil` where
    /// there is no such file.
    public static func residentBytes() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// The text exposition format.
    public func render() -> [UInt8] {
        var buffer: [UInt8] = []
        self.registry.emit(into: &buffer)
        return buffer
    }
}
