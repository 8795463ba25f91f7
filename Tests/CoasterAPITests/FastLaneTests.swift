import CoasterAPI
import CoasterCore
import CoasterHTTP
@testable import CoasterStore
import CoasterTestSupport
import CoasterService
import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The fast lane (`FastLane`) answers `/health`, `/v1/locate`, `/v1/friends/nearby` and
/// `POST /v1/fixes` on the event loop, before the router: these tests hold it to the router's answers, to HTTP/1.1's
/// order of answers, and to the idle timeout it keeps in Hummingbird's place. `.router` tests
/// never reach it (they call the router directly); a live server does.
@Suite("Fast lane")
struct FastLaneTests {
    /// The same service served twice: by a live server with the fast lane, and called through the
    /// router directly (`.router`), the lane every other route takes.
    @Test func answersAsTheRouterDoes() async throws {
        let clock = TestClock()
        var limits = RateLimits()
        limits.nearby.burst = 1_000
        let s = try await TestService(clock: clock) { $0.limits = limits }
        defer { s.remove() }
        try await s.app().test(.router) { router in
            let ann = try await router.register("ann")
            let bob = try await router.register("bob")
            let carol = try await router.register("carol")
            try await router.befriend(ann, bob)
            try await router.befriend(ann, carol)
            let station = NearbyTests.station
            let bobAt = Geodesy.destination(from: station, azimuth: 0, distance: 37)
            _ = try await router.postFixes([fixJSON(station.lat, station.lon, accuracy: 5, at: clock.now())], as: ann)
            _ = try await router.postFixes([fixJSON(bobAt.lat, bobAt.lon, accuracy: 5, at: clock.now())], as: bob)
            // Carol has no fix: nearby refuses her (422).
            let expired = TestUser(id: ann.id, username: "ann", token: "not-a-session")
            let cases: [(uri: String, user: TestUser?, headers: HTTPFields, fast: Bool)] = [
                ("/health", nil, [:], true),
                ("/v1/locate?lat=\(station.lat)&lon=\(station.lon)", ann, [:], true),
                ("/v1/locate?lat=\(station.lat)&lon=\(station.lon)&accuracy=30", ann, [:], true),
                ("/v1/locate?lat=41.4&lon=-82.9", ann, [:], true),
                ("/v1/locate?lat=100&lon=0", ann, [:], true),
                ("/v1/locate?lat=x&lon=0", ann, [:], true),
                ("/v1/locate?lon=0", ann, [:], true),
                ("/v1/locate?lat=41.48%2E&lon=-82.68", ann, [:], true),
                ("/v1/friends/nearby", ann, [:], true),
                ("/v1/friends/nearby?radius=200", ann, [:], true),
                ("/v1/friends/nearby?radius=0", ann, [:], true),
                ("/v1/friends/nearby", bob, [:], true),
                ("/v1/friends/nearby", carol, [:], true),
                ("/v1/friends/nearby", ann, [.connection: "keep-alive"], true),
                // Left to the router: no token, a token the cache does not vouch for, another
                // route. (`Connection: close`, also the router's, is in the pipelining test: this
                // client sends its own `Connection` header.)
                ("/v1/locate?lat=1&lon=1", nil, [:], false),
                ("/v1/friends/nearby", expired, [:], false),
                ("/v1/parks", ann, [:], false),
                ("/health/", nil, [:], false),
            ]
            try await s.app().test(.live) { live in
                for c in cases {
                    var headers = c.user?.auth ?? [:]
                    headers.append(contentsOf: c.headers)
                    let expected = try await router.execute(uri: c.uri, method: .get, headers: headers)
                    let got = try await live.execute(uri: c.uri, method: .get, headers: headers)
                    #expect(got.status == expected.status, "\(c.uri)")
                    #expect(got.headers[.contentType] == expected.headers[.contentType], "\(c.uri)")
                    #expect(got.headers[.retryAfter] == expected.headers[.retryAfter], "\(c.uri)")
                    #expect(got.headers[.server] == "coasterlife", "\(c.uri)")
                    let date = try #require(got.headers[.date].flatMap(Self.httpDate.date(from:)), "\(c.uri): \(got.headers)")
                    #expect(abs(date.timeIntervalSinceNow) < 60, "\(c.uri): \(got.headers)")
                    let id = try #require(got.headers[.requestID], "\(c.uri)")
                    #expect(Self.masked(got.body, id) == Self.masked(expected.body, expected.headers[.requestID] ?? ""), "\(c.uri)")
                }
            }
            // Each case the fast lane should have answered, it did, and counted it.
            let text = String(buffer: try await router.get("/metrics", as: nil).body)
            for route in ["/health", "/v1/locate", "/v1/friends/nearby"] {
                let answered = cases.filter { $0.fast && $0.uri.split(separator: "?")[0] == route }.count
                #expect(Self.sample(text, "coasterlife_http_fast_lane_requests_total{route=\"\(route)\"}") == answered, "\(route)")
            }
        }
    }

