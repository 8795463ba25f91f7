@testable import CoasterAPI
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
import WSClient
import Testing

/// Ride-status pushes to a park's visitors, and the park and zone a friend's `location` push names.
@Suite("Live status and places", .timeLimit(.minutes(5)))
struct LiveStatusTests {
    static let ride = "cedar-point.millennium-force"

    /// A service whose live connections send a heartbeat every 200 ms (``LiveTests/nextEvent(_:sourceLocation:)``
    /// looks at its clock between them), on a clock the test moves.
    static func service(_ clock: TestClock) async throws -> TestService {
        var location = LocationPolicy()
        location.liveHeartbeat = .milliseconds(200)
        return try await TestService(location: location, clock: clock)
    }

    /// Asserts that `user` has nothing waiting: a sentinel sent now is the next thing they get.
    static func expectNothingMore<I: AsyncIteratorProtocol>(_ messages: inout I, of user: TestUser, on s: TestService,
                                                            sourceLocation: SourceLocation = #_sourceLocation) async throws
    where I.Element == WebSocketMessage {
        s.service.live.sendForTesting(#"{"type":"sentinel"}"#, to: UserID(user.id))
        let next = try await LiveTests.nextEvent(&messages, sourceLocation: sourceLocation)
        #expect(next?["type"] as? String == "sentinel", "expected nothing more, got \(next ?? [:])", sourceLocation: sourceLocation)
    }

    /// Skips the hello.
    static func hello<I: AsyncIteratorProtocol>(_ messages: inout I) async throws where I.Element == WebSocketMessage {
        guard case .text(let text)? = try await messages.next(), text.contains("\"hello\"") else {
            Issue.record("no hello")
            return
        }
    }

    static func expectStatus(_ message: [String: Any]?, _ status: String, previous: String, source: String,
                             sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(message?["type"] as? String == "status", "\(message ?? [:])", sourceLocation: sourceLocation)
        #expect((message?["ride"] as? [String: Any])?["id"] as? String == Self.ride, sourceLocation: sourceLocation)
        #expect((message?["ride"] as? [String: Any])?["name"] as? String == "Millennium Force", sourceLocation: sourceLocation)
        #expect(message?["status"] as? String == status, sourceLocation: sourceLocation)
        #expect(message?["previous"] as? String == previous, sourceLocation: sourceLocation)
        #expect(message?["source"] as? String == source, sourceLocation: sourceLocation)
    }

    /// The crowd's reports move Millennium Force from unknown to operating (a wait was reported) to
    /// down (a status report); each change reaches the park's connected visitor once, a report
    /// that changes nothing sends nothing, and a user who is not visiting hears of none of it.
    @Test func aCrowdDownVerdictReachesTheParksVisitorsOnce() async throws {
        let clock = TestClock()
        let s = try await Self.service(clock)
        defer { s.remove() }
        try await s.app().test(.live) { client in
            let ann = try await WaitAPITests.queuer("ann", client, at: clock, offset: 10)
            let bob = try await WaitAPITests.queuer("bob", client, at: clock, offset: 15)
            let carl = try await WaitAPITests.queuer("carl", client, at: clock, offset: 20)
            let dora = try await client.register("dora")
            try await client.ws("/v1/live", configuration: .init(additionalHeaders: carl.auth)) { carlIn, carlOut, _ in
                try await client.ws("/v1/live", configuration: .init(additionalHeaders: dora.auth)) { doraIn, doraOut, _ in
                    var carlMessages = carlIn.messages(maxSize: 1 << 16).makeAsyncIterator()
                    var doraMessages = doraIn.messages(maxSize: 1 << 16).makeAsyncIterator()
                    try await Self.hello(&carlMessages)
                    try await Self.hello(&doraMessages)

                    let wait = try await client.send(.post, "/v1/rides/\(Self.ride)/waits", as: ann, json: ["minutes": 35])
                    try #require(wait.status == .created, "\(String(buffer: wait.body))")
                    #expect(try await LiveTests.nextEvent(&carlMessages)?["type"] as? String == "wait")
                    Self.expectStatus(try await LiveTests.nextEvent(&carlMessages), "operating", previous: "unknown", source: "crowd")

                    clock.advance(30)
                    let down = try await client.send(.post, "/v1/rides/\(Self.ride)/status", as: ann, json: ["status": "down"])
                    try #require(down.status == .created, "\(String(buffer: down.body))")
                    #expect(try json(down.body)["condition"] as? String == "down")
                    let pushed = try await LiveTests.nextEvent(&carlMessages)
                    Self.expectStatus(pushed, "down", previous: "operating", source: "crowd")
                    #expect(pushed?["at"] as? String == clock.now().formatted(.iso8601))
                    // One message for one change.
                    try await Self.expectNothingMore(&carlMessages, of: carl, on: s)

                    // Bob says the same: the verdict stands, so nothing is pushed.
                    clock.advance(30)
                    let same = try await client.send(.post, "/v1/rides/\(Self.ride)/status", as: bob, json: ["status": "down"])
                    try #require(same.status == .created, "\(String(buffer: same.body))")
                    try await Self.expectNothingMore(&carlMessages, of: carl, on: s)
                    // Dora is visiting no park: none of it reached her.
                    try await Self.expectNothingMore(&doraMessages, of: dora, on: s)

                    // The board says what was pushed.
                    let row = try await WaitAPITests.board(client, as: carl)
                    #expect(row["status"] as? String == "down")
                    #expect(row["statusSource"] as? String == "crowd")
                    try await doraOut.close(.normalClosure, reason: nil)
                }
                try await carlOut.close(.normalClosure, reason: nil)
            }
        }
    }

    static func loadPosted(_ csv: String, as admin: TestUser, _ client: some TestClientProtocol) async throws {
        var headers = admin.auth
        headers[.contentType] = "text/csv"
        let loaded = try await client.execute(uri: "/v1/admin/parks/cedar-point/posted-waits", method: .put, headers: headers,
                                              body: ByteBuffer(string: csv))
        try #require(loaded.status == .ok, "\(String(buffer: loaded.body))")
    }

    /// A posted feed opens the ride and then shows it down: each load's change is pushed, with the
    /// posted row's time; loading the same feed again changes nothing and pushes nothing.
    @Test func aPostedFeedThatClosesARidePushesIt() async throws {
        let clock = TestClock()
        let s = try await Self.service(clock)
        defer { s.remove() }
        try await s.app().test(.live) { client in
            let admin = try await s.admin("root", on: client)
            let carl = try await WaitAPITests.queuer("carl", client, at: clock, offset: 20)
            try await client.ws("/v1/live", configuration: .init(additionalHeaders: carl.auth)) { inbound, outbound, _ in
                var messages = inbound.messages(maxSize: 1 << 16).makeAsyncIterator()
                try await Self.hello(&messages)
                let opened = clock.now().addingTimeInterval(-600).formatted(.iso8601)
                let open = "ride,at,minutes\nmillennium-force,\(opened),40\n"
                try await Self.loadPosted(open, as: admin, client)
                let first = try await LiveTests.nextEvent(&messages)
                Self.expectStatus(first, "operating", previous: "unknown", source: "posted")
                #expect(first?["at"] as? String == opened)

                try await Self.loadPosted(open, as: admin, client)
                try await Self.expectNothingMore(&messages, of: carl, on: s)

                let broke = clock.now().addingTimeInterval(-60).formatted(.iso8601)
                try await Self.loadPosted("ride,at,minutes\nmillennium-force,\(broke),-999\n", as: admin, client)
                let second = try await LiveTests.nextEvent(&messages)
                Self.expectStatus(second, "down", previous: "operating", source: "posted")
                #expect(second?["at"] as? String == broke)
                try await Self.expectNothingMore(&messages, of: carl, on: s)
                let row = try await WaitAPITests.board(client, as: carl)
                #expect(row["status"] as? String == "down")
                #expect(row["statusSource"] as? String == "posted")
                try await outbound.close(.normalClosure, reason: nil)
            }
        }
    }

    /// A feed that opens more rides than ``Live/statusBurstLimit`` sends one `board` message, not
    /// one each: a message per ride would fill the connection's buffer and drop it.
    @Test func aFeedChangingManyRidesSendsOneBoardMessage() async throws {
        let clock = TestClock()
        let s = try await Self.service(clock)
        defer { s.remove() }
        try await s.app().test(.live) { client in
            let admin = try await s.admin("root", on: client)
            let carl = try await WaitAPITests.queuer("carl", client, at: clock, offset: 20)
            let rides = try #require(try json(try await client.get("/v1/parks/cedar-point/waits", as: carl).body)["rides"] as? [[String: Any]])
                .compactMap { $0["ride"] as? String }
            try #require(rides.count > Live.statusBurstLimit)
            let at = clock.now().addingTimeInterval(-300).formatted(.iso8601)
            let feed = "ride,at,minutes\n" + rides.map { "\($0),\(at),15\n" }.joined()
            try await client.ws("/v1/live", configuration: .init(additionalHeaders: carl.auth)) { inbound, outbound, _ in
                var messages = inbound.messages(maxSize: 1 << 16).makeAsyncIterator()
                try await Self.hello(&messages)
                try await Self.loadPosted(feed, as: admin, client)
                let board = try await LiveTests.nextEvent(&messages)
                #expect(board?["type"] as? String == "board", "\(board ?? [:])")
                #expect((board?["park"] as? [String: Any])?["id"] as? String == "cedar-point")
                #expect(board?["changedRides"] as? Int == rides.count)
                try await Self.expectNothingMore(&messages, of: carl, on: s)
                try await outbound.close(.normalClosure, reason: nil)
            }
        }
    }

    /// The next `location` message, past the transitions that come before it.
    static func nextLocation<I: AsyncIteratorProtocol>(_ messages: inout I, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: Any]?
    where I.Element == WebSocketMessage {
        while let event = try await LiveTests.nextEvent(&messages, sourceLocation: sourceLocation) {
            if event["type"] as? String == "location" { return event }
            #expect(event["type"] as? String == "transition", "\(event)", sourceLocation: sourceLocation)
        }
        return nil
    }

    /// A friend's `location` push names the park and zone friends nearby names for them: park and
    /// zone shared exactly, the park alone shared approximately, and for park-only sharing only the
    /// park the two are visiting together; a friend who may not see it gets no push at all.
    @Test func aLocationPushNamesTheParkAndZoneAsNearbyDoes() async throws {
        let clock = TestClock()
        let s = try await Self.service(clock)
        defer { s.remove() }
        try await s.app().test(.live) { client in
            let ann = try await WaitAPITests.queuer("ann", client, at: clock, offset: 10)
            let bob = try await client.register("bob")
            let eve = try await client.register("eve")
            let carol = try await client.register("carol")
            let dora = try await client.register("dora")
            try await client.befriend(ann, bob)
            try await client.befriend(ann, eve)
            try await client.befriend(ann, carol)
            try await client.befriend(dora, carol)
            _ = try await client.send(.patch, "/v1/me", as: eve, json: ["sharing": ["precision": "approximate"]])
            _ = try await client.send(.patch, "/v1/me", as: carol, json: ["sharing": ["precision": "park-only"]])
            try await client.ws("/v1/live", configuration: .init(additionalHeaders: ann.auth)) { annIn, annOut, _ in
                try await client.ws("/v1/live", configuration: .init(additionalHeaders: dora.auth)) { doraIn, doraOut, _ in
                    var annMessages = annIn.messages(maxSize: 1 << 16).makeAsyncIterator()
                    var doraMessages = doraIn.messages(maxSize: 1 << 16).makeAsyncIterator()
                    try await Self.hello(&annMessages)
                    try await Self.hello(&doraMessages)
                    func walkIn(_ user: TestUser, offset: Double) async throws {
                        let p = Geodesy.destination(from: WaitAPITests.station, azimuth: 45, distance: offset)
                        _ = try await client.postFixes([fixJSON(p.lat, p.lon, accuracy: 6, at: clock.now())], as: user)
                    }

                    try await walkIn(bob, offset: 25)
                    let exact = try #require(try await Self.nextLocation(&annMessages))
                    try await walkIn(eve, offset: 30)
                    let approximate = try #require(try await Self.nextLocation(&annMessages))
                    try await walkIn(carol, offset: 35)
                    let parkOnly = try #require(try await Self.nextLocation(&annMessages))

                    // What friends nearby shows Ann of each.
                    let nearby = try #require(try json(try await client.get("/v1/friends/nearby?radius=5000", as: ann).body)["people"] as? [[String: Any]])
                    func shown(_ user: TestUser) throws -> [String: Any] {
                        try #require(nearby.first { ($0["user"] as? [String: Any])?["username"] as? String == user.username })
                    }
                    func place(_ object: [String: Any], _ key: String) -> [String: String]? {
                        (object[key] as? [String: Any])?.compactMapValues { $0 as? String }
                    }

                    #expect(exact["precision"] as? String == "exact")
                    #expect(place(exact, "park") == ["id": "cedar-point", "name": "Cedar Point"])
                    let zone = try #require(place(exact, "zone"), "\(exact)")
                    #expect(zone["id"]?.hasPrefix("cedar-point.") == true && zone["name"] != nil && zone["kind"] != nil)
                    let bobNearby = try shown(bob), eveNearby = try shown(eve), carolNearby = try shown(carol)
                    #expect(place(exact, "park") == place(bobNearby, "park"))
                    #expect(place(exact, "zone") == place(bobNearby, "zone"))

                    #expect(approximate["precision"] as? String == "approximate")
                    #expect(place(approximate, "park") == ["id": "cedar-point", "name": "Cedar Point"])
                    #expect(approximate["zone"] == nil)
                    #expect(place(approximate, "park") == place(eveNearby, "park") && eveNearby["zone"] == nil)

                    #expect(parkOnly["precision"] as? String == "park-only")
                    #expect(parkOnly["parks"] as? [String] == ["cedar-point"])
                    #expect(place(parkOnly, "park") == ["id": "cedar-point", "name": "Cedar Point"])
                    #expect(parkOnly["zone"] == nil && parkOnly["lat"] == nil)
                    #expect(place(parkOnly, "park") == place(carolNearby, "park") && carolNearby["zone"] == nil)

                    // Dora, Carol's friend visiting no park, may not see Carol's park: nothing came.
                    try await Self.expectNothingMore(&doraMessages, of: dora, on: s)
                    try await doraOut.close(.normalClosure, reason: nil)
                }
                try await annOut.close(.normalClosure, reason: nil)
            }
        }
    }
}
