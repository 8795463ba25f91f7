import CoasterAPI
import CoasterCore
import CoasterHTTP
import CoasterService
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import HummingbirdWSTesting
import HummingbirdWebSocket
import NIOWebSocket
import Testing
import WSClient

/// Challenges over HTTP (docs: Challenges): bad input, membership, entries, ranks and results.
/// The whole story with live pushes is ``ChallengeLiveTests``.
@Suite("Challenges")
struct ChallengeTests {
    static func iso(_ date: Date) -> String { date.formatted(.iso8601) }

    /// A challenge body from `start` for `days`, with `fields` over it.
    static func challenge(_ name: String, unit: String = "rides", start: Date, days: Double = 2, _ fields: [String: Any] = [:]) -> [String: Any] {
        var body: [String: Any] = ["name": name, "unit": unit, "start": Self.iso(start), "end": Self.iso(start.addingTimeInterval(days * 86_400))]
        body.merge(fields) { $1 }
        return body
    }

    /// Creates a challenge as `user`; returns its JSON (and expects 201 with its Location).
    static func create(_ client: some TestClientProtocol, as user: TestUser, _ body: [String: Any],
                       sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: Any] {
        let r = try await client.send(.post, "/v1/challenges", as: user, json: body)
        #expect(r.status == .created, "\(String(buffer: r.body))", sourceLocation: sourceLocation)
        let object = try json(r.body)
        #expect(r.headers[.location] == "/v1/challenges/\(object["id"] as? Int ?? 0)", sourceLocation: sourceLocation)
        return object
    }

    static func ids(_ response: TestResponse, _ key: String = "challenges") throws -> [Int] {
        (try json(response.body)[key] as? [[String: Any]] ?? []).compactMap { $0["id"] as? Int }
    }

    /// Ranking lines as (username, rank, progress).
    static func lines(_ ranking: [String: Any]) -> [(String, Int, Double)] {
        (ranking["entries"] as? [[String: Any]] ?? []).map {
            (($0["user"] as? [String: Any])?["username"] as? String ?? "", $0["rank"] as? Int ?? 0, ($0["progress"] as? NSNumber)?.doubleValue ?? -1)
        }
    }

    /// The problem's body pointers.
    static func pointers(_ problem: [String: Any]) -> [String] {
        (problem["errors"] as? [[String: Any]] ?? []).compactMap { $0["pointer"] as? String }
    }