    /// The lane writes its answers' bytes itself: they are the router's, byte for byte, status line
    /// and headers in order included, once the request id and date are masked.
    @Test func writesTheBytesTheRouterWrites() async throws {
        let clock = TestClock()
        let s = try await TestService(clock: clock)
        defer { s.remove() }
        try await Self.withBothLanes(s) { live, lane, router in
            let ann = try await live.register("ann")
            let station = NearbyTests.station
            _ = try await live.postFixes([fixJSON(station.lat, station.lon, accuracy: 5, at: clock.now())], as: ann)
            let requests = ["/health", "/v1/locate?lat=\(station.lat)&lon=\(station.lon)&accuracy=10", "/v1/locate?lat=100&lon=0",
                            "/v1/friends/nearby?radius=500", "/v1/friends/nearby?radius=-1"]
            for target in requests {
                let request = "GET \(target) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(ann.token)\r\n\r\n"
                let fast = try #require(await lane.exchange(request), "\(target)")
                let routed = try #require(await router.exchange(request), "\(target)")
                #expect(Self.maskedResponse(fast) == Self.maskedResponse(routed), "\(target)")
            }
            let text = String(buffer: try await live.get("/metrics", as: nil).body)
            #expect(Self.sample(text, "coasterlife_http_fast_lane_requests_total{route=\"/v1/locate\"}") == 2)
        }
    }

