import CoasterAPI
import CoasterCore
import CoasterHTTP
import CoasterService
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@Suite("Nearby friends and privacy")
struct NearbyTests {
    static let station = Coordinate(lat: 41.481656, lon: -82.688132)

    static func people(_ response: TestResponse) throws -> [[String: Any]] {
        try #require(try json(response.body)["people"] as? [[String: Any]])
    }

    @Test func twoFriendsInCedarPointSeeEachOtherAndNobodyElseDoes() async throws {
        let clock = TestClock()
        try await TestService.withService(clock: clock) { _, client in
            let ann = try await client.register("ann")
            let bob = try await client.register("bob")
            let carol = try await client.register("carol")
            let eve = try await client.register("eve")
            try await client.befriend(ann, bob)
            try await client.befriend(ann, carol)
            let bobAt = Geodesy.destination(from: Self.station, azimuth: 0, distance: 37)
            _ = try await client.postFixes([fixJSON(Self.station.lat, Self.station.lon, accuracy: 5, at: clock.now())], as: ann)
            _ = try await client.postFixes([fixJSON(bobAt.lat, bobAt.lon, accuracy: 5, at: clock.now())], as: bob)
            _ = try await client.postFixes([fixJSON(bobAt.lat, bobAt.lon, accuracy: 5, at: clock.now())], as: carol)
            _ = try await client.postFixes([fixJSON(bobAt.lat, bobAt.lon, accuracy: 5, at: clock.now())], as: eve)
            _ = try await client.send(.patch, "/v1/me", as: carol, json: ["sharing": ["ghost": ["mode": "on"]]])

            let seen = try Self.people(try await client.get("/v1/friends/nearby?radius=200", as: ann))
            #expect(seen.map { ($0["user"] as? [String: Any])?["username"] as? String } == ["bob"])
            let exact = Geodesy.distance(Self.station, bobAt)
            #expect(seen.first?["distance"] as? Double == DistanceBuckets.bucket(exact))
            #expect(seen.first?["distance"] as? Double == 40)
            #expect((seen.first?["park"] as? [String: Any])?["name"] as? String == "Cedar Point")
            #expect((seen.first?["description"] as? String)?.hasPrefix("at Cedar Point, ") == true)
            #expect(seen.first?["zone"] != nil)
            // Bob sees Ann; Eve (a stranger) and Carol's ghost see and are seen by nobody.
            #expect(try Self.people(try await client.get("/v1/friends/nearby", as: bob)).count == 1)
            #expect(try Self.people(try await client.get("/v1/friends/nearby", as: eve)).isEmpty)
            let inPark = try Self.people(try await client.get("/v1/parks/cedar-point/friends", as: ann))
            #expect(inPark.map { ($0["user"] as? [String: Any])?["username"] as? String } == ["bob"])

            // Bob blocks Ann: from then on neither sees the other.
            _ = try await client.send(.put, "/v1/blocks/\(ann.id)", as: bob)
            #expect(try Self.people(try await client.get("/v1/friends/nearby", as: ann)).isEmpty)
            #expect(try Self.people(try await client.get("/v1/parks/cedar-point/friends", as: ann)).isEmpty)
        }
    }

    /// People in the same zones share one set of them in the directory (`ZoneSets`): set by their
    /// fixes, and again after one of them is reloaded from the store.
    @Test func peopleInTheSameZonesShareOneSet() async throws {
        let clock = TestClock()
        try await TestService.withService(clock: clock) { s, client in
            let ann = try await client.register("ann")
            let bob = try await client.register("bob")
            for user in [ann, bob] {
                _ = try await client.postFixes([fixJSON(Self.station.lat, Self.station.lon, accuracy: 5, at: clock.now())], as: user)
            }
            func zones(_ user: TestUser) -> Set<ZoneID>? { s.service.people.person(UserID(user.id))?.zones }
            let annZones = try #require(zones(ann))
            #expect(!annZones.isEmpty)
            #expect(zones(bob) == annZones)
            #expect(zones(bob)?.isSameCopy(as: annZones) == true)
            try await s.service.people.refresh(UserID(bob.id))
            #expect(zones(bob) == annZones)
            #expect(zones(bob)?.isSameCopy(as: annZones) == true)
        }
    }

