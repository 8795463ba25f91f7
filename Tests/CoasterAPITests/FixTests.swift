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

@Suite("Fixes, check-ins and ride logs")
struct FixTests {
    static let millenniumForce = (lat: 41.481656, lon: -82.688132)

    /// Fixes every 10 s at walking pace from 300 m west of Millennium Force to its station.
    static func walkIn(endingAt end: Date) -> [[String: Any]] {
        let station = Coordinate(lat: millenniumForce.lat, lon: millenniumForce.lon)
        let start = Geodesy.destination(from: station, azimuth: 250, distance: 600)
        let steps = 43
        return (0...steps).map { i in
            let p = Geodesy.destination(from: start, azimuth: 70, distance: 600 * Double(i) / Double(steps))
            return fixJSON(p.lat, p.lon, at: end.addingTimeInterval(Double(i - steps) * 10), id: "walk-\(i)")
        }
    }

    @Test func walkIntoCedarPointCheckInRideTwiceWithTheCooldownSeeCounts() async throws {
        let clock = TestClock()
        try await TestService.withService(clock: clock) { _, client in
            let ann = try await client.register("ann")
            let result = try await client.postFixes(Self.walkIn(endingAt: clock.now()), as: ann)
            #expect(result["rejected"] as? Int == 0)
            let transitions = (result["results"] as? [[String: Any]] ?? []).flatMap { $0["transitions"] as? [[String: Any]] ?? [] }
            #expect(transitions.contains { $0["event"] as? String == "enter" && $0["park"] as? String == "cedar-point" && $0["zone"] == nil })
            #expect(transitions.contains { $0["event"] as? String == "enter" && $0["ride"] as? String == "cedar-point.millennium-force" })

            let visits = try json(try await client.get("/v1/checkins", as: ann).body)["visits"] as? [[String: Any]]
            #expect(visits?.first?["park"] as? String == "cedar-point")
            #expect(visits?.first?["how"] as? String == "automatic")
            #expect(visits?.first?["open"] as? Bool == true)

            let first = try await client.send(.post, "/v1/rides/cedar-point.millennium-force/rides", as: ann)
            #expect(first.status == .created)
            #expect(try json(first.body)["count"] as? Int == 1)
            // The first ride also earns badges: the id returned must still be the ride log's.
            let loggedID = try #require((try json(first.body)["log"] as? [String: Any])?["id"] as? Int)
            let listed = try json(try await client.get("/v1/me/rides", as: ann).body)["rides"] as? [[String: Any]]
            #expect(listed?.first?["id"] as? Int == loggedID)
            clock.advance(30)
            let tooSoon = try await client.send(.post, "/v1/rides/cedar-point.millennium-force/rides", as: ann)
            let problem = try expectProblem(tooSoon, .tooManyRequests, .rideCooldown)
            #expect(problem["reason"] as? String == "cooldown")
            #expect(Int(tooSoon.headers[.retryAfter] ?? "") == 120)
            clock.advance(120)
            let second = try await client.send(.post, "/v1/rides/cedar-point.millennium-force/rides", as: ann)
            #expect(second.status == .created)
            #expect(try json(second.body)["count"] as? Int == 2)

            let rides = try #require(try json(try await client.get("/v1/parks/cedar-point/rides", as: ann).body)["rides"] as? [[String: Any]])
            #expect(rides.first { $0["id"] as? String == "cedar-point.millennium-force" }?["myCount"] as? Int == 2)
            #expect(rides.first { $0["id"] as? String == "cedar-point.gatekeeper" }?["myCount"] as? Int == 0)
            let stats = try json(try await client.get("/v1/me/stats", as: ann).body)
            #expect(stats["totalRides"] as? Int == 2)
            #expect(stats["distinctRides"] as? Int == 1)
            #expect(stats["coasterCredits"] as? Int == 1)
            #expect(stats["parksVisited"] as? Int == 1)
            let history = try json(try await client.get("/v1/me/rides?limit=1", as: ann).body)["rides"] as? [[String: Any]]
            #expect(history?.count == 1)
            #expect(history?.first?["rideName"] as? String == "Millennium Force")

            // A spoofed jump to Texas a minute later is refused as too fast and moves nothing.
            clock.advance(60)
            let spoof = try await client.postFixes([fixJSON(29.5990, -98.6100, at: clock.now())], as: ann)
            let outcome = (spoof["results"] as? [[String: Any]])?.first
            #expect(outcome?["status"] as? String == "rejected")
            #expect(outcome?["reason"] as? String == "too_fast")
            let located = try json(try await client.get("/v1/checkins", as: ann).body)["visits"] as? [[String: Any]]
            #expect(located?.first?["open"] as? Bool == true)
        }
    }

