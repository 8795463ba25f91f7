import CoasterAPI
import CoasterCore
import CoasterHTTP
import CoasterService
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// A ride log rests on evidence: the ride runs, the rider could have got there, and the log says
/// how close their fixes put them to it.
@Suite struct RideEvidenceTests {
    static let millenniumForce = Coordinate(lat: 41.481656, lon: -82.688132)
    static let gemini = Coordinate(lat: 41.486382, lon: -82.689591)
    /// On Main Midway, inside Cedar Point and no ride's zone.
    static let midway = Coordinate(lat: 41.4812, lon: -82.6830)

    static func log(_ client: some TestClientProtocol, _ ride: String, as user: TestUser) async throws -> TestResponse {
        try await client.send(.post, "/v1/rides/cedar-point.\(ride)/rides", as: user)
    }

    @Test func aRiderAtTheRideLogsAtRideAndOneAcrossTheParkInPark() async throws {
        let clock = TestClock()
        try await TestService.withService(clock: clock) { _, client in
            let near = try await client.register("near")
            _ = try await client.postFixes([fixJSON(Self.millenniumForce.lat, Self.millenniumForce.lon, accuracy: 5, at: clock.now())], as: near)
            let far = try await client.register("far")
            let located = try json(try await client.get("/v1/locate?lat=\(Self.midway.lat)&lon=\(Self.midway.lon)&accuracy=5", as: far).body)
            let zones = ((located["parks"] as? [[String: Any]])?.first?["zones"] as? [[String: Any]]) ?? []
            #expect(!zones.contains { $0["kind"] as? String == "ride" }, "the midway spot must be in no ride's zone")
            _ = try await client.postFixes([fixJSON(Self.midway.lat, Self.midway.lon, accuracy: 5, at: clock.now())], as: far)
            clock.advance(60)

            let atRide = try await Self.log(client, "millennium-force", as: near)
            #expect(atRide.status == .created)
            #expect((try json(atRide.body)["log"] as? [String: Any])?["evidence"] as? String == "at-ride")
            let inPark = try await Self.log(client, "millennium-force", as: far)
            #expect(inPark.status == .created)
            #expect((try json(inPark.body)["log"] as? [String: Any])?["evidence"] as? String == "in-park")
            let history = try json(try await client.get("/v1/me/rides", as: near).body)["rides"] as? [[String: Any]]
            #expect(history?.first?["evidence"] as? String == "at-ride")

            // Still in the queue 50 minutes later (no exit since, a fresh fix there): at the ride.
            clock.advance(50 * 60)
            _ = try await client.postFixes([fixJSON(Self.millenniumForce.lat + 0.00001, Self.millenniumForce.lon, accuracy: 5, at: clock.now())], as: near)
            #expect((try json(try await Self.log(client, "millennium-force", as: near).body)["log"] as? [String: Any])?["evidence"] as? String == "at-ride")
            // An hour after leaving the ride's zone, the same rider's log is only in the park.
            _ = try await client.postFixes([fixJSON(Self.midway.lat, Self.midway.lon, accuracy: 5, at: clock.now())], as: near)
            clock.advance(60 * 60)
            _ = try await client.postFixes([fixJSON(Self.midway.lat, Self.midway.lon + 0.00001, accuracy: 5, at: clock.now())], as: near)
            #expect((try json(try await Self.log(client, "millennium-force", as: near).body)["log"] as? [String: Any])?["evidence"] as? String == "in-park")
        }
    }

    @Test func aSecondRideBeforeTheFirstsCycleAndTheWalkIsRefused() async throws {
        let clock = TestClock()
        try await TestService.withService(clock: clock) { _, client in
            let ann = try await client.register("ann")
            _ = try await client.postFixes([fixJSON(Self.millenniumForce.lat, Self.millenniumForce.lon, accuracy: 5, at: clock.now())], as: ann)
            #expect(try await Self.log(client, "millennium-force", as: ann).status == .created)
            clock.advance(1)
            let refused = try await Self.log(client, "gemini", as: ann)
            let problem = try expectProblem(refused, .tooManyRequests, .rideCooldown)
            #expect(problem["reason"] as? String == "impossible_sequence")
            #expect((problem["detail"] as? String)?.contains("Millennium Force") == true)
            // Millennium Force's cycle (150 s) and the walk between the two 25 m circles, about
            // 540 m apart centre to centre, at 1.8 m/s.
            let centres = Geodesy.distance(Self.millenniumForce, Self.gemini)
            let expected = 150 + (centres - 50) / 1.8 - 1
            let retry = try #require(Double(refused.headers[.retryAfter] ?? ""))
            #expect(abs(retry - expected) <= 3, "Retry-After \(retry), expected about \(expected)")
            clock.advance(retry)
            #expect(try await Self.log(client, "gemini", as: ann).status == .created)
        }
    }