    /// Every bad body is a problem naming its member, and nothing of it is written.
    @Test func badInputIsRefusedNamingTheField() async throws {
        let clock = TestClock()
        try await TestService.withService(clock: clock) { _, client in
            let ann = try await client.register("ann")
            let bob = try await client.register("bob")
            let stranger = try await client.register("stranger")
            try await client.befriend(ann, bob)
            let now = clock.now()
            let cases: [([String: Any], String)] = [
                (["end": Self.iso(now.addingTimeInterval(-3600))], "/end"),
                (["end": Self.iso(now.addingTimeInterval(400 * 86_400))], "/end"),
                (["unit": "laps"], "/unit"),
                (["unit": "ride:cedar-point.no-such-ride"], "/unit"),
                (["parks": ["cedar-point", "atlantis"]], "/parks/1"),
                (["unit": "custom", "unitLabel": String(repeating: "x", count: 300)], "/unitLabel"),
                (["unit": "custom"], "/unitLabel"),
                (["unitLabel": "laps"], "/unitLabel"),
                (["name": ""], "/name"),
                (["visibility": "friends"], "/visibility"),
                (["unit": "parks", "evidence": "at-ride"], "/evidence"),
                (["target": -1], "/target"),
            ]
            for (fields, pointer) in cases {
                let r = try await client.send(.post, "/v1/challenges", as: ann, json: Self.challenge("Laps", start: now, fields))
                let problem = try expectProblem(r, .unprocessableContent, .invalidChallenge)
                #expect(Self.pointers(problem).contains(pointer), "\(fields): \(problem)")
            }
            var headers = ann.auth
            headers[.contentType] = "application/json"
            let broken = try await client.execute(uri: "/v1/challenges", method: .post, headers: headers, body: ByteBuffer(string: #"{"name": "#))
            try expectProblem(broken, .badRequest, .malformedBody)
            let badTime = try await client.send(.post, "/v1/challenges", as: ann, json: Self.challenge("Laps", start: now, ["start": "yesterday"]))
            #expect(Self.pointers(try expectProblem(badTime, .badRequest, .malformedBody)) == ["/start"])
            for status in ["ongoing", "upcoming", "completed"] {
                #expect(try Self.ids(try await client.get("/v1/challenges?status=\(status)", as: ann)).isEmpty, "a refused body left a challenge")
            }
            try expectProblem(try await client.get("/v1/challenges?status=lost", as: ann), .badRequest, .invalidParameter)

            let cakes = try await Self.create(client, as: ann, Self.challenge("Cakes", unit: "custom", start: now, ["unitLabel": "cakes"]))
            let id = try #require(cakes["id"] as? Int)
            for amount in [0, -1, 1e7] {
                let r = try await client.send(.post, "/v1/challenges/\(id)/entries", as: ann, json: ["amount": amount])
                #expect(Self.pointers(try expectProblem(r, .unprocessableContent, .invalidChallenge)) == ["/amount"])
            }
            for raw in [#"{"note": "\"}", "amount": 1e400}"#, #"{"amount": "NaN"}"#] {
                let r = try await client.execute(uri: "/v1/challenges/\(id)/entries", method: .post, headers: headers, body: ByteBuffer(string: raw))
                #expect(Self.pointers(try expectProblem(r, .badRequest, .malformedBody)) == ["/amount"], "\(raw)")
            }
            let longNote = try await client.send(.post, "/v1/challenges/\(id)/entries", as: ann, json: ["amount": 1, "note": String(repeating: "n", count: 281)])
            #expect(Self.pointers(try expectProblem(longNote, .unprocessableContent, .invalidChallenge)) == ["/note"])
            let bobsPhoto = try #require(try json(try await PhotoTests.upload(client, "coaster.png", as: bob).body)["id"] as? Int)
            let notMine = try await client.send(.post, "/v1/challenges/\(id)/entries", as: ann, json: ["amount": 1, "photoId": bobsPhoto])
            #expect(Self.pointers(try expectProblem(notMine, .unprocessableContent, .invalidChallenge)) == ["/photoId"])

            let invitations: [([Int64], String)] = [
                ([bob.id, stranger.id], "/userIds/1"), (Array(1...500), "/userIds"), ([], "/userIds"), ([bob.id, bob.id], "/userIds/1"),
            ]
            for (users, pointer) in invitations {
                let r = try await client.send(.post, "/v1/challenges/\(id)/invitations", as: ann, json: ["userIds": users])
                #expect(Self.pointers(try expectProblem(r, .unprocessableContent, .invalidChallenge)) == [pointer], "\(users.prefix(3))")
            }
            // Nothing half-written: no entry, no invitation (not even Bob's, named before the stranger).
            let ranking = try json(try await client.get("/v1/challenges/\(id)/ranking", as: ann).body)
            #expect(((ranking["me"] as? [String: Any])?["progress"] as? NSNumber)?.doubleValue == 0)
            #expect(try Self.ids(try await client.get("/v1/challenges?status=invited", as: bob)).isEmpty)
            try expectProblem(try await client.get("/v1/challenges/\(id)", as: bob), .notFound, .noSuchChallenge)
            try expectProblem(try await client.get("/v1/challenges/abc", as: ann), .badRequest, .invalidParameter)
            let both = try await client.send(.patch, "/v1/challenges/\(id)", as: ann, json: ["name": "Pies", "completed": true])
            #expect(Self.pointers(try expectProblem(both, .unprocessableContent, .invalidChallenge)) == ["/completed"])
            #expect(try json(try await client.get("/v1/challenges/\(id)", as: ann).body)["name"] as? String == "Cakes")

            // Creations are rate-limited per user: a burst, then 429 with Retry-After.
            var limited: TestResponse?
            for n in 0..<25 where limited == nil {
                let r = try await client.send(.post, "/v1/challenges", as: bob, json: Self.challenge("Race \(n)", start: now))
                if r.status == .tooManyRequests { limited = r }
            }
            let refused = try #require(limited, "25 creations at once and none refused")
            try expectProblem(refused, .tooManyRequests, .tooManyRequests)
            #expect(refused.headers[.retryAfter] != nil)
        }
    }

    /// Edit before the start, invitations declined and renewed, entries and their ranks, leaving,
    /// likes, ending early, winners and the lists, deleting.
    @Test func aChallengeFromInvitationToWinners() async throws {
        let clock = TestClock()
        try await TestService.withService(clock: clock) { s, client in
            let ann = try await client.register("ann")
            let bob = try await client.register("bob")
            try await client.befriend(ann, bob)
            let laps = try await Self.create(client, as: ann, Self.challenge(
                "Laps of the midway", unit: "custom", start: clock.now().addingTimeInterval(86_400), ["unitLabel": "laps"]))
            let id = try #require(laps["id"] as? Int)
            #expect(laps["status"] as? String == "upcoming")
            #expect(try Self.ids(try await client.get("/v1/challenges?status=upcoming", as: ann)) == [id])
            let renamed = try await client.send(.patch, "/v1/challenges/\(id)", as: ann, json: ["name": "Midway laps"])
            #expect(try json(renamed.body)["name"] as? String == "Midway laps")

            _ = try await client.send(.post, "/v1/challenges/\(id)/invitations", as: ann, json: ["userIds": [bob.id]])
            #expect(try json(try await client.get("/v1/challenges/\(id)", as: bob).body)["membership"] as? String == "invited")
            try expectProblem(try await client.send(.patch, "/v1/challenges/\(id)", as: bob, json: ["name": "Mine"]), .forbidden, .forbidden)
            #expect(try await client.send(.post, "/v1/challenges/\(id)/decline", as: bob).status == .noContent)
            try expectProblem(try await client.get("/v1/challenges/\(id)", as: bob), .notFound, .noSuchChallenge)
            let again = try await client.send(.post, "/v1/challenges/\(id)/invitations", as: ann, json: ["userIds": [bob.id]])
            #expect((try json(again.body)["invited"] as? [Any])?.count == 1, "one who declined is invited again")
            #expect(try await client.send(.post, "/v1/challenges/\(id)/join", as: bob).status == .ok)
            let early = try await client.send(.post, "/v1/challenges/\(id)/entries", as: bob, json: ["amount": 1])
            #expect(try expectProblem(early, .conflict, .challengeRefused)["reason"] as? String == "not_started")

            clock.advance(86_400 + 60)
            let late = try await client.send(.patch, "/v1/challenges/\(id)", as: ann, json: ["name": "Too late"])
            #expect(try expectProblem(late, .conflict, .challengeRefused)["reason"] as? String == "already_started")
            func enter(_ user: TestUser, _ amount: Double) async throws -> [String: Any] {
                let r = try await client.send(.post, "/v1/challenges/\(id)/entries", as: user, json: ["amount": amount])
                #expect(r.status == .created, "\(String(buffer: r.body))")
                clock.advance(1)
                return try json(r.body)
            }
            let bobs = try await enter(bob, 3)
            #expect(try await enter(ann, 3)["rank"] as? Int == 2, "level, but Bob reached 3 first")
            #expect(try await enter(ann, 1)["rank"] as? Int == 1)
            let view = try json(try await client.get("/v1/challenges/\(id)/ranking", as: bob).body)
            #expect(Self.lines(view).map(\.0) == ["ann", "bob"])
            #expect(Self.lines(view).map(\.2) == [4, 3])
            #expect((view["me"] as? [String: Any])?["rank"] as? Int == 2)
            #expect((view["entries"] as? [[String: Any]])?.first?["share"] == nil, "no target, no share")
            let entryID = try #require((bobs["entry"] as? [String: Any])?["id"] as? Int)
            #expect(try await client.send(.delete, "/v1/challenges/\(id)/entries/\(entryID)", as: bob).status == .noContent)
            try expectProblem(try await client.send(.delete, "/v1/challenges/\(id)/entries/\(entryID)", as: bob), .notFound, .noSuchEntry)
            let afterDelete = try json(try await client.get("/v1/challenges/\(id)/ranking", as: bob).body)
            #expect(((afterDelete["me"] as? [String: Any])?["progress"] as? NSNumber)?.doubleValue == 0)

            let liked = try json(try await client.send(.put, "/v1/challenges/\(id)/like", as: bob).body)
            #expect(liked["liked"] as? Bool == true && liked["likes"] as? Int == 1)
            #expect(try json(try await client.send(.delete, "/v1/challenges/\(id)/like", as: bob).body)["likes"] as? Int == 0)
            let authorLeaves = try await client.send(.delete, "/v1/challenges/\(id)/members/me", as: ann)
            #expect(try expectProblem(authorLeaves, .conflict, .challengeRefused)["reason"] as? String == "author_cannot_leave")

            // A counted challenge takes no hand entries.
            let counted = try await Self.create(client, as: ann, Self.challenge("Rides", start: clock.now()))
            let notCustom = try await client.send(.post, "/v1/challenges/\(counted["id"] as? Int ?? 0)/entries", as: ann, json: ["amount": 1])
            #expect(try expectProblem(notCustom, .conflict, .challengeRefused)["reason"] as? String == "not_custom")

            // Ended early by its author: completed, and (hand entries) final at once, Ann the winner.
            let ended = try await client.send(.patch, "/v1/challenges/\(id)", as: ann, json: ["completed": true])
            #expect(try json(ended.body)["status"] as? String == "completed", "\(String(buffer: ended.body))")
            clock.advance(1)
            try await s.service.housekeeping.settleChallenges()
            let final = try json(try await client.get("/v1/challenges/\(id)", as: bob).body)
            #expect(final["final"] as? Bool == true)
            #expect((final["winners"] as? [[String: Any]])?.compactMap { $0["username"] as? String } == ["ann"])
            #expect(try Self.ids(try await client.get("/v1/challenges?status=won", as: ann)) == [id])
            #expect(try Self.ids(try await client.get("/v1/challenges?status=completed", as: bob)) == [id])
            #expect(try Self.ids(try await client.get("/v1/challenges?status=won", as: bob)).isEmpty)
            let afterEnd = try await client.send(.post, "/v1/challenges/\(id)/entries", as: bob, json: ["amount": 1])
            #expect(try expectProblem(afterEnd, .conflict, .challengeRefused)["reason"] as? String == "ended")
            let badges = try json(try await client.get("/v1/me/badges", as: ann).body)
            #expect((badges["earned"] as? [[String: Any]])?.contains { $0["id"] as? String == "challenge-won" } == true)
            #expect(try json(try await client.get("/v1/me/stats", as: ann).body)["challengesWon"] as? Int == 1)
            #expect(try json(try await client.get("/v1/me/stats", as: bob).body)["challengesWon"] as? Int == 0)

            #expect(try await client.send(.post, "/v1/challenges/\(counted["id"] as? Int ?? 0)/join", as: bob).status.code == 404)
            #expect(try await client.send(.delete, "/v1/challenges/\(id)", as: ann).status == .noContent)
            try expectProblem(try await client.get("/v1/challenges/\(id)", as: ann), .notFound, .noSuchChallenge)
            #expect(try Self.ids(try await client.get("/v1/challenges?status=completed", as: bob)).isEmpty)
        }
    }
}

/// The feature's whole story over real sockets, with a live connection: run with the live suites
/// (tools/test), apart from the rest.
@Suite("Challenges live", .timeLimit(.minutes(5)))
struct ChallengeLiveTests {
    /// Issue 47's "done means": two friends walk into Cedar Point and join "most rides this weekend
    /// at Cedar Point"; validated ride logs move their own progress at once and live, the others'
    /// view after the location time-to-live; a ride log with no visit is refused and moves
    /// nothing; a public custom challenge takes a real JPEG as proof, served without its GPS; a
    /// stranger gets 404 for the private one and finds the public one by keyword and in trending.
    @Test func twoFriendsRaceAtCedarPoint() async throws {
        var location = LocationPolicy()
        location.liveHeartbeat = .milliseconds(200)
        let clock = TestClock()
        let s = try await TestService(location: location, clock: clock)
        defer { s.remove() }
        try await s.app().test(.live) { client in
            let ann = try await client.register("ann")
            let bob = try await client.register("bob")
            let carl = try await client.register("carl")
            let dora = try await client.register("dora")
            try await client.befriend(ann, bob)
            try await client.befriend(ann, carl)
            // Ann and Bob walk in to Millennium Force's station; Carl stays at home.
            _ = try await client.postFixes(FixTests.walkIn(endingAt: clock.now()), as: ann)
            _ = try await client.postFixes(FixTests.walkIn(endingAt: clock.now()), as: bob)

            let rides = try await ChallengeTests.create(client, as: ann, ChallengeTests.challenge(
                "Most rides this weekend at Cedar Point", start: clock.now(),
                ["description": "Every validated ride counts.", "parks": ["cedar-point"], "target": 4]))
            let id = try #require(rides["id"] as? Int)
            #expect(rides["visibility"] as? String == "private")
            #expect(rides["status"] as? String == "ongoing")
            #expect(rides["membership"] as? String == "member")
            #expect(rides["participants"] as? Int == 1)
            let invited = try await client.send(.post, "/v1/challenges/\(id)/invitations", as: ann, json: ["userIds": [bob.id, carl.id]])
            #expect(invited.status == .ok)
            #expect(Set((try json(invited.body)["invited"] as? [[String: Any]] ?? []).compactMap { $0["username"] as? String }) == ["bob", "carl"])
            #expect(try ChallengeTests.ids(try await client.get("/v1/challenges?status=invited", as: bob)) == [id])
            for friend in [bob, carl] {
                let joined = try await client.send(.post, "/v1/challenges/\(id)/join", as: friend)
                #expect(try json(joined.body)["membership"] as? String == "member")
            }
            // To a stranger the private challenge does not exist.
            for path in ["", "/ranking", "/gallery"] {
                try expectProblem(try await client.get("/v1/challenges/\(id)\(path)", as: dora), .notFound, .noSuchChallenge)
            }
            try expectProblem(try await client.send(.post, "/v1/challenges/\(id)/join", as: dora), .notFound, .noSuchChallenge)

            // The funnel cakes: public, by hand, shown at once.
            let funnel = try await ChallengeTests.create(client, as: ann, ChallengeTests.challenge(
                "Funnel cakes at Cedar Point", unit: "custom", start: clock.now(), days: 30,
                ["unitLabel": "funnel cakes", "description": "Who eats more funnel cakes?", "visibility": "public", "parks": ["cedar-point"]]))
            let funnelID = try #require(funnel["id"] as? Int)
            #expect(funnel["unitLabel"] as? String == "funnel cakes")
            #expect(try await client.send(.post, "/v1/challenges/\(funnelID)/join", as: bob).status == .ok)

            try await client.ws("/v1/live", configuration: .init(additionalHeaders: [.authorization: "Bearer \(ann.token)"])) { inbound, outbound, _ in
                var messages = inbound.messages(maxSize: 1 << 16).makeAsyncIterator()
                guard case .text? = try await messages.next() else { Issue.record("no hello"); return }
                clock.advance(60)
                #expect(try await RideEvidenceTests.log(client, "millennium-force", as: ann).status == .created)
                let mine = try #require(try await LiveTests.nextEvent(&messages))
                #expect(mine["type"] as? String == "challenge")
                #expect((mine["challenge"] as? [String: Any])?["id"] as? Int == id)
                #expect((mine["user"] as? [String: Any])?["username"] as? String == "ann")
                #expect((mine["progress"] as? NSNumber)?.doubleValue == 1)
                #expect(mine["rank"] as? Int == 1)

                // Bob's ride is his to see for now; Carl's, with no visit behind it, is refused.
                clock.advance(1)
                #expect(try await RideEvidenceTests.log(client, "millennium-force", as: bob).status == .created)
                let refused = try await RideEvidenceTests.log(client, "millennium-force", as: carl)
                #expect(try expectProblem(refused, .unprocessableContent, .rideRefused)["reason"] as? String == "not_checked_in")
                s.service.live.sendForTesting(#"{"type":"sentinel"}"#, to: UserID(ann.id))
                #expect(try await LiveTests.nextEvent(&messages)?["type"] as? String == "sentinel", "Ann heard of Bob's ride before its time")

                let annView = try json(try await client.get("/v1/challenges/\(id)/ranking", as: ann).body)
                #expect(ChallengeTests.lines(annView).map(\.0) == ["ann", "bob", "carl"])
                #expect(ChallengeTests.lines(annView).map(\.2) == [1, 0, 0])
                let annMe = try #require(annView["me"] as? [String: Any])
                #expect(annMe["rank"] as? Int == 1)
                #expect((annMe["pending"] as? NSNumber)?.doubleValue == 1)
                #expect((annMe["share"] as? NSNumber)?.doubleValue == 0.25)
                let counted = annMe["counted"] as? [[String: Any]] ?? []
                #expect(counted.count == 1 && counted.first?["source"] as? String == "ride-log"
                    && counted.first?["ride"] as? String == "cedar-point.millennium-force")
                let carlView = try json(try await client.get("/v1/challenges/\(id)/ranking", as: carl).body)
                let carlMe = try #require(carlView["me"] as? [String: Any])
                #expect((carlMe["progress"] as? NSNumber)?.doubleValue == 0)
                #expect((carlMe["counted"] as? [Any])?.isEmpty == true)
                #expect(ChallengeTests.lines(carlView).allSatisfy { $0.2 == 0 && $0.1 == 1 }, "nothing shown before the time-to-live")

                // Past the time-to-live the sweep shows both rides, and Ann hears Bob's.
                clock.advance(s.configuration.location.privacy.timeToLive + 60)
                try await s.service.housekeeping.settleChallenges()
                var heard: [[String: Any]] = []
                while heard.count < 2, let event = try await LiveTests.nextEvent(&messages) { heard.append(event) }
                let bobs = heard.first { ($0["user"] as? [String: Any])?["username"] as? String == "bob" }
                #expect((bobs?["progress"] as? NSNumber)?.doubleValue == 1)
                #expect(bobs?["rank"] as? Int == 2)
                // A hand entry tells every participant listening at once.
                #expect(try await client.send(.post, "/v1/challenges/\(funnelID)/entries", as: bob, json: ["amount": 1]).status == .created)
                let cake = try await LiveTests.nextEvent(&messages)
                #expect((cake?["challenge"] as? [String: Any])?["id"] as? Int == funnelID)
                #expect((cake?["user"] as? [String: Any])?["username"] as? String == "bob")
                #expect((cake?["progress"] as? NSNumber)?.doubleValue == 1 && cake?["rank"] as? Int == 1)
                try await outbound.close(.normalClosure, reason: nil)
            }
            let shown = try json(try await client.get("/v1/challenges/\(id)/ranking", as: carl).body)
            #expect(ChallengeTests.lines(shown).map(\.0) == ["ann", "bob", "carl"])
            #expect(ChallengeTests.lines(shown).map(\.1) == [1, 2, 3], "ann reached 1 first")
            #expect(ChallengeTests.lines(shown).map(\.2) == [1, 1, 0])

            // The funnel cakes: Ann's entry, with a real JPEG as proof.
            let upload = try await PhotoTests.upload(client, "coaster-gps.jpg", as: ann)
            let photo = try #require(try json(upload.body)["id"] as? Int)
            let entry = try await client.send(.post, "/v1/challenges/\(funnelID)/entries", as: ann,
                                              json: ["amount": 2, "note": "Powdered sugar", "photoId": photo])
            #expect(entry.status == .created, "\(String(buffer: entry.body))")
            let entered = try json(entry.body)
            #expect((entered["progress"] as? NSNumber)?.doubleValue == 2)
            #expect(entered["rank"] as? Int == 1)
            #expect((entered["entry"] as? [String: Any])?["photo"] as? String == "/v1/photos/\(photo)")
            // Dora, no friend of Ann's, sees the public gallery and the proof, without its GPS.
            let gallery = try json(try await client.get("/v1/challenges/\(funnelID)/gallery", as: dora).body)
            #expect((gallery["entries"] as? [[String: Any]])?.first?["photoId"] as? Int == photo)
            let bytes = try await client.get("/v1/photos/\(photo)", as: dora)
            #expect(bytes.status == .ok)
            #expect(bytes.headers[.contentType] == "image/jpeg")
            #expect(!PhotoTests.hasLocation(Data(bytes.body.readableBytesView)))
            // Found by keyword (prefixes) and park, and trending once joined.
            #expect(try ChallengeTests.ids(try await client.get("/v1/challenges/search?q=funnel%20cak", as: dora)) == [funnelID])
            #expect(try ChallengeTests.ids(try await client.get("/v1/challenges/search?q=funnel&park=cedar-point", as: dora)) == [funnelID])
            #expect(try ChallengeTests.ids(try await client.get("/v1/challenges/search?q=weekend", as: dora)).isEmpty, "the private one is never found")
            #expect(try ChallengeTests.ids(try await client.get("/v1/challenges/search?q=funnel&park=kings-island", as: dora)).isEmpty)
            #expect(try await client.send(.post, "/v1/challenges/\(funnelID)/join", as: dora).status == .ok)
            #expect(try ChallengeTests.ids(try await client.get("/v1/challenges/trending", as: dora)) == [funnelID])
            try expectProblem(try await client.get("/v1/challenges/\(id)", as: dora), .notFound, .noSuchChallenge)
        }
    }
}