    @Test func retriesWithTheSameIdAreIdempotent() async throws {
        try await TestService.withService { service, client in
            let ann = try await client.register("ann")
            let now = Date()
            let batch = [fixJSON(41.4817, -82.6881, at: now.addingTimeInterval(-20), id: "a"), fixJSON(41.4818, -82.6881, at: now, id: "b")]
            let first = try await client.postFixes(batch, as: ann)
            let again = try await client.postFixes(batch, as: ann)
            #expect(first["accepted"] as? Int == 2)
            #expect((again["results"] as? [[String: Any]])?.allSatisfy { $0["replayed"] as? Bool == true && $0["status"] as? String == "accepted" } == true)
            #expect(try await service.service.store.fixCount(of: UserID(ann.id)) == 2)
            // Same time and place without an id: a duplicate.
            let dup = try await client.postFixes([fixJSON(41.4818, -82.6881, at: now)], as: ann)
            #expect((dup["results"] as? [[String: Any]])?.first?["reason"] as? String == "duplicate")
        }
    }

    @Test func resultsComeBackInRequestOrderWithReasons() async throws {
        try await TestService.withApp { client in
            let ann = try await client.register("ann")
            let now = Date()
            let result = try await client.postFixes([
                fixJSON(41.4817, -82.6881, at: now),
                fixJSON(41.4817, -82.6881, accuracy: 500, at: now.addingTimeInterval(-5)),
                fixJSON(95, 0, at: now.addingTimeInterval(-4)),
                fixJSON(41.4817, -82.6881, at: now.addingTimeInterval(3600)),
                fixJSON(41.4817, -82.6880, at: now.addingTimeInterval(-600)),
            ], as: ann)
            let results = try #require(result["results"] as? [[String: Any]])
            #expect(results.map { $0["index"] as? Int } == [0, 1, 2, 3, 4])
            #expect(results.map { $0["reason"] as? String } == [nil, "accuracy_too_low", "invalid_coordinates", "in_future", nil])
            // Within a batch fixes are decided in recorded-time order, so the older one was current then.
            #expect(results[4]["current"] as? Bool == true)
            // A later request with an older fix is history only.
            let late = try await client.postFixes([fixJSON(41.4817, -82.6879, at: now.addingTimeInterval(-300))], as: ann)
            #expect((late["results"] as? [[String: Any]])?.first?["current"] as? Bool == false)
        }
    }