    @Test func aRideTheCrowdOrThePostedFeedCallsDownIsNotLogged() async throws {
        let clock = TestClock()
        try await TestService.withService(clock: clock) { service, client in
            let admin = try await service.admin("root", on: client)
            var riders: [TestUser] = []
            for name in ["ann", "bob", "cat"] {
                let user = try await client.register(name)
                _ = try await client.postFixes([fixJSON(Self.millenniumForce.lat, Self.millenniumForce.lon, accuracy: 5, at: clock.now())], as: user)
                riders.append(user)
            }
            for reporter in riders.prefix(2) {
                #expect(try await client.send(.post, "/v1/rides/cedar-point.millennium-force/status", as: reporter, json: ["status": "down"]).status.code < 300)
            }
            let down = try await Self.log(client, "millennium-force", as: riders[2])
            #expect(try expectProblem(down, .unprocessableContent, .rideRefused)["reason"] as? String == "ride_down")

            // The park's feed, newer than the crowd, says it runs again.
            clock.advance(60)
            let stamp = ISO8601DateFormatter().string(from: clock.now())
            try await LiveStatusTests.loadPosted("ride,at,minutes\nmillennium-force,\(stamp),45\n", as: admin, client)
            #expect(try await Self.log(client, "millennium-force", as: riders[2]).status == .created)

            // Then the feed marks it down: refused, naming the feed.
            clock.advance(60)
            let later = ISO8601DateFormatter().string(from: clock.now())
            try await LiveStatusTests.loadPosted("ride,at,minutes\nmillennium-force,\(later),\n", as: admin, client)
            let posted = try await Self.log(client, "millennium-force", as: riders[0])
            let problem = try expectProblem(posted, .unprocessableContent, .rideRefused)
            #expect(problem["reason"] as? String == "ride_down")
            #expect((problem["detail"] as? String)?.contains("posted") == true)
        }
    }
}

@Suite struct RideLogRulesTests {
    @Test func theFreshestWordOnARideWins() {
        let rules = RideStatusRules(), estimator = WaitEstimator()
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        func state(_ posted: PostedWait?, _ statuses: [StatusReport], recent: Bool = false) -> RideLiveState {
            rules.liveState(statuses: statuses, posted: { posted }, recentWaits: { recent }, estimator: estimator, now: now)
        }
        let crowd = [StatusReport(user: UserID(1), condition: .down, at: now.addingTimeInterval(-300)),
                     StatusReport(user: UserID(2), condition: .down, at: now.addingTimeInterval(-200))]
        #expect(state(nil, []) == .unknown)
        #expect(state(nil, [], recent: true) == RideLiveState(status: .operating, source: .crowd))
        #expect(state(nil, crowd) == RideLiveState(status: .down, source: .crowd))
        // The feed newer than the crowd's newest agreeing report speaks; older, it does not.
        #expect(state(PostedWait(minutes: 30, at: now.addingTimeInterval(-100)), crowd) == RideLiveState(status: .operating, source: .posted))
        #expect(state(PostedWait(minutes: 30, at: now.addingTimeInterval(-250)), crowd) == RideLiveState(status: .down, source: .crowd))
        #expect(state(PostedWait(minutes: nil, at: now.addingTimeInterval(-60)), []) == RideLiveState(status: .down, source: .posted))
        // A posted row two hours old speaks for nothing.
        #expect(state(PostedWait(minutes: nil, at: now.addingTimeInterval(-7200)), []) == .unknown)
    }

    @Test func theWalkIsMeasuredBetweenFootprints() throws {
        let a = Coordinate(lat: 41.48, lon: -82.68)
        let b = Geodesy.destination(from: a, azimuth: 90, distance: 200)
        func circle(_ c: Coordinate) -> MultiPolygon {
            MultiPolygon(polygons: [Polygon(rings: [Geodesy.geodesicCircle(center: c, radius: 25)])])
        }
        let walk = try #require(RideLogPolicy.walk(from: circle(a), to: circle(b)))
        #expect(abs(walk - 150) < 1)
        #expect(RideLogPolicy.walk(from: circle(a), to: circle(a)) == 0)
        let ride = Ride(id: "p.r", park: "p", name: "R", type: .coaster, status: .operating)
        #expect(RideLogPolicy().gap(after: ride, walk: 180) == 150 + 100)
    }
}
