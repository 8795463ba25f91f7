import CoasterAPI
import CoasterCore
import CoasterHTTP
import CoasterService
import CoasterStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@Suite("Ride detail")
struct RideDetailTests {
    static let millenniumForce = "cedar-point.millennium-force"
    static let inCedarPoint = (lat: 41.4822, lon: -82.6835)

    static func detail(_ client: some TestClientProtocol, _ ride: String = Self.millenniumForce, as user: TestUser) async throws -> [String: Any] {
        let response = try await client.get("/v1/rides/\(ride)", as: user)
        #expect(response.status == .ok, "\(String(buffer: response.body))")
        #expect(response.headers[.contentType]?.hasPrefix("application/json") == true)
        return try json(response.body)
    }

    static func community(_ detail: [String: Any]) throws -> (riders: Int, rides: Int) {
        let community = try #require(detail["community"] as? [String: Any])
        return (try #require(community["riders"] as? Int), try #require(community["rides"] as? Int))
    }

    /// The ride as the park's ride list shows it, stats and zone included; the park's name as the
    /// park list gives it; the wait and condition as the park's wait board shows them, though the
    /// ride's status stays the one its park file gives.
    @Test func aRideWithItsStatsParkAndWaitAsTheOtherRoutesShowThem() async throws {
        let clock = TestClock()
        try await TestService.withService(clock: clock) { _, client in
            let ann = try await WaitAPITests.queuer("ann", client, at: clock, offset: 10)
            let bob = try await WaitAPITests.queuer("bob", client, at: clock, offset: 12)
            #expect(try await client.send(.post, "/v1/rides/\(Self.millenniumForce)/waits", as: ann, json: ["minutes": 45]).status == .created)
            #expect(try await client.send(.post, "/v1/rides/\(Self.millenniumForce)/status", as: ann, json: ["status": "down"]).status == .created)
            #expect(try await client.send(.post, "/v1/rides/\(Self.millenniumForce)/status", as: bob, json: ["status": "down"]).status == .created)

            let detail = try await Self.detail(client, as: bob)
            let ride = try #require(detail["ride"] as? [String: Any])
            let rides = try #require(try json(try await client.get("/v1/parks/cedar-point/rides", as: bob).body)["rides"] as? [[String: Any]])
            var listed = try #require(rides.first { $0["id"] as? String == Self.millenniumForce })
            listed["myCount"] = nil
            #expect(NSDictionary(dictionary: ride) == NSDictionary(dictionary: listed), "detail \(ride), list \(listed)")
            #expect(ride["type"] as? String == "coaster")
            #expect(ride["zone"] as? String == Self.millenniumForce)
            let stats = try #require(ride["stats"] as? [String: Any])
            #expect((stats["heightM"] as? Double ?? 0) > 0 && (stats["speedKmh"] as? Double ?? 0) > 0, "\(stats)")
            #expect(ride["status"] as? String == "operating")

            let parks = try #require(try json(try await client.get("/v1/parks", as: bob).body)["parks"] as? [[String: Any]])
            let park = try #require(detail["park"] as? [String: Any])
            #expect(park["id"] as? String == "cedar-point")
            #expect(park["name"] as? String == parks.first { $0["id"] as? String == "cedar-point" }?["name"] as? String)

            var row = try await WaitAPITests.board(client, as: bob)
            for key in ["ride", "name", "type"] { row[key] = nil }
            let wait = try #require(detail["wait"] as? [String: Any])
            #expect(NSDictionary(dictionary: wait) == NSDictionary(dictionary: row), "detail \(wait), board \(row)")
            #expect(wait["condition"] as? String == "down")
            #expect((wait["estimate"] as? [String: Any])?["reports"] as? Int == 1)
        }
    }

    @Test func myCountFollowsTheCallersOwnRidesAtOnce() async throws {
        let clock = TestClock()
        try await TestService.withService(clock: clock) { _, client in
            let ann = try await client.register("ann")
            _ = try await client.postFixes(FixTests.walkIn(endingAt: clock.now()), as: ann)
            #expect(try await Self.detail(client, as: ann)["myCount"] as? Int == 0)
            for expected in 1...2 {
                let logged = try await client.send(.post, "/v1/rides/\(Self.millenniumForce)/rides", as: ann)
                #expect(logged.status == .created, "\(String(buffer: logged.body))")
                #expect(try await Self.detail(client, as: ann)["myCount"] as? Int == expected)
                clock.advance(301)
            }
            // Only that ride's, and only the caller's.
            #expect(try await Self.detail(client, "cedar-point.gatekeeper", as: ann)["myCount"] as? Int == 0)
            let bob = try await client.register("bob")
            #expect(try await Self.detail(client, as: bob)["myCount"] as? Int == 0)
        }
    }

    /// A ghost's ride moves no community figure until it is older than the location time-to-live,
    /// as on the leaderboards; then the figures are the ride board's riders and the sum of their
    /// counts.
    @Test func communityCountsSettleWithTheLeaderboards() async throws {
        let clock = TestClock(SocialTests.midweek)
        try await TestService.withService(clock: clock) { s, client in
            let ghost = try await client.register("ghost")
            let bob = try await client.register("bob")
            let eve = try await client.register("eve")
            _ = try await client.send(.patch, "/v1/me", as: ghost, json: ["sharing": ["ghost": ["mode": "on"]]])
            for user in [ghost, bob] {
                _ = try await client.postFixes([fixJSON(Self.inCedarPoint.lat, Self.inCedarPoint.lon, at: clock.now())], as: user)
            }
            let before = try Self.community(try await Self.detail(client, as: eve))
            let firstRide = clock.now()
            try await SocialTests.ride(client, ghost, Self.millenniumForce, times: 2, clock: clock)
            try await SocialTests.ride(client, bob, Self.millenniumForce, times: 1, clock: clock)
            // Bob walks the 700 m to Gatekeeper: a ride log needs the walk to have been possible.
            clock.advance(300)
            try await SocialTests.ride(client, bob, "cedar-point.gatekeeper", times: 1, clock: clock)

            try await s.service.housekeeping.settleTallies()
            #expect(try Self.community(try await Self.detail(client, as: eve)) == before)
            // The rider's own count is theirs at once, the community's is not.
            let own = try await Self.detail(client, as: ghost)
            #expect(own["myCount"] as? Int == 2)
            #expect(try Self.community(own) == before)
            // A minute before the first ride is as old as the time-to-live.
            let timeToLive = s.configuration.location.privacy.timeToLive
            clock.advance(timeToLive - 60 - clock.now().timeIntervalSince(firstRide))
            try await s.service.housekeeping.settleTallies()
            #expect(try Self.community(try await Self.detail(client, as: eve)) == before)

            // Every ride older than it (each was 301 s after the one before, Gatekeeper 300 s more).
            clock.advance(60 + 4 * 301 + 300)
            try await s.service.housekeeping.settleTallies()
            let after = try Self.community(try await Self.detail(client, as: eve))
            #expect(after.riders == before.riders + 2 && after.rides == before.rides + 3, "\(before) → \(after)")
            let board = try json(try await client.get("/v1/leaderboards/ride?ride=\(Self.millenniumForce)&limit=200", as: eve).body)
            let values = try #require(board["entries"] as? [[String: Any]]).compactMap { $0["value"] as? Int }
            #expect(after.riders == values.count && after.rides == values.reduce(0, +), "board \(values), detail \(after)")
            // Another ride's figures are its own.
            let gatekeeper = try Self.community(try await Self.detail(client, "cedar-point.gatekeeper", as: eve))
            #expect(gatekeeper.riders == 1 && gatekeeper.rides == 1)
        }
    }

    /// The detail reads the park as it is loaded now: a rename shows at once, and a ride the new
    /// file no longer lists is not found (as logging it is refused), its id named.
    @Test func unknownAndUnlistedRidesAreNotFoundByName() async throws {
        let clock = TestClock()
        try await TestService.withService(clock: clock) { s, client in
            let ann = try await client.register("ann")
            for id in ["cedar-point.no-such-coaster", "atlantis.millennium-force", "millennium-force"] {
                let problem = try expectProblem(try await client.get("/v1/rides/\(id)", as: ann), .notFound, .noSuchRide)
                #expect((problem["detail"] as? String)?.contains(id) == true, "\(problem)")
            }

            let store = s.service.store
            var definition = try #require(try await store.park(ParkID(rawValue: "cedar-point")))
            definition.park.name = "Cedar Point, Reloaded"
            let dropped = try #require(definition.rides.first { $0.id.rawValue != Self.millenniumForce })
            definition.rides.removeAll { $0.id == dropped.id }
            definition.zones.removeAll { $0.ride == dropped.id }
            clock.advance(1)
            _ = try await store.replaceParks([definition])
            #expect((try await Self.detail(client, as: ann)["park"] as? [String: Any])?["name"] as? String == "Cedar Point, Reloaded")
            let gone = try expectProblem(try await client.get("/v1/rides/\(dropped.id.rawValue)", as: ann), .notFound, .noSuchRide)
            #expect((gone["detail"] as? String)?.contains(dropped.id.rawValue) == true, "\(gone)")
        }
    }

    @Test func anonymousCallersAreAskedToLogIn() async throws {
        try await TestService.withApp { client in
            let response = try await client.get("/v1/rides/\(Self.millenniumForce)", as: nil)
            try expectProblem(response, .unauthorized, .unauthorized)
            #expect(response.headers[.wwwAuthenticate]?.hasPrefix("Bearer") == true)
        }
    }
}