    @Test func badFixBodiesAre400WithAPointerAndBigBatches413() async throws {
        try await TestService.withApp { client in
            let ann = try await client.register("ann")
            let missing = try await client.execute(uri: "/v1/fixes", method: .post, headers: ann.auth,
                                                   body: ByteBuffer(string: #"[{"lat":1,"lon":2,"recordedAt":"2026-01-01T00:00:00Z"},{"lon":2}]"#))
            let problem = try expectProblem(missing, .badRequest, .malformedBody)
            #expect((problem["errors"] as? [[String: Any]])?.first?["pointer"] as? String == "/1/lat")
            let badTime = try await client.execute(uri: "/v1/fixes", method: .post, headers: ann.auth,
                                                   body: ByteBuffer(string: #"{"lat":1,"lon":2,"recordedAt":"yesterday"}"#))
            try expectProblem(badTime, .badRequest, .malformedBody)
            let many = (0..<101).map { fixJSON(41.48, -82.68, at: Date().addingTimeInterval(Double(-$0))) }
            let big = try await client.execute(uri: "/v1/fixes", method: .post, headers: ann.auth,
                                               body: ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: many)))
            try expectProblem(big, .contentTooLarge, .payloadTooLarge)
        }
    }

    /// A body that is not JSON is a 400 saying what is wrong and where (byte offset, line and
    /// column): `JSONDecoder` says only "The given data was not valid JSON." for a missing comma as
    /// for a number out of range.
    @Test func aBodyThatIsNotJSONSaysWhatAndWhere() async throws {
        try await TestService.withApp { client in
            let ann = try await client.register("ann")
            let time = #""recordedAt":"2026-01-01T00:00:00Z""#
            for (body, says) in [(#"{"lat":1 "lon":2,\#(time)}"#, #"not valid JSON: unexpected '"' at byte 9 (line 1, column 10)"#),
                                 (#"{"lat":1e400,"lon":2,\#(time)}"#, "not valid JSON: the number 1e400 is out of range at byte 7 (line 1, column 8)"),
                                 (#"[{"lat":1,"lon":-1e999,\#(time)}]"#, "not valid JSON: the number -1e999 is out of range at byte 16 (line 1, column 17)"),
                                 (#"{"lat":1,"lon":2,"#, "not valid JSON: unexpected end of the body at byte 17 (line 1, column 18)"),
                                 // JSON Foundation reads past: a trailing comma, a name twice (it kept the first).
                                 (#"{"lat":1,"lon":2,\#(time),}"#, "not valid JSON: a comma before the } at byte 52 (line 1, column 53)"),
                                 (#"[{"lat":1,"lon":2,\#(time)},]"#, "not valid JSON: a comma before the ] at byte 54 (line 1, column 55)"),
                                 (#"{"lat":1,"lon":2,"lat":3,\#(time)}"#,
                                  #"not valid JSON: the name "lat" twice in one object, again at byte 17 (line 1, column 18)"#)] {
                let response = try await client.execute(uri: "/v1/fixes", method: .post, headers: ann.auth, body: ByteBuffer(string: body))
                let problem = try expectProblem(response, .badRequest, .malformedBody)
                #expect(problem["detail"] as? String == says, "\(body)")
            }
            // Every route's body alike: a profile's, cut short, or over lines with a character of
            // two bytes and one of four before the fault (the column counts characters).
            let profile = try await client.execute(uri: "/v1/me", method: .patch, headers: ann.auth, body: ByteBuffer(string: #"{"displayName":"A" "#))
            let problem = try expectProblem(profile, .badRequest, .malformedBody)
            #expect(problem["detail"] as? String == "not valid JSON: unexpected end of the body at byte 19 (line 1, column 20)")
            #expect((problem["errors"] as? [[String: Any]])?.first?["pointer"] as? String == "")
            let lines = "{\n  \"displayName\": \"Zoë 🎢\",\n  \"bio\": \"x\" \"y\"\n}"
            let multiline = try await client.execute(uri: "/v1/me", method: .patch, headers: ann.auth, body: ByteBuffer(string: lines))
            #expect(try expectProblem(multiline, .badRequest, .malformedBody)["detail"] as? String
                == #"not valid JSON: unexpected '"' at byte 45 (line 3, column 14)"#)
            // A repeated name is refused before the body's shape is judged (here a check-in's).
            let twice = try await client.execute(uri: "/v1/checkins", method: .post, headers: ann.auth,
                                                 body: ByteBuffer(string: #"{"parkId":"nowhere","parkId":"cedar-point"}"#))
            let repeated = try expectProblem(twice, .badRequest, .malformedBody)
            #expect(repeated["detail"] as? String == #"not valid JSON: the name "parkId" twice in one object, again at byte 20 (line 1, column 21)"#)
        }
    }

    @Test func fixesAreRateLimitedPerUser() async throws {
        // A stopped clock: the bucket does not refill while the test runs, however slow the machine.
        let clock = TestClock()
        try await TestService.withService(clock: clock) { _, client in
            let ann = try await client.register("ann")
            var statuses: [HTTPResponse.Status] = []
            for i in 0..<40 {
                let body = ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: fixJSON(41.48, -82.68, at: clock.now().addingTimeInterval(Double(-i)))))
                statuses.append(try await client.execute(uri: "/v1/fixes", method: .post, headers: ann.auth, body: body).status)
            }
            // The default burst is 30 requests (6 s at 5 a second); every one after it is refused.
            #expect(Array(statuses.prefix(30)) == Array(repeating: .ok, count: 30))
            #expect(Array(statuses.dropFirst(30)) == Array(repeating: .tooManyRequests, count: 10))
        }
    }

    @Test func explicitCheckinsNeedAFreshFixInThePark() async throws {
        let clock = TestClock()
        try await TestService.withService(clock: clock) { _, client in
            let ann = try await client.register("ann")
            let refused = try await client.send(.post, "/v1/checkins", as: ann, json: ["parkId": "cedar-point"])
            #expect(try expectProblem(refused, .unprocessableContent, .checkinRefused)["reason"] as? String == "no_recent_fix")
            _ = try await client.postFixes([fixJSON(41.4561, -82.7117, at: clock.now())], as: ann)
            let outside = try await client.send(.post, "/v1/checkins", as: ann, json: ["parkId": "cedar-point"])
            #expect(try expectProblem(outside, .unprocessableContent, .checkinRefused)["reason"] as? String == "not_in_park")
            clock.advance(600)
            _ = try await client.postFixes([fixJSON(Self.millenniumForce.lat, Self.millenniumForce.lon, at: clock.now())], as: ann)
            // The fix itself entered the park (automatic visit); an explicit check-in finds it open.
            let open = try await client.send(.post, "/v1/checkins", as: ann, json: ["parkId": "cedar-point"])
            #expect(open.status == .ok)
            #expect(try json(open.body)["how"] as? String == "automatic")
            try expectProblem(try await client.send(.post, "/v1/checkins", as: ann, json: ["parkId": "atlantis"]), .notFound, .notFound)
            clock.advance(11 * 60)
            let kings = try await client.send(.post, "/v1/checkins", as: ann, json: ["parkId": "kings-island"])
            #expect(try expectProblem(kings, .unprocessableContent, .checkinRefused)["reason"] as? String == "no_recent_fix")
        }
    }

    @Test func rideLogsNeedAVisitAndAListedOperatingRide() async throws {
        try await TestService.withApp { client in
            let ann = try await client.register("ann")
            let notIn = try await client.send(.post, "/v1/rides/cedar-point.millennium-force/rides", as: ann)
            #expect(try expectProblem(notIn, .unprocessableContent, .rideRefused)["reason"] as? String == "not_checked_in")
            try expectProblem(try await client.send(.post, "/v1/rides/cedar-point.nothing/rides", as: ann), .notFound, .noSuchRide)
            _ = try await client.postFixes([fixJSON(41.4844, -82.6889, at: Date())], as: ann)
            let closed = try await client.send(.post, "/v1/rides/cedar-point.snake-river-falls/rides", as: ann)
            #expect(try expectProblem(closed, .unprocessableContent, .rideRefused)["reason"] as? String == "ride_not_operating")
        }
    }
}
