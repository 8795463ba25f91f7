@testable import CoasterAPI
import CoasterCore
import CoasterHTTP
import CoasterService
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@Suite("Places in a park")
struct PlacesAPITests {
    static let millenniumForce = NearbyTests.station
    /// Six Flags Fiesta Texas, by BATMAN The Ride: a visitor in Texas.
    static let fiestaTexas = Coordinate(lat: 29.596759, lon: -98.609373)

    static func places(_ response: TestResponse) throws -> [[String: Any]] {
        try #require(try json(response.body)["places"] as? [[String: Any]])
    }

    /// The case: standing at Millennium Force, the nearest restroom comes first, at the
    /// distance GeographicLib gives. Reference: `Geodesic.WGS84.Inverse(41.481656, -82.688132,
    /// 41.482261, -82.687982)` (Python geographiclib 2.1) is s12 = 68.35116758939472 m, azi1 =
    /// 10.561244673871718°, to `cedar-point.restrooms-7` in data/parks; the next two restrooms are
    /// 218.51982765109747 m at 91.8631887029693° and 276.6809813384328 m at −45.50265351930751°.
    @Test func aVisitorAtMillenniumForceGetsTheNearestRestroomFirst() async throws {
        let clock = TestClock()
        try await TestService.withService(clock: clock) { _, client in
            let ann = try await client.register("ann")
            let at = Self.millenniumForce
            _ = try await client.postFixes([fixJSON(at.lat, at.lon, accuracy: 5, at: clock.now())], as: ann)

            let response = try await client.get("/v1/parks/cedar-point/places?category=restroom&limit=3", as: ann)
            #expect(response.status == .ok)
            let answer = try json(response.body)
            #expect(answer["from"] as? String == "your-position")
            #expect(answer["park"] as? String == "cedar-point")
            #expect(answer["attribution"] as? String == "© OpenStreetMap contributors")
            #expect(answer["attributionUrl"] as? String == "https://www.openstreetmap.org/copyright")
            let places = try Self.places(response)
            #expect(places.map { $0["id"] as? String } == ["cedar-point.restrooms-7", "cedar-point.restrooms-6", "cedar-point.restrooms-9"])
            let geographicLib: [(metres: Double, degrees: Double)] = [(68.35116758939472, 10.561244673871718), (218.51982765109747, 91.8631887029693),
                                                                      (276.6809813384328, -45.50265351930751 + 360)]
            for (place, reference) in zip(places, geographicLib) {
                let metres = try #require(place["distanceMeters"] as? Double)
                #expect(abs(metres - reference.metres) < 1, "\(place)")
                let degrees = try #require(place["bearingDegrees"] as? Double)
                #expect(abs(degrees - reference.degrees) <= 0.5, "\(place)")
                #expect(place["category"] as? String == "restroom")
            }
            let first = try #require(places.first)
            #expect(first["name"] as? String == "Restrooms")
            #expect(first["land"] as? String == "Millennium Midway")
            #expect((first["position"] as? [String: Any])?["lat"] as? Double == 41.482261)
            // The caller's own position is not in the answer.
            #expect(!String(buffer: response.body).contains("41.481656"))

            // Rides are places too: Millennium Force is under her feet, with no bearing.
            let rides = try Self.places(try await client.get("/v1/parks/cedar-point/places?category=ride,show&limit=2", as: ann))
            #expect(rides.first?["id"] as? String == "cedar-point.millennium-force")
            #expect(rides.first?["distanceMeters"] as? Double == 0)
            #expect(rides.first?["bearingDegrees"] == nil)
            #expect(rides.count == 2)
            // Nearest first whatever the category, ten unless asked otherwise.
            let everything = try Self.places(try await client.get("/v1/parks/cedar-point/places", as: ann))
            #expect(everything.count == PlaceQuery.defaultLimit)
            let distances = everything.compactMap { $0["distanceMeters"] as? Double }
            #expect(distances.count == everything.count && distances == distances.sorted())
        }
    }

    /// Away from the park, or with no fresh fix: the places by name, with no distance or bearing.
    @Test func aVisitorInTexasGetsCedarPointsPlacesByNameOnly() async throws {
        let clock = TestClock()
        try await TestService.withService(clock: clock) { _, client in
            let tex = try await client.register("tex")
            let at = Self.fiestaTexas
            let fix = try await client.postFixes([fixJSON(at.lat, at.lon, accuracy: 5, at: clock.now())], as: tex)
            #expect(String(describing: fix).contains("six-flags-fiesta-texas"), "on a visit to Fiesta Texas: \(fix)")

            let response = try await client.get("/v1/parks/cedar-point/places?category=restroom&limit=100", as: tex)
            #expect(response.status == .ok)
            #expect(try json(response.body)["from"] as? String == "none")
            #expect(try json(response.body)["attribution"] as? String == "© OpenStreetMap contributors")
            let places = try Self.places(response)
            #expect(places.count == 15)
            #expect(places.allSatisfy { $0["distanceMeters"] == nil && $0["bearingDegrees"] == nil && $0["category"] as? String == "restroom" })
            let names = places.compactMap { $0["name"] as? String }
            #expect(names == names.sorted { $0.lowercased() <= $1.lowercased() })
            // At their own park they are measured from.
            let home = try json(try await client.get("/v1/parks/six-flags-fiesta-texas/places?category=ride&limit=1", as: tex).body)
            #expect(home["from"] as? String == "your-position")

            // Someone who was at Cedar Point, but whose fix is older than the time to live.
            let ann = try await client.register("ann")
            let mf = Self.millenniumForce
            _ = try await client.postFixes([fixJSON(mf.lat, mf.lon, accuracy: 5, at: clock.now())], as: ann)
            #expect(try json(try await client.get("/v1/parks/cedar-point/places", as: ann).body)["from"] as? String == "your-position")
            clock.advance(LocationPrivacy().timeToLive + 60)
            let stale = try await client.get("/v1/parks/cedar-point/places", as: ann)
            #expect(try json(stale.body)["from"] as? String == "none")
            #expect(try Self.places(stale).allSatisfy { $0["distanceMeters"] == nil })
        }
    }