    /// `POST /v1/fixes` in the lane: each answer — accepted, rejected, duplicate and replayed fixes,
    /// transitions, and each problem a body can earn — is the router's, byte for byte. Ann posts
    /// to a server with the lane, Bob the same bodies to one without; their states are alike, so
    /// their answers must be. What the lane wrote is in the store (the duplicate and the replay are
    /// found there) and in the directory.
    @Test func takesFixesAsTheRouterDoes() async throws {
        let clock = TestClock()
        let s = try await TestService(clock: clock)
        defer { s.remove() }
        try await Self.withBothLanes(s) { live, lane, router in
            let ann = try await live.register("ann")
            let bob = try await live.register("bob")
            let station = NearbyTests.station
            let now = clock.now()
            func fix(_ c: Coordinate, _ seconds: TimeInterval, id: String? = nil) -> String {
                let fix = fixJSON(c.lat, c.lon, accuracy: 5, at: now.addingTimeInterval(seconds), id: id)
                let data = try! JSONSerialization.data(withJSONObject: fix, options: .sortedKeys)
                return String(decoding: data, as: UTF8.self)
            }
            let outside = Geodesy.destination(from: station, azimuth: 0, distance: 1_500)
            let bodies = [
                fix(outside, -900),
                fix(station, -240),
                fix(station, -240),
                "[\(fix(station, -120, id: "a")), \(fix(station, -60, id: "c")), \(fix(outside, -180, id: "b"))]",
                "[\(fix(station, -60, id: "c"))]",
                fix(station, -100),
                " \n[\(fix(Coordinate(lat: 100, lon: 0), -30))]",
                "[]",
                "{\"lat\": \"x\", \"lon\": 0, \"recordedAt\": \"2026-11-21T10:00:00Z\"}",
                "{\"lon\": 0, \"recordedAt\": \"2026-11-21T10:00:00Z\"}",
                "{\"lat\": 1, \"lon\": 0, \"recordedAt\": \"yesterday\"}",
                "not json",
                "",
                "[" + Array(repeating: fix(station, -10), count: 101).joined(separator: ",") + "]",
                fix(station, -5, id: String(repeating: "x", count: 65)),
            ]
            for body in bodies {
                let fast = try #require(await lane.exchange(Self.post(body, token: ann.token)), "\(body)")
                let routed = try #require(await router.exchange(Self.post(body, token: bob.token)), "\(body)")
                #expect(Self.maskedResponse(fast) == Self.maskedResponse(routed), "\(body.prefix(200))")
                if body == "[]" { #expect(fast.contains("\"detail\":\"the batch is empty\""), "\(fast)") }
            }
            let replay = try #require(await lane.exchange(Self.post(bodies[4], token: ann.token)))
            #expect(replay.contains("\"replayed\":true"), "\(replay)")
            // A chunked body goes to the router (not counted below).
            let chunked = "POST /v1/fixes HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(ann.token)\r\nTransfer-Encoding: chunked\r\n\r\n"
                + String(bodies[1].utf8.count, radix: 16) + "\r\n" + bodies[1] + "\r\n0\r\n\r\n"
            let routed = try #require(await lane.exchange(chunked))
            #expect(routed.hasPrefix("HTTP/1.1 200 OK\r\n") && routed.contains("\"reason\":\"duplicate\""), "\(routed)")
            let text = String(buffer: try await live.get("/metrics", as: nil).body)
            #expect(Self.sample(text, "coasterlife_http_fast_lane_requests_total{route=\"/v1/fixes\"}") == bodies.count + 1)
            let latest = try #require(s.service.people.person(UserID(ann.id))?.latest)
            // Sent in whole seconds.
            #expect(latest.position == station && abs(latest.recordedAt.timeIntervalSince(now.addingTimeInterval(-60))) < 1)
        }
    }

    /// The fix rate limit is the route's: the lane refuses with the same 429 and `Retry-After`.
    @Test func refusesTooManyFixesAsTheRouterDoes() async throws {
        let clock = TestClock()
        var limits = RateLimits()
        limits.fixes = RateLimit(perSecond: 0.01, burst: 1)
        let s = try await TestService(clock: clock) { $0.limits = limits }
        defer { s.remove() }
        try await Self.withBothLanes(s) { live, lane, router in
            let ann = try await live.register("ann")
            let bob = try await live.register("bob")
            let body = String(decoding: try JSONSerialization.data(withJSONObject: fixJSON(41.4, -82.9, at: clock.now())), as: UTF8.self)
            for _ in 0..<2 {
                let fast = try #require(await lane.exchange(Self.post(body, token: ann.token)))
                let routed = try #require(await router.exchange(Self.post(body, token: bob.token)))
                #expect(Self.maskedResponse(fast) == Self.maskedResponse(routed))
            }
            let refused = try #require(await lane.exchange(Self.post(body, token: ann.token)))
            #expect(refused.hasPrefix("HTTP/1.1 429 Too Many Requests\r\n") && refused.contains("Retry-After: "), "\(refused)")
            let text = String(buffer: try await live.get("/metrics", as: nil).body)
            #expect(Self.sample(text, "coasterlife_http_fast_lane_requests_total{route=\"/v1/fixes\"}") == 3)
        }
    }

    /// A one-fix batch's body: a fix at (41.4, -82.9), outside every park, at the clock's time.
    static func oneFix(at clock: TestClock) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: [fixJSON(41.4, -82.9, at: clock.now())]), as: UTF8.self)
    }

    /// A raw `POST /v1/fixes` carrying `body`.
    static func post(_ body: String, token: String) -> String {
        "POST /v1/fixes HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }

    /// Runs `body` with `s` served twice, by a live server with the fast lane (`live` is its
    /// client) and by one without (`serve --no-fast-lane`), and a raw connection to each.
    static func withBothLanes(
        _ s: TestService, _ body: @escaping @Sendable (any TestClientProtocol, RawConnection, RawConnection) async throws -> Void
    ) async throws {
        var plain = s.configuration
        plain.fastLane = false
        let routerOnly = try buildApplication(plain, service: s.service, logger: Logger(label: "test"))
        try await s.app().test(.live) { live in
            try await routerOnly.test(.live) { other in
                let lane = try RawConnection(port: try #require(live.port)), router = try RawConnection(port: try #require(other.port))
                defer { lane.close(); router.close() }
                try await body(live, lane, router)
            }
        }
    }

    /// A raw response with its request id (header and body) and date masked.
    static func maskedResponse(_ text: String) -> String {
        var out = text
        for line in text.components(separatedBy: "\r\n") {
            if line.hasPrefix("X-Request-Id: ") { out = out.replacingOccurrences(of: line.dropFirst(14), with: "<id>") }
            if line.hasPrefix("Date: ") { out = out.replacingOccurrences(of: line, with: "Date: <date>") }
        }
        return out
    }

    /// The rate limit is the route's: the fast lane refuses with the same 429 and `Retry-After`.
    /// The clock stands still, so both waits are whole seconds however slowly the tests run (on
    /// the wall clock, a second between dan's two queries made his wait 999 s to ann's 1000 s).
    @Test func refusesTooManyNearbyQueriesAsTheRouterDoes() async throws {
        var limits = RateLimits()
        limits.nearby = RateLimit(perSecond: 0.001, burst: 1)
        let s = try await TestService(clock: TestClock()) { $0.limits = limits }
        defer { s.remove() }
        try await s.app().test(.router) { router in
            let ann = try await router.register("ann")
            let dan = try await router.register("dan")
            #expect(try await router.get("/v1/friends/nearby", as: ann).status == .unprocessableContent)
            let expected = try await router.get("/v1/friends/nearby", as: ann)
            try expectProblem(expected, .tooManyRequests, .tooManyRequests)
            try await s.app().test(.live) { live in
                #expect(try await live.get("/v1/friends/nearby", as: dan).status == .unprocessableContent)
                let got = try await live.get("/v1/friends/nearby", as: dan)
                try expectProblem(got, .tooManyRequests, .tooManyRequests)
                #expect(got.headers[.retryAfter] == expected.headers[.retryAfter])
                #expect(Self.masked(got.body, got.headers[.requestID] ?? "") == Self.masked(expected.body, expected.headers[.requestID] ?? ""))
            }
            let text = String(buffer: try await router.get("/metrics", as: nil).body)
            #expect(Self.sample(text, "coasterlife_http_fast_lane_requests_total{route=\"/v1/friends/nearby\"}") == 2)
        }
    }

    /// Requests sent before earlier answers arrive are answered in order: a request the router
    /// takes (`/ready` reads the store) is answered before the `/health` sent after it. The last
    /// asks to close the connection, which the router does.
    @Test func answersPipelinedRequestsInOrder() async throws {
        let s = try await TestService()
        defer { s.remove() }
        try await s.app().test(.live) { live in
            let port = try #require(live.port)
            for _ in 0..<20 {
                let connection = try RawConnection(port: port)
                defer { connection.close() }
                connection.send("GET /ready HTTP/1.1\r\nHost: x\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\n\r\n"
                                + "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                let (text, closed) = await connection.receiveAll()
                #expect(closed, "the connection stayed open after Connection: close")
                let bodies = text.components(separatedBy: "\r\n\r\n").dropFirst().map { $0.prefix(while: { $0 != "}" }) }
                #expect(bodies.map { $0.contains("\"status\":\"ready\"") } == [true, false, false], "\(text)")
                #expect(bodies.map { $0.contains("\"status\":\"ok\"") } == [false, true, true], "\(text)")
            }
        }
    }

    /// While the lane waits for the store to commit a fix batch, the requests behind it wait too,
    /// and are answered in order once it is written: the lane's, the router's, and another batch.
    @Test func holdsPipelinedRequestsBehindAFixBatch() async throws {
        let clock = TestClock()
        var limits = RateLimits()
        limits.fixes.burst = 1_000
        let s = try await TestService(clock: clock) { $0.limits = limits }
        defer { s.remove() }
        try await s.app().test(.live) { live in
            let ann = try await live.register("ann")
            let port = try #require(live.port)
            for round in 0..<20 {
                func body(_ n: Int) -> String {
                    let at = clock.now().addingTimeInterval(Double(round * 2 + n - 100))
                    return String(decoding: try! JSONSerialization.data(withJSONObject: fixJSON(41.4, -82.9, at: at)), as: UTF8.self)
                }
                let connection = try RawConnection(port: port)
                defer { connection.close() }
                connection.send(Self.post(body(0), token: ann.token) + "GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
                                + Self.post(body(1), token: ann.token) + "GET /ready HTTP/1.1\r\nHost: x\r\n\r\n"
                                + "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                let (text, closed) = await connection.receiveAll()
                #expect(closed, "the connection stayed open after Connection: close")
                let bodies = text.components(separatedBy: "\r\n\r\n").dropFirst().map { $0.prefix(while: { $0 != "\r" }) }
                let kinds = bodies.map { b in
                    b.contains("\"accepted\":1") ? "fix" : b.contains("\"status\":\"ready\"") ? "ready" : b.contains("\"status\":\"ok\"") ? "ok" : "?"
                }
                #expect(kinds == ["fix", "ok", "fix", "ready", "ok"], "\(text)")
            }
            let text = String(buffer: try await live.get("/metrics", as: nil).body)
            #expect(Self.sample(text, "coasterlife_http_fast_lane_requests_total{route=\"/v1/fixes\"}") == 40)
        }
    }

    /// A request with a body, an expectation, an upgrade, two `Authorization` fields or a
    /// connection option other than keep-alive goes to the router (which answers it as ever); a
    /// plain one, with any other headers, stays in the lane. `Connection: keep-alive` in any case
    /// and spacing (mobile clients send `Keep-Alive`) is HTTP/1.1's default and stays too. The
    /// lane reads NIO's fields, as the client spelled them: names match in any case. A target in
    /// absolute form goes to the router, which reads its path.
    @Test func leavesRequestsWithBodiesOrOptionsToTheRouter() async throws {
        let s = try await TestService()
        defer { s.remove() }
        try await s.app().test(.live) { live in
            let port = try #require(live.port)
            let connection = try RawConnection(port: port)
            defer { connection.close() }
            let routed = ["Content-Length: 0\r\n", "Transfer-Encoding: chunked\r\n", "Expect: 100-continue\r\nContent-Length: 0\r\n",
                          "Upgrade: h2c\r\n", "Authorization: Bearer a\r\nAuthorization: Bearer b\r\n", "Connection: keep-alive, upgrade\r\n",
                          "content-length: 0\r\n", "TRANSFER-ENCODING: chunked\r\n", "expect: 100-continue\r\nCONTENT-LENGTH: 0\r\n",
                          "UPGRADE: h2c\r\n", "authorization: Bearer a\r\nAUTHORIZATION: Bearer b\r\n", "CONNECTION: upgrade\r\n"]
            let laned = ["Accept: application/json\r\n", "Authorization: Bearer a\r\n", "X-Upgrade: h2c\r\n", "Connection: Keep-Alive\r\n",
                         "Connection:  keep-alive ,KEEP-ALIVE\r\n", "Expects: h2c\r\n", "Upgrades: h2c\r\n", "authorizations: a\r\n"]
            for headers in routed + laned {
                let body = headers.lowercased().hasPrefix("transfer-encoding") ? "0\r\n\r\n" : ""
                let answer = await connection.exchange("GET /health HTTP/1.1\r\nHost: x\r\n\(headers)\r\n\(body)")
                #expect(answer?.hasPrefix("HTTP/1.1 200 OK\r\n") == true, "\(headers.debugDescription): \(answer ?? "nothing")")
            }
            let absolute = await connection.exchange("GET http://x/health HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(absolute?.hasPrefix("HTTP/1.1 200 OK\r\n") == true, "\(absolute ?? "nothing")")
            let text = String(buffer: try await live.get("/metrics", as: nil).body)
            #expect(Self.sample(text, "coasterlife_http_fast_lane_requests_total{route=\"/health\"}") == laned.count)
            #expect(Self.sample(text, "coasterlife_http_requests_total{method=\"GET\",route=\"/health\",status=\"200\"}")
                == routed.count + laned.count + 1)
        }
    }

    /// The idle timeout counts the requests the fast lane answers (Hummingbird's handler does not
    /// see them): a connection busy with them stays open past it, an idle one is closed. The busy
    /// client runs on a thread of its own, on time: a test task, queued behind other suites' work on
    /// Swift's two cooperative threads, was once late by more than the timeout, and its connection
    /// rightly closed as idle.
    @Test func keepsTheIdleTimeoutOverItsOwnAnswers() async throws {
        let s = try await TestService()
        defer { s.remove() }
        var configuration = s.configuration
        configuration.idleTimeout = .seconds(2)
        let app = try buildApplication(configuration, service: s.service, logger: Logger(label: "test"))
        try await app.test(.live) { live in
            let port = try #require(live.port)
            let busy = try RawConnection(port: port)
            defer { busy.close() }
            // 12 requests 250 ms apart: 3 s, past the timeout.
            let answered = await busy.repeatedly("GET /health HTTP/1.1\r\nHost: x\r\n\r\n", until: "{\"status\":\"ok\"}",
                                                 times: 12, every: .milliseconds(250))
            #expect(answered == 12, "closed while busy")
            let idle = try RawConnection(port: port)
            defer { idle.close() }
            // Read before the request: the server's countdown starts when it answers, and this
            // task may get a thread back long after that (read after the answer, a test task
            // late by more than 0.4 s would have failed the check below).
            let start = ContinuousClock.now
            idle.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await idle.receive(until: "{\"status\":\"ok\"}"))
            #expect(await idle.waitForClose(seconds: 6), "an idle connection stayed open")
            #expect(ContinuousClock.now - start >= .seconds(2))
        }
    }

    /// A connection whose fix batch waits for the store longer than the idle timeout is not closed
    /// as idle: the batch is answered when it commits, and the connection stays open. The store's
    /// writer is kept busy for 2.5 s (the timeout is 1 s) by a write queued before the batch.
    ///
    /// Nothing here may sit idle for a second by accident: the account is made through the service
    /// (the test client's connection, opened before its first request, was once closed as idle
    /// while the test task waited for a thread under a full test run), and the three requests go
    /// out one after the other on one thread of the connection's.
    @Test(.enabled(if: TestDatabase.isSQLite)) func keepsAConnectionOpenWhileItsBatchIsCommitted() async throws {
        let clock = TestClock()
        let s = try await TestService(clock: clock)
        defer { s.remove() }
        // As `POST /v1/users` does it: the account, then the person in the directory.
        let ann = try await s.service.accounts.register(username: "ann", password: TestUser.password, displayName: nil)
        try await s.service.people.refresh(ann.id)
        guard case .success(let token, _, _) = try await s.service.sessions.login(username: "ann", password: TestUser.password,
                                                                                   clientAddress: "127.0.0.1")
        else { Issue.record("ann could not log in"); return }
        var configuration = s.configuration
        configuration.idleTimeout = .seconds(1)
        let app = try buildApplication(configuration, service: s.service, logger: Logger(label: "test"))
        try await app.test(.live) { live in
            let port = try #require(live.port)
            let body = String(decoding: try JSONSerialization.data(withJSONObject: fixJSON(41.4, -82.9, at: clock.now())), as: UTF8.self)
            let connection = try RawConnection(port: port)
            defer { connection.close() }
            let start = ContinuousClock.now
            s.sqlite.pool.asyncWriteWithoutTransaction { _ in usleep(2_500_000) }
            let answers = await connection.exchanges([Self.post(body, token: token), "GET /health HTTP/1.1\r\nHost: x\r\n\r\n",
                                                      "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"])
            let answer = answers[0], again = answers[1], metrics = answers[2] ?? ""
            #expect(answer?.hasPrefix("HTTP/1.1 200 OK\r\n") == true, "\(answer ?? "closed")")
            #expect(ContinuousClock.now - start >= .seconds(2))
            #expect(again?.contains("{\"status\":\"ok\"}") == true, "\(again ?? "closed")")
            #expect(Self.sample(metrics, "coasterlife_http_fast_lane_requests_total{route=\"/v1/fixes\"}") == 1)
        }
    }

    /// `serve --no-fast-lane`: every request through the router, the idle timeout Hummingbird's.
    @Test func canBeTurnedOff() async throws {
        let s = try await TestService()
        defer { s.remove() }
        var configuration = s.configuration
        configuration.fastLane = false
        let app = try buildApplication(configuration, service: s.service, logger: Logger(label: "test"))
        try await app.test(.live) { live in
            let ann = try await live.register("ann")
            #expect(try await live.get("/health", as: nil).status == .ok)
            #expect(try await live.get("/v1/locate?lat=41.48&lon=-82.68", as: ann).status == .ok)
            let text = String(buffer: try await live.get("/metrics", as: nil).body)
            #expect(Self.sample(text, "coasterlife_http_requests_total{method=\"GET\",route=\"/v1/locate\",status=\"200\"}") == 1)
            #expect(!text.contains("coasterlife_http_fast_lane_requests_total{"))
        }
    }

    static let httpDate: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter
    }()

    /// A body with its request id replaced, so that two answers' bodies compare.
    static func masked(_ body: ByteBuffer, _ requestID: String) -> String {
        let text = String(buffer: body)
        return requestID.isEmpty ? text : text.replacingOccurrences(of: requestID, with: "<id>")
    }

    /// A sample's value in Prometheus text, 0 if absent.
    static func sample(_ text: String, _ series: String) -> Int {
        for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Int(Double(line.split(separator: " ").last ?? "") ?? -1)
        }
        return 0
    }
}

