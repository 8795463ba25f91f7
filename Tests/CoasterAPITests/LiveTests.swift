import CoasterAPI
import CoasterCore
import CoasterService
import CoasterStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import HummingbirdWSTesting
import HummingbirdWebSocket
import NIOWebSocket
import Synchronization
import WSClient
import Testing

/// Every test here waits on a WebSocket or a stream; the limit is the backstop that turns a wait
/// that never ends into a failure (the waits below have their own, shorter deadlines).
@Suite("Live updates", .timeLimit(.minutes(5)))
struct LiveTests {
    /// How long a test waits for a message it expects. The server sends heartbeats (every 200 ms
    /// in these tests), so a loop that skips them still gets to look at the clock.
    static let patience: Duration = .seconds(30)

    /// A friend walks into Cedar Point; the other friend's WebSocket shows the enter and the position.
    /// A ghost friend's fixes never reach it.
    @Test func aWebSocketClientSeesAFriendEnterThePark() async throws {
        var location = LocationPolicy()
        location.liveHeartbeat = .milliseconds(200)
        let s = try await TestService(location: location)
        defer { s.remove() }
        try await s.app().test(.live) { client in
            let ann = try await client.register("ann")
            let bob = try await client.register("bob")
            let ghost = try await client.register("casper")
            try await client.befriend(ann, bob)
            try await client.befriend(ann, ghost)
            _ = try await client.send(.patch, "/v1/me", as: ghost, json: ["sharing": ["ghost": ["mode": "on"]]])
            let received = Mutex<[String]>([])
            let headers: HTTPFields = [.authorization: "Bearer \(ann.token)"]
            try await client.ws("/v1/live", configuration: .init(additionalHeaders: headers)) { inbound, outbound, _ in
                var messages = inbound.messages(maxSize: 1 << 16).makeAsyncIterator()
                guard case .text(let hello)? = try await messages.next() else { Issue.record("no hello"); return }
                #expect(hello.contains("\"hello\""))
                // The ghost walks in first, then Bob.
                _ = try await client.postFixes(FixTests.walkIn(endingAt: Date()).map { var f = $0; f["id"] = nil; return f }, as: ghost)
                _ = try await client.postFixes(FixTests.walkIn(endingAt: Date()), as: bob)
                let deadline = ContinuousClock.now + Self.patience
                while ContinuousClock.now < deadline, let message = try await messages.next() {
                    guard case .text(let text) = message,
                          let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else { continue }
                    if object["type"] as? String == "heartbeat" { continue }
                    received.withLock { $0.append(text) }
                    if object["type"] as? String == "location" { break }
                }
                try await outbound.close(.normalClosure, reason: nil)
            }
            let messages = try received.withLock { $0 }.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
            let users = Set(messages.compactMap { ($0["user"] as? [String: Any])?["username"] as? String })
            #expect(users == ["bob"], "only bob's messages: \(messages)")
            #expect(messages.contains { $0["type"] as? String == "transition" && $0["event"] as? String == "enter"
                && ($0["park"] as? [String: Any])?["id"] as? String == "cedar-point" })
            let last = try #require(messages.last)
            #expect(last["type"] as? String == "location")
            #expect(last["precision"] as? String == "exact")
        }
    }

    /// The first message that is neither hello nor heartbeat, as JSON; nil (and an issue) if none
    /// comes within ``patience``.
    static func nextEvent<I: AsyncIteratorProtocol>(_ messages: inout I, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: Any]?
    where I.Element == WebSocketMessage {
        let deadline = ContinuousClock.now + Self.patience
        while ContinuousClock.now < deadline, let message = try await messages.next() {
            guard case .text(let text) = message,
                  let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else { continue }
            if ["hello", "heartbeat"].contains(object["type"] as? String) { continue }
            return object
        }
        Issue.record("no event within \(Self.patience), or the connection closed", sourceLocation: sourceLocation)
        return nil
    }

    /// A wait report is pushed to the live connections of the park's visitors, and to no one else.
    @Test func aWaitReportReachesTheParksConnectedVisitorsOnly() async throws {
        var location = LocationPolicy()
        location.liveHeartbeat = .milliseconds(200)
        // The queuers' fixes are stamped by this clock, and the service judges their freshness by it.
        let clock = TestClock()
        let s = try await TestService(location: location, clock: clock)
        defer { s.remove() }
        try await s.app().test(.live) { client in
            let ann = try await WaitAPITests.queuer("ann", client, at: clock, offset: 10)
            let carl = try await WaitAPITests.queuer("carl", client, at: clock, offset: 20)
            let dora = try await client.register("dora")
            try await client.ws("/v1/live", configuration: .init(additionalHeaders: [.authorization: "Bearer \(carl.token)"])) { carlIn, carlOut, _ in
                try await client.ws("/v1/live", configuration: .init(additionalHeaders: [.authorization: "Bearer \(dora.token)"])) { doraIn, doraOut, _ in
                    var carlMessages = carlIn.messages(maxSize: 1 << 16).makeAsyncIterator()
                    var doraMessages = doraIn.messages(maxSize: 1 << 16).makeAsyncIterator()
                    // Both connected before the report (each has its hello).
                    guard case .text? = try await carlMessages.next(), case .text? = try await doraMessages.next() else {
                        Issue.record("no hello")
                        return
                    }
                    let report = try await client.send(.post, "/v1/rides/cedar-point.millennium-force/waits", as: ann, json: ["minutes": 35])
                    // A refused report is pushed to no one: waiting for the push would be waiting for nothing.
                    try #require(report.status == .created, "\(String(buffer: report.body))")
                    let pushed = try await Self.nextEvent(&carlMessages)
                    #expect(pushed?["type"] as? String == "wait")
                    #expect((pushed?["ride"] as? [String: Any])?["id"] as? String == "cedar-point.millennium-force")
                    // Dora is not in the park: the first thing she gets is what is sent after the report.
                    s.service.live.sendForTesting(#"{"type":"sentinel"}"#, to: UserID(dora.id))
                    #expect(try await Self.nextEvent(&doraMessages)?["type"] as? String == "sentinel")
                    try await doraOut.close(.normalClosure, reason: nil)
                }
                try await carlOut.close(.normalClosure, reason: nil)
            }
        }
    }

    @Test func theUpgradeNeedsAToken() async throws {
        let s = try await TestService()
        defer { s.remove() }
        _ = try await s.app().test(.live) { client in
            await #expect(throws: (any Error).self) {
                try await client.ws("/v1/live") { _, _, _ in Issue.record("upgraded without a token") }
            }
        }
    }

    /// An upgrade refused for its token is answered as any route answers it, a 401 problem
    /// saying why (hummingbird-websocket's own answer was a bare 400, which an app whose session
    /// had expired could not tell from a bad handshake); an upgrade with a valid token still
    /// upgrades. With the fast lane and without.
    @Test func aRefusedUpgradeIsA401Problem() async throws {
        let s = try await TestService()
        defer { s.remove() }
        try await FastLaneTests.withBothLanes(s) { live, lane, router in
            let ann = try await live.register("ann")
            func handshake(_ authorization: String?) -> String {
                "GET /v1/live HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n" + (authorization.map { "Authorization: \($0)\r\n" } ?? "") + "\r\n"
            }
            for connection in [lane, router] {
                connection.send(handshake(nil))
                let (text, closed) = await connection.receiveAll()
                #expect(closed, "\(text)")
                #expect(text.hasPrefix("HTTP/1.1 401 Unauthorized\r\n"), "\(text)")
                #expect(text.contains("Content-Type: application/problem+json\r\n"), "\(text)")
                #expect(text.contains("WWW-Authenticate: Bearer"), "\(text)")
                #expect(text.contains("\"type\":\"/problems/unauthorized\""), "\(text)")
                #expect(text.components(separatedBy: "HTTP/1.1 ").count == 2, "one answer only: \(text)")
            }
            for port in [try #require(live.port)] {
                let expired = try RawConnection(port: port), valid = try RawConnection(port: port)
                defer { expired.close(); valid.close() }
                expired.send(handshake("Bearer not-a-token"))
                let (text, _) = await expired.receiveAll()
                #expect(text.hasPrefix("HTTP/1.1 401 Unauthorized\r\n"), "\(text)")
                #expect(text.contains("log in again"), "\(text)")
                valid.send(handshake("Bearer \(ann.token)"))
                #expect(await valid.receive(until: "HTTP/1.1 101 Switching Protocols\r\n"))
            }
        }
    }

    /// A handshake NIO's upgrader refuses is answered as RFC 6455 §4.2.2 asks, not by closing the
    /// connection with no answer at all: a version other than 13 gets a 426
    /// naming the version spoken, a key that is not 16 bytes of base64 a 400; a route that is not
    /// a WebSocket gets a problem saying so, not hummingbird-websocket's bare 400. Each closes the
    /// connection and is counted. With the fast lane and without.
    @Test func aBadHandshakeIsAnsweredWithAProblem() async throws {
        let s = try await TestService()
        defer { s.remove() }
        try await FastLaneTests.withBothLanes(s) { live, lane, router in
            let ann = try await live.register("ann")
            func handshake(_ path: String, version: String?, key: String?) -> String {
                "GET \(path) HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nAuthorization: Bearer \(ann.token)\r\n"
                    + (version.map { "Sec-WebSocket-Version: \($0)\r\n" } ?? "") + (key.map { "Sec-WebSocket-Key: \($0)\r\n" } ?? "") + "\r\n"
            }
            let key = "dGhlIHNhbXBsZSBub25jZQ=="
            let cases: [(request: String, status: String, says: [String])] = [
                (handshake("/v1/live", version: "8", key: key), "426 Upgrade Required",
                 ["Sec-WebSocket-Version: 13\r\n", "\"type\":\"/problems/upgrade-required\"", "asked for '8'", "\"instance\":\"/v1/live\""]),
                (handshake("/v1/live", version: nil, key: key), "426 Upgrade Required", ["asked for none"]),
                (handshake("/v1/live?x=1", version: "13", key: nil), "400 Bad Request",
                 ["\"type\":\"/problems/malformed-request\"", "the request has none", "\"instance\":\"/v1/live\""]),
                (handshake("/v1/live", version: "13", key: "c2hvcnQ="), "400 Bad Request", ["the request has 'c2hvcnQ='"]),
                (handshake("/health", version: "13", key: key), "400 Bad Request",
                 ["\"type\":\"/problems/not-websocket\"", "GET /health does not upgrade", "X-Request-Id: "]),
            ]
            for connection in [lane, router] {
                for (request, status, says) in cases {
                    let socket = try RawConnection(port: connection.port)
                    defer { socket.close() }
                    socket.send(request)
                    let (text, closed) = await socket.receiveAll()
                    #expect(closed, "\(text)")
                    #expect(text.hasPrefix("HTTP/1.1 \(status)\r\n"), "\(text)")
                    #expect(text.contains("Content-Type: application/problem+json\r\n"), "\(text)")
                    for said in says { #expect(text.contains(said), "\(said) in \(text)") }
                    #expect(text.components(separatedBy: "HTTP/1.1 ").count == 2, "one answer only: \(text)")
                }
            }
            // Both servers count into the one service's metrics: two 426s and two 400s each.
            let metrics = String(buffer: try await live.get("/metrics", as: nil).body)
            for status in [426, 400] {
                #expect(metrics.contains("coasterlife_http_requests_total{method=\"other\",route=\"malformed\",status=\"\(status)\"} 4"), "\(metrics)")
            }
            // A good handshake still upgrades.
            let valid = try RawConnection(port: try #require(live.port))
            defer { valid.close() }
            valid.send(handshake("/v1/live", version: "13", key: key))
            #expect(await valid.receive(until: "HTTP/1.1 101 Switching Protocols\r\n"))
            // The route's requests are counted by what the client was sent: the upgrade a 101,
            // the handshake to a route that does not upgrade a 400 (the route's own 200 is not sent).
            let after = String(buffer: try await live.get("/metrics", as: nil).body)
            #expect(after.contains("coasterlife_http_requests_total{method=\"GET\",route=\"/v1/live\",status=\"101\"} 1"), "\(after)")
            #expect(after.contains("coasterlife_http_requests_total{method=\"GET\",route=\"/health\",status=\"400\"} 2"), "\(after)")
            let healthOK = after.split(separator: "\n").first { $0.hasPrefix("coasterlife_http_requests_total{method=\"GET\",route=\"/health\",status=\"200\"}") }
            #expect(healthOK.map { $0.hasSuffix("} 0") } ?? true, "\(after)")
        }
    }

    /// A client that stops reading is dropped once its buffer is full; publishing never waits.
    @Test func aSlowConsumerIsDroppedNotWaitedFor() async throws {
        let s = try await TestService()
        defer { s.remove() }
        let live = s.service.live
        let (_, stream) = live.subscribeForTesting(UserID(1))
        #expect(live.connectionCount == 1)
        // Never waiting is shown by what follows, not by a time (the host can stall any thread):
        // the sends return with the consumer not reading, it is dropped, and it got only its buffer.
        for i in 0..<(Live.bufferLimit * 4) { live.sendForTesting("message \(i)", to: UserID(1)) }
        #expect(live.connectionCount == 0)
        var delivered = 0
        for await _ in stream { delivered += 1 }
        #expect(delivered == Live.bufferLimit)
    }
}
