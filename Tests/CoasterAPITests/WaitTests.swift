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

@Suite("Wait reports and the wait board")
struct WaitAPITests {
    static let station = Coordinate(lat: 41.481656, lon: -82.688132)

    /// A user standing in Millennium Force's line (inside Cedar Point, checked in by the fix).
    static func queuer(_ name: String, _ client: some TestClientProtocol, at clock: TestClock, offset: Double) async throws -> TestUser {
        let user = try await client.register(name)
        let p = Geodesy.destination(from: Self.station, azimuth: 45, distance: offset)
        _ = try await client.postFixes([fixJSON(p.lat, p.lon, accuracy: 6, at: clock.now())], as: user)
        return user
    }

    static func board(_ client: some TestClientProtocol, as user: TestUser) async throws -> [String: Any] {
        let rides = try #require(try json(try await client.get("/v1/parks/cedar-point/waits", as: user).body)["rides"] as? [[String: Any]])
        return try #require(rides.first { $0["ride"] as? String == "cedar-point.millennium-force" })
    }

    @Test func twoInTheQueueReportAndAThirdsOutlierBarelyMovesTheEstimate() async throws {
        let clock = TestClock()
        try await TestService.withService(clock: clock) { _, client in
            let ann = try await Self.queuer("ann", client, at: clock, offset: 10)
            let bob = try await Self.queuer("bob", client, at: clock, offset: 20)
            let troll = try await Self.queuer("troll", client, at: clock, offset: 15)
            #expect((try await Self.board(client, as: ann)["estimate"] as? [String: Any])?["reports"] as? Int == 0)
            #expect(try await client.send(.post, "/v1/rides/cedar-point.millennium-force/waits", as: ann, json: ["minutes": 45]).status == .created)
            // The board kept a moment ago gives way to the report at once, with no time passing.
            #expect((try await Self.board(client, as: ann)["estimate"] as? [String: Any])?["reports"] as? Int == 1)
            clock.advance(60)
            let second = try await client.send(.post, "/v1/rides/cedar-point.millennium-force/waits", as: bob, json: ["minutes": 50])
            #expect(second.status == .created)
            let before = try #require((try json(second.body)["estimate"] as? [String: Any])?["minutes"] as? Double)
            clock.advance(60)
            let outlier = try await client.send(.post, "/v1/rides/cedar-point.millennium-force/waits", as: troll, json: ["minutes": 300])
            #expect(outlier.status == .created, "\(String(buffer: outlier.body))")
            let after = try #require((try json(outlier.body)["estimate"] as? [String: Any])?["minutes"] as? Double)
            #expect(abs(after - before) <= 5, "the outlier moved the estimate from \(before) to \(after)")

            let row = try await Self.board(client, as: ann)
            let estimate = try #require(row["estimate"] as? [String: Any])
            #expect(estimate["status"] as? String == "estimated")
            #expect(estimate["reports"] as? Int == 3, "\(row)")
            let (low, minutes, high) = (estimate["low"] as? Double ?? -1, estimate["minutes"] as? Double ?? -1, estimate["high"] as? Double ?? -1)
            #expect(low <= minutes && minutes <= high && low >= 40 && minutes <= 50)
            #expect(estimate["basis"] as? [String] == ["crowd"])
            // With no evidence for a ride, the board says unknown rather than guess.
            let rides = try #require(try json(try await client.get("/v1/parks/cedar-point/waits", as: ann).body)["rides"] as? [[String: Any]])
            #expect((rides.first { $0["ride"] as? String == "cedar-point.gatekeeper" }?["estimate"] as? [String: Any])?["status"] as? String == "unknown")

            // Reporting again within 15 minutes: 429 with the reason; after the window, fine.
            let again = try await client.send(.post, "/v1/rides/cedar-point.millennium-force/waits", as: ann, json: ["minutes": 40])
            #expect(try expectProblem(again, .tooManyRequests, .reportRefused)["reason"] as? String == "too_soon")
            #expect(Int(again.headers[.retryAfter] ?? "") ?? 0 > 0)
            // Evidence ages out: two hours after the last report, with no posted wait, the board says unknown.
            clock.advance(2 * 3600 + 60)
            #expect((try await Self.board(client, as: ann)["estimate"] as? [String: Any])?["status"] as? String == "unknown")
        }
    }