    /// The directory marks each person's zones with the most specific one in the fence index in
    /// force (`ZoneMark`), whether they came with a fix, a reload or the load at start: a mark
    /// made with another index would be worked out again on every answer naming them.
    @Test func peoplesZonesAreMarkedInTheIndexInForce() async throws {
        let clock = TestClock()
        try await TestService.withService(clock: clock) { s, client in
            let ann = try await client.register("ann")
            let bob = try await client.register("bob")
            _ = try await client.postFixes([fixJSON(Self.station.lat, Self.station.lon, accuracy: 5, at: clock.now())], as: ann)
            let index = s.service.fences.index
            func person(_ user: TestUser) throws -> PersonState { try #require(s.service.people.person(UserID(user.id))) }
            #expect(try !person(ann).zones.isEmpty)
            #expect(try person(ann).zonesAreMarked(in: index))
            #expect(try person(bob).zonesAreMarked(in: index))
            try await s.service.people.refresh(UserID(ann.id))
            #expect(try person(ann).zonesAreMarked(in: index))
            try await s.service.people.load()
            #expect(try person(ann).zonesAreMarked(in: index))
            #expect(try person(ann).mostSpecificZone(in: index).map(index.zoneID(at:)) == "cedar-point.millennium-force")
            // An index made since (a park import) finds no mark of its own.
            let replaced = try await s.service.fences.reload()
            #expect(try !person(ann).zonesAreMarked(in: replaced))
        }
    }

    @Test func pendingRequestsAndStaleLocationsShowNothing() async throws {
        let clock = TestClock()
        try await TestService.withService(clock: clock) { _, client in
            let ann = try await client.register("ann")
            let bob = try await client.register("bob")
            let dan = try await client.register("dan")
            _ = try await client.send(.post, "/v1/friends/requests", as: ann, json: ["username": "dan"])
            try await client.befriend(ann, bob)
            for user in [bob, dan] {
                _ = try await client.postFixes([fixJSON(Self.station.lat, Self.station.lon, at: clock.now())], as: user)
            }
            clock.advance(2 * 3600 + 60)
            _ = try await client.postFixes([fixJSON(Self.station.lat, Self.station.lon, at: clock.now())], as: ann)
            // Bob's fix is 2 h 1 min old; Dan is only pending.
            #expect(try Self.people(try await client.get("/v1/friends/nearby", as: ann)).isEmpty)
            let refused = try await client.get("/v1/friends/nearby", as: dan)
            #expect(try expectProblem(refused, .unprocessableContent, .nearbyRefused)["reason"] as? String == "no_recent_fix")
        }
    }

    @Test func perFriendOverridesAndParkOnly() async throws {
        let clock = TestClock()
        try await TestService.withService(clock: clock) { _, client in
            let ann = try await client.register("ann")
            let bob = try await client.register("bob")
            try await client.befriend(ann, bob)
            let bobAt = Geodesy.destination(from: Self.station, azimuth: 90, distance: 120)
            _ = try await client.postFixes([fixJSON(Self.station.lat, Self.station.lon, at: clock.now())], as: ann)
            _ = try await client.postFixes([fixJSON(bobAt.lat, bobAt.lon, at: clock.now())], as: bob)
            #expect(try await client.send(.put, "/v1/friends/\(ann.id)/sharing", as: bob, json: ["precision": "park-only"]).status == .noContent)
            let seen = try Self.people(try await client.get("/v1/friends/nearby", as: ann))
            #expect(seen.first?["precision"] as? String == "park-only")
            #expect(seen.first?["distance"] == nil)
            #expect(seen.first?["zone"] == nil)
            #expect((seen.first?["park"] as? [String: Any])?["id"] as? String == "cedar-point")
            _ = try await client.send(.put, "/v1/friends/\(ann.id)/sharing", as: bob, json: ["hidden": true])
            #expect(try Self.people(try await client.get("/v1/friends/nearby", as: ann)).isEmpty)
        }
    }

    @Test func nearbyIsRateLimited() async throws {
        // A stopped clock: the bucket does not refill while the test runs, however slow the machine.
        let clock = TestClock()
        try await TestService.withService(clock: clock) { _, client in
            let ann = try await client.register("ann")
            _ = try await client.postFixes([fixJSON(Self.station.lat, Self.station.lon, at: clock.now())], as: ann)
            var statuses: [HTTPResponse.Status] = []
            for _ in 0..<12 { statuses.append(try await client.get("/v1/friends/nearby", as: ann).status) }
            #expect(Array(statuses.prefix(10)) == Array(repeating: .ok, count: 10))
            #expect(Array(statuses.dropFirst(10)) == [.tooManyRequests, .tooManyRequests])
        }
    }

    @Test func discoverablePeopleInTheSameParkOnly() async throws {
        let clock = TestClock()
        try await TestService.withService(clock: clock) { _, client in
            let ann = try await client.register("ann")
            let dora = try await client.register("dora")
            let shy = try await client.register("shy")
            let far = try await client.register("far")
            _ = try await client.send(.patch, "/v1/me", as: dora, json: ["sharing": ["discoverable": true]])
            _ = try await client.send(.patch, "/v1/me", as: far, json: ["sharing": ["discoverable": true]])
            let near = Coordinate(lat: 41.4822, lon: -82.6835)
            for (user, at) in [(ann, Self.station), (dora, near), (shy, near)] {
                _ = try await client.postFixes([fixJSON(at.lat, at.lon, at: clock.now())], as: user)
            }
            _ = try await client.postFixes([fixJSON(39.3440, -84.2680, at: clock.now())], as: far)
            let found = try Self.people(try await client.get("/v1/people/nearby?radius=2000", as: ann))
            #expect(found.map { ($0["user"] as? [String: Any])?["username"] as? String } == ["dora"])
            #expect(found.first?["precision"] as? String == "approximate")
            #expect(found.first?["zone"] == nil)
            _ = try await client.send(.put, "/v1/blocks/\(ann.id)", as: dora)
            #expect(try Self.people(try await client.get("/v1/people/nearby?radius=2000", as: ann)).isEmpty)
        }
    }

    /// An attacker who is the victim's friend, with the victim sharing `approximate`, walks around
    /// the park with valid fixes and asks for nearby friends again and again. From every answer it
    /// keeps the positions consistent with all the bucketed distances it was told; its best estimate
    /// (their centroid) converges on the victim's grid-cell centre, not the victim.
    @Test func trilaterationLearnsNoMoreThanTheGridCell() async throws {
        let clock = TestClock()
        try await TestService.withService(clock: clock) { _, client in
            let attacker = try await client.register("mallory")
            let victim = try await client.register("victim")
            try await client.befriend(attacker, victim)
            _ = try await client.send(.patch, "/v1/me", as: victim, json: ["sharing": ["precision": "approximate"]])
            // The victim stands well away from their cell's centre, inside Cedar Point.
            let centre = ApproximateGrid.snap(Self.station)
            let truth = try #require(stride(from: 0.0, to: 360, by: 10).lazy
                .map { Geodesy.destination(from: centre, azimuth: $0, distance: 420) }
                .first { ApproximateGrid.snap($0) == centre && FenceIndexLookup.inCedarPoint($0) })
            _ = try await client.postFixes([fixJSON(truth.lat, truth.lon, accuracy: 5, at: clock.now())], as: victim)

            var observations: [(Coordinate, Double)] = []
            var position = Self.station
            for step in 0..<36 {
                position = Geodesy.destination(from: Self.station, azimuth: Double(step) * 10, distance: 300 + Double(step % 4) * 150)
                clock.advance(120)
                _ = try await client.postFixes([fixJSON(position.lat, position.lon, accuracy: 5, at: clock.now())], as: attacker)
                let answer = try Self.people(try await client.get("/v1/friends/nearby?radius=5000", as: attacker))
                let distance = try #require(answer.first?["distance"] as? Double)
                observations.append((position, distance))
            }
            // Every candidate point on a 20 m grid within 1.5 km that explains all answers.
            var consistent: [Coordinate] = []
            let (dLat, dLon) = Geodesy.degreesPerMetre(at: centre.lat)
            for north in stride(from: -1500.0, through: 1500, by: 20) {
                for east in stride(from: -1500.0, through: 1500, by: 20) {
                    let candidate = Coordinate(lat: centre.lat + north * dLat, lon: centre.lon + east * dLon)
                    if observations.allSatisfy({ DistanceBuckets.bucket(Geodesy.distance($0.0, candidate)) == $0.1 }) {
                        consistent.append(candidate)
                    }
                }
            }
            let n = Double(consistent.count)
            #expect(n > 0)
            let estimate = Coordinate(lat: consistent.map(\.lat).reduce(0, +) / n, lon: consistent.map(\.lon).reduce(0, +) / n)
            let error = Geodesy.distance(estimate, truth)
            // The attacker finds the cell centre (to within the buckets' slack) and no more.
            #expect(Geodesy.distance(estimate, centre) < 100)
            #expect(error > 320, "the attacker located the victim to \(Int(error)) m")
            #expect(!consistent.contains { Geodesy.distance($0, truth) < 60 }, "the true position is ruled out entirely")
        }
    }
}

/// Point-in-park for test set-up, from the shipped Cedar Point file.
enum FenceIndexLookup {
    static let index: FenceIndex = {
        let data = try! Data(contentsOf: TestService.repoRoot.appendingPathComponent("data/parks/cedar-point.geojson"))
        let definition = try! ParkImporter().definition(from: data)
        return try! FenceIndex(parks: [definition.park], zones: [], replicas: 1)
    }()

    static func inCedarPoint(_ c: Coordinate) -> Bool { Self.index.locate(c).first?.containment == .inside }
}