    @Test func badQueriesAreProblemsNamingEveryBadParameter() async throws {
        try await TestService.withService { _, client in
            let ann = try await client.register("ann")
            for (query, named) in [("category=toilet", ["category"]), ("category=food,", ["category"]), ("category=gate", ["category"]),
                                   ("limit=0", ["limit"]), ("limit=101", ["limit"]), ("limit=many", ["limit"]),
                                   ("category=toilet&limit=-3", ["category", "limit"])] {
                let response = try await client.get("/v1/parks/cedar-point/places?\(query)", as: ann)
                let problem = try expectProblem(response, .badRequest, .invalidParameter)
                let params = try #require(problem["invalid-params"] as? [[String: Any]], "\(query)")
                #expect(params.compactMap { $0["name"] as? String } == named, "\(query)")
            }
            let unknown = try expectProblem(try await client.get("/v1/parks/atlantis/places?category=food", as: ann), .notFound, .notFound)
            #expect((unknown["detail"] as? String)?.contains("atlantis") == true)
            // The park first: a park that does not exist has no categories to get wrong.
            try expectProblem(try await client.get("/v1/parks/atlantis/places?category=toilet", as: ann), .notFound, .notFound)
            try expectProblem(try await client.get("/v1/parks/Not%20A%20Park/places", as: ann), .notFound, .notFound)
            try expectProblem(try await client.get("/v1/parks/cedar-point/places?limit=1&limit=2", as: ann), .badRequest, .invalidParameter)
            try expectProblem(try await client.get("/v1/parks/cedar-point/places", as: nil), .unauthorized, .unauthorized)
        }
    }

    /// The fast lane answers the route with the router's bytes, problems included.
    @Test func theFastLaneAnswersAsTheRouterDoes() async throws {
        let clock = TestClock()
        let s = try await TestService(clock: clock)
        defer { s.remove() }
        try await FastLaneTests.withBothLanes(s) { live, lane, router in
            let ann = try await live.register("ann")
            let tex = try await live.register("tex")
            let mf = Self.millenniumForce, fiesta = Self.fiestaTexas
            _ = try await live.postFixes([fixJSON(mf.lat, mf.lon, accuracy: 5, at: clock.now())], as: ann)
            _ = try await live.postFixes([fixJSON(fiesta.lat, fiesta.lon, accuracy: 5, at: clock.now())], as: tex)
            let targets = ["/v1/parks/cedar-point/places?category=restroom", "/v1/parks/cedar-point/places?category=food%2Cshop&limit=50",
                           "/v1/parks/cedar-point/places", "/v1/parks/kings-island/places?limit=3", "/v1/parks/cedar-point/places?category=toilet&limit=0",
                           "/v1/parks/atlantis/places", "/v1/parks/CEDAR/places", "/v1/parks/cedar-point/places/"]
            for user in [ann, tex] {
                for target in targets {
                    let request = "GET \(target) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(user.token)\r\n\r\n"
                    let fast = try #require(await lane.exchange(request), "\(target)")
                    let routed = try #require(await router.exchange(request), "\(target)")
                    #expect(FastLaneTests.maskedResponse(fast) == FastLaneTests.maskedResponse(routed), "\(user.username) \(target)")
                }
            }
            // Six targets of a well-formed park path (problems included), for two callers; the
            // malformed id and the trailing slash were the router's.
            let text = String(buffer: try await live.get("/metrics", as: nil).body)
            #expect(FastLaneTests.sample(text, "coasterlife_http_fast_lane_requests_total{route=\"/v1/parks/{parkId}/places\"}") == 12)
        }
    }

    /// The answer's bytes as the route writes them, against the `Encodable` form.
    @Test func theWrittenAnswerIsTheEncodedOne() throws {
        let places = ParkPlaces(["cedar-point", "kings-island"].map { name in
            try! ParkImporter().definition(from: Data(contentsOf: TestService.repoRoot.appendingPathComponent("data/parks/\(name).geojson")))
        })
        let parts = PlaceParts(places)
        for park in places.parkIDs.indices {
            let all = places.places(ofParkAt: park)
            let origin = all[all.count / 2].position
            for query in [PlaceQuery(limit: 100), PlaceQuery(categories: PlaceCategories([.restroom, .ride]), limit: 5)] {
                for (from, found) in [(PlacesResponse.From.yourPosition, places.nearest(inParkAt: park, from: origin, query)),
                                      (.nowhere, places.byName(inParkAt: park, query))] {
                    let answer = PlacesResponse(park: places.parkIDs[park], from: from, found: found, places: all, parts: parts.park(park))
                    #expect(String(buffer: answer.jsonBuffer) == String(decoding: try AppRequestContext.encoder.encode(answer), as: UTF8.self))
                }
            }
        }
    }
}