    @Test func reportsNeedAVisitAFreshFixNearTheRideAndAPlausibleWait() async throws {
        let clock = TestClock()
        try await TestService.withService(clock: clock) { _, client in
            let away = try await client.register("away")
            let r1 = try await client.send(.post, "/v1/rides/cedar-point.millennium-force/waits", as: away, json: ["minutes": 30])
            #expect(try expectProblem(r1, .unprocessableContent, .reportRefused)["reason"] as? String == "not_checked_in")
            let gemini = try await client.register("gemini")
            _ = try await client.postFixes([fixJSON(41.4822, -82.6835, at: clock.now())], as: gemini)
            let r2 = try await client.send(.post, "/v1/rides/cedar-point.millennium-force/waits", as: gemini, json: ["minutes": 30])
            #expect(try expectProblem(r2, .unprocessableContent, .reportRefused)["reason"] as? String == "not_near_ride")
            clock.advance(11 * 60)
            let r3 = try await client.send(.post, "/v1/rides/cedar-point.gemini/waits", as: gemini, json: ["minutes": 30])
            #expect(try expectProblem(r3, .unprocessableContent, .reportRefused)["reason"] as? String == "no_recent_fix")
            let r4 = try await client.send(.post, "/v1/rides/cedar-point.gemini/waits", as: gemini, json: ["minutes": 301])
            try expectProblem(r4, .badRequest, .invalidField)
            try expectProblem(try await client.send(.post, "/v1/rides/cedar-point.nope/waits", as: gemini, json: ["minutes": 3]), .notFound, .noSuchRide)
        }
    }

    @Test func rideStatusReportsReachTheBoard() async throws {
        let clock = TestClock()
        try await TestService.withService(clock: clock) { _, client in
            let a = try await Self.queuer("ann", client, at: clock, offset: 10)
            let b = try await Self.queuer("bob", client, at: clock, offset: 12)
            let first = try await client.send(.post, "/v1/rides/cedar-point.millennium-force/status", as: a, json: ["status": "down"])
            #expect(first.status == .created, "\(String(buffer: first.body))")
            let second = try await client.send(.post, "/v1/rides/cedar-point.millennium-force/status", as: b, json: ["status": "down"])
            #expect(second.status == .created)
            #expect(try await Self.board(client, as: a)["condition"] as? String == "down")
            try expectProblem(try await client.send(.post, "/v1/rides/cedar-point.millennium-force/status", as: a, json: ["status": "on fire"]),
                              .badRequest, .malformedBody)
        }
    }