/// A plain TCP connection to the test server, for what an HTTP client library does not do:
/// send several requests at once, watch the server close. Its waits block a thread of its own, not
/// one of Swift's cooperative threads: the server's router runs its requests on those, and tests
/// waiting on both of a 2-core machine's would starve it.
final class RawConnection: Sendable {
    private let fd: Int32
    /// The server's port, for another connection to the same server.
    let port: Int

    init(port: Int) throws {
        self.port = port
        self.fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard self.fd >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(self.fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { Glibc.close(self.fd); throw POSIXError(.ECONNREFUSED) }
        // Long: a wait ends early on what it waits for (an answer, a close), and only a broken
        // server runs it out. Five seconds ran out under a full test run, the router's answers
        // queued behind other suites' work on the cooperative threads.
        var timeout = timeval(tv_sec: Self.timeout, tv_usec: 0)
        setsockopt(self.fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Seconds a read waits for bytes.
    static let timeout = 30

    func send(_ text: String) {
        var bytes = Array(text.utf8)
        _ = Glibc.send(self.fd, &bytes, bytes.count, 0)
    }

    /// Runs `work` on a new thread. Not on Dispatch's shared pool: it has a worker or two per
    /// core and adds more slowly while they block, so under a full test run `work` could start
    /// seconds late, past the idle timeouts these tests set.
    private func blocking<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: work()) }.start()
        }
    }

    func receiveAll() async -> (text: String, closed: Bool) { await self.blocking { self.receiveAllNow() } }
    /// Sends `request` `times` times, `every` apart, each once the answer before has arrived
    /// (`marker` seen), all on one thread: how many were answered. The first goes out before the
    /// hop to that thread, so that nothing but the interval stands between connecting (or the
    /// caller's last request) and the next request.
    func repeatedly(_ request: String, until marker: String, times: Int, every interval: Duration) async -> Int {
        guard times > 0 else { return 0 }
        self.send(request)
        return await self.blocking {
            for n in 0..<times {
                if n > 0 {
                    usleep(UInt32(interval / .microseconds(1)))
                    self.send(request)
                }
                guard self.receiveNow(until: marker) else { return n }
            }
            return times
        }
    }

    /// Sends each request once the answer before has arrived, all on one thread: their
    /// responses, `nil` from the first the server did not answer on. The first goes out before
    /// the hop to that thread (see ``repeatedly(_:until:times:every:)``).
    func exchanges(_ requests: [String]) async -> [String?] {
        guard let first = requests.first else { return [] }
        self.send(first)
        return await self.blocking {
            var answers: [String?] = []
            for (n, request) in requests.enumerated() {
                if n > 0 { self.send(request) }
                answers.append(answers.last == .some(nil) ? nil : self.receiveResponseNow())
            }
            return answers
        }
    }

    /// Sends a request and reads its response (head and a `Content-Length` body), or `nil`.
    func exchange(_ request: String) async -> String? {
        self.send(request)
        return await self.blocking { self.receiveResponseNow() }
    }
    func receive(until marker: String) async -> Bool { await self.blocking { self.receiveNow(until: marker) } }
    func waitForClose(seconds: Int) async -> Bool { await self.blocking { self.waitForCloseNow(seconds: seconds) } }

    /// Bytes until the server closes (`closed`) or ``timeout`` seconds pass without any, as text.
    private func receiveAllNow() -> (text: String, closed: Bool) {
        var received: [UInt8] = []
        while let chunk = self.read() {
            if chunk.isEmpty { return (String(decoding: received, as: UTF8.self), true) }
            received += chunk
        }
        return (String(decoding: received, as: UTF8.self), false)
    }

    private func receiveResponseNow() -> String? {
        var received: [UInt8] = []
        while true {
            let text = String(decoding: received, as: UTF8.self)
            if let end = text.range(of: "\r\n\r\n") {
                let head = text[..<end.lowerBound]
                let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst(15).trimmingCharacters(in: .whitespaces)) } ?? 0
                if text.utf8.count >= text.utf8.distance(from: text.startIndex, to: end.upperBound) + length { return text }
            }
            guard let chunk = self.read(), !chunk.isEmpty else { return nil }
            received += chunk
        }
    }

    /// Reads until `marker` has arrived: `false` if the server closed first (or ``timeout`` passed).
    private func receiveNow(until marker: String) -> Bool {
        var received: [UInt8] = []
        while !String(decoding: received, as: UTF8.self).contains(marker) {
            guard let chunk = self.read(), !chunk.isEmpty else { return false }
            received += chunk
        }
        return true
    }

    /// Whether the server closes the connection within `seconds`.
    private func waitForCloseNow(seconds: Int) -> Bool {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(self.fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        while let chunk = self.read() {
            if chunk.isEmpty { return true }
        }
        return false
    }

    /// The next bytes; empty when the peer closed, `nil` on a timeout or an error.
    private func read() -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let n = recv(self.fd, &buffer, buffer.count, 0)
        if n < 0 { return errno == ECONNRESET ? [] : nil }
        return Array(buffer.prefix(n))
    }

    func close() { Glibc.close(self.fd) }
}
