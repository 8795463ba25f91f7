import CoasterAPI
import CoasterCore
import CoasterHTTP
import CoasterService
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// What `GET /v1/parks/{parkId}` serves is a park file: loaded back, it is the same park, served
/// again byte for byte.
@Suite struct ParkFileTests {
    static let shippedParks = ["cedar-point", "kings-island", "six-flags-fiesta-texas"]

    @Test(arguments: shippedParks)
    func aServedParkLoadsBackToTheSameBytes(park: String) async throws {
        try await TestService.withService { service, client in
            let admin = try await service.admin("root", on: client)
            let served = try await client.get("/v1/parks/\(park)", as: admin)
            #expect(served.status == .ok)
            let put = try await client.execute(uri: "/v1/admin/parks/\(park)", method: .put, headers: admin.auth, body: served.body)
            #expect(put.status == .ok)
            let report = try json(put.body)
            #expect((report["warnings"] as? [Any])?.isEmpty == true, "a served park carries nothing its import does not know")
            let again = try await client.get("/v1/parks/\(park)", as: admin)
            #expect(again.status == .ok)
            // Compared whole, and feature by feature so a failure names the feature, not 300 KB.
            #expect(again.body == served.body)
            let before = try #require(json(served.body)["features"] as? [[String: Any]])
            let after = try #require(json(again.body)["features"] as? [[String: Any]])
            #expect(after.count == before.count)
            for (b, a) in zip(before, after) where !NSDictionary(dictionary: b).isEqual(to: a) {
                Issue.record("feature \(b["id"] ?? "?") changed on the round trip: \(String(describing: a["geometry"]).prefix(400))")
            }
            // The shipped file and the served one define the same park.
            let shipped = try ParkImporter().definition(
                from: try Data(contentsOf: TestService.repoRoot.appendingPathComponent("data/parks/\(park).geojson")))
            let loadedBack = try ParkImporter().definition(from: Data(served.body.readableBytesView))
            #expect(loadedBack.park == shipped.park)
            #expect(loadedBack.rides == shipped.rides)
            #expect(Set(loadedBack.zones.map(\.id)) == Set(shipped.zones.map(\.id)))
        }
    }

    /// The issue's own park: a time zone that is not UTC, and a coaster whose type and cycle set
    /// its credits and cooldown.
    @Test func timeZoneTypeAndCycleSurviveTheRoundTrip() async throws {
        try await TestService.withService { service, client in
            let admin = try await service.admin("root", on: client)
            let put = try await client.execute(uri: "/v1/admin/parks/tiny-park", method: .put, headers: admin.auth,
                                               body: ByteBuffer(string: Self.tinyPark()))
            #expect(put.status == .created)
            let served = try await client.get("/v1/parks/tiny-park", as: admin)
            let again = try await client.execute(uri: "/v1/admin/parks/tiny-park", method: .put, headers: admin.auth, body: served.body)
            #expect(again.status == .ok)
            let definition = try ParkImporter().definition(from: Data(try await client.get("/v1/parks/tiny-park", as: admin).body.readableBytesView))
            #expect(definition.park.timeZone == "America/Chicago")
            let zoom = try #require(definition.rides.first)
            #expect(zoom.type == .coaster)
            #expect(zoom.cycleSeconds == 150)
            #expect(zoom.aloneHeightCm == 137)
            #expect(zoom.note == "Rebuilt 2024")
            let rides = try json(try await client.get("/v1/parks/tiny-park/rides", as: admin).body)["rides"] as? [[String: Any]]
            #expect(rides?.first?["cycleSeconds"] as? Int == 150)
            let snack = try #require(definition.zones.first { $0.kind == .poi })
            #expect(snack.category == "food")
        }
    }

    @Test func anUnknownPropertyIsAWarningNamingWhereItIs() async throws {
        try await TestService.withService { service, client in
            let admin = try await service.admin("root", on: client)
            let put = try await client.execute(uri: "/v1/admin/parks/tiny-park", method: .put, headers: admin.auth,
                                               body: ByteBuffer(string: Self.tinyPark(rideExtra: #","colour":"red""#)))
            #expect(put.status == .created)
            let warnings = try #require(json(put.body)["warnings"] as? [[String: Any]])
            #expect(warnings.count == 1)
            #expect(warnings.first?["pointer"] as? String == "/features/1/properties/colour")
            #expect(warnings.first?["feature"] as? Int == 1)
            #expect((warnings.first?["detail"] as? String)?.contains("unknown property \"colour\", ignored") == true)
        }
    }

    @Test func aParkWithoutATimeZoneIsRefused() async throws {
        try await TestService.withService { service, client in
            let admin = try await service.admin("root", on: client)
            for (timeZone, hint) in [("", "needs its IANA time zone"), (#","timeZone":"America/Chicago""#, "spelt \"timezone\""),
                                     (#","timezone":"Mars/Olympus""#, "expected an IANA time zone name")] {
                let put = try await client.execute(uri: "/v1/admin/parks/tiny-park", method: .put, headers: admin.auth,
                                                   body: ByteBuffer(string: Self.tinyPark(timeZone: timeZone)))
                let problem = try expectProblem(put, .unprocessableContent, .invalidParkFile)
                let errors = try #require(problem["errors"] as? [[String: Any]])
                #expect(errors.contains { $0["pointer"] as? String == "/features/0/properties/timezone" && ($0["detail"] as? String)?.contains(hint) == true },
                        "\(errors)")
            }
            #expect(try await client.get("/v1/parks/tiny-park", as: admin).status == .notFound)
        }
    }

    static func tinyPark(timeZone: String = #","timezone":"America/Chicago""#, rideExtra: String = "") -> String {
        """
        {"type":"FeatureCollection","features":[
        {"type":"Feature","properties":{"kind":"park","id":"tiny-park","name":"Tiny Park"\(timeZone)},
         "geometry":{"type":"Polygon","coordinates":[[[-97.0,32.0],[-96.99,32.0],[-96.99,32.01],[-97.0,32.01],[-97.0,32.0]]]}},
        {"type":"Feature","properties":{"kind":"ride","id":"zoom","name":"Zoom","type":"coaster","cycle_s":150,
         "height_min_cm":122,"height_alone_cm":137,"note":"Rebuilt 2024"\(rideExtra)},
         "geometry":{"type":"Point","coordinates":[-96.995,32.005]}},
        {"type":"Feature","properties":{"kind":"poi","id":"snacks","name":"Snacks","category":"food"},
         "geometry":{"type":"Point","coordinates":[-96.996,32.006]}}
        ]}
        """
    }
}