    @Test func postedWaitsAreAPriorWithTheLearnedRatio() async throws {
        let clock = TestClock()
        try await TestService.withService(clock: clock) { service, client in
            let admin = try await service.admin("root", on: client)
            let now = clock.now()
            let rows = "ride,at,minutes\nmillennium-force,\(now.addingTimeInterval(-600).formatted(.iso8601)),60\ngatekeeper,\(now.formatted(.iso8601)),-999\n"
            var headers = admin.auth
            // Not CSV, nor JSON: refused, nothing loaded.
            headers[.contentType] = "text/plain"
            let plain = try await client.execute(uri: "/v1/admin/parks/cedar-point/posted-waits", method: .put, headers: headers, body: ByteBuffer(string: rows))
            let refusal = try expectProblem(plain, .unsupportedMediaType, .unsupportedMediaType)
            #expect(refusal["detail"] as? String == "The body is text/plain; this route reads text/csv or application/json.")
            #expect((try await Self.board(client, as: admin)["posted"]) == nil)
            headers[.contentType] = "Text/CSV; charset=utf-8"
            let loaded = try await client.execute(uri: "/v1/admin/parks/cedar-point/posted-waits", method: .put, headers: headers, body: ByteBuffer(string: rows))
            #expect(loaded.status == .ok)
            #expect(try json(loaded.body)["loaded"] as? Int == 2)
            let row = try await Self.board(client, as: admin)
            #expect((row["posted"] as? [String: Any])?["minutes"] as? Double == 60)
            // No learned ratio yet (fewer than 10 pairs): the prior is the posted wait itself.
            #expect((row["estimate"] as? [String: Any])?["minutes"] as? Double == 60)
            #expect((row["estimate"] as? [String: Any])?["basis"] as? [String] == ["posted"])
            let rides = try #require(try json(try await client.get("/v1/parks/cedar-point/waits", as: admin).body)["rides"] as? [[String: Any]])
            #expect((rides.first { $0["ride"] as? String == "cedar-point.gatekeeper" }?["posted"] as? [String: Any])?["down"] as? Bool == true)

            let unknownRide = try await client.send(.put, "/v1/admin/parks/cedar-point/posted-waits", as: admin,
                                                    json: ["not": "an array"])
            try expectProblem(unknownRide, .unprocessableContent, .invalidPostedWaits)
            let json2 = try JSONSerialization.data(withJSONObject: [["ride": "no-such-ride", "at": now.formatted(.iso8601), "minutes": 5]])
            let bad = try await client.execute(uri: "/v1/admin/parks/cedar-point/posted-waits", method: .put, headers: admin.auth, body: ByteBuffer(bytes: json2))
            let problem = try expectProblem(bad, .unprocessableContent, .invalidPostedWaits)
            #expect((problem["errors"] as? [[String: Any]])?.first?["pointer"] as? String == "/0/ride")
        }
    }

    /// A park with a queue zone: walking from the queue into the ride's zone is a timed wait.
    @Test func aTimedQueueIsAMeasuredWait() async throws {
        let clock = TestClock()
        try await TestService.withService(clock: clock) { service, client in
            let admin = try await service.admin("root", on: client)
            var document = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: TestService.repoRoot
                .appendingPathComponent("data/parks/cedar-point.geojson"))) as? [String: Any])
            // A 30 m × 30 m queue pen 60 m north-east of the station.
            let c = Geodesy.destination(from: Self.station, azimuth: 45, distance: 60)
            let (dLat, dLon) = Geodesy.degreesPerMetre(at: c.lat)
            let ring = [(-15.0, -15.0), (15, -15), (15, 15), (-15, 15), (-15, -15)].map { [c.lon + $0.0 * dLon, c.lat + $0.1 * dLat] }
            var features = try #require(document["features"] as? [[String: Any]])
            features.append(["type": "Feature", "properties": ["kind": "queue", "id": "millennium-force-queue", "name": "Millennium Force queue",
                                                               "ride": "millennium-force"],
                             "geometry": ["type": "Polygon", "coordinates": [ring]]])
            document["features"] = features
            #expect(try await client.send(.put, "/v1/admin/parks/cedar-point", as: admin, json: document).status == .ok)

            let rider = try await client.register("rider")
            _ = try await client.postFixes([fixJSON(c.lat, c.lon, accuracy: 4, at: clock.now())], as: rider)
            clock.advance(35 * 60)
            let result = try await client.postFixes([fixJSON(Self.station.lat, Self.station.lon, accuracy: 4, at: clock.now())], as: rider)
            #expect(result["accepted"] as? Int == 1)
            let estimate = try #require(try await Self.board(client, as: rider)["estimate"] as? [String: Any])
            #expect(estimate["minutes"] as? Double == 35)
            #expect(estimate["basis"] as? [String] == ["measured"])
            let history = try json(try await client.get("/v1/rides/cedar-point.millennium-force/waits/history?bucket=15m&hours=2", as: rider).body)
            let buckets = try #require(history["buckets"] as? [[String: Any]])
            #expect(buckets.contains { $0["reportedMedian"] as? Double == 35 })
            try expectProblem(try await client.get("/v1/rides/cedar-point.millennium-force/waits/history?bucket=7m", as: rider), .badRequest, .invalidParameter)
        }
    }
}
