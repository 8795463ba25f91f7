import CoasterAPI
import CoasterCore
import CoasterHTTP
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
import Testing
import WSClient

/// The attacks of the security review, each tried again: every test here failed before its fix.
@Suite("Attacks that must fail")
struct SecurityTests {
    static let inCedarPoint = (lat: 41.4822, lon: -82.6835)
    static let columbus = (lat: 39.9612, lon: -82.9988)

    // MARK: Leaderboards

    /// A ghost logs Magnum: no board shows it, nor any board's cursor, until the ride is older
    /// than the location time-to-live; then it counts, and the cursor is sealed.
    @Test func leaderboardsRevealNoRideBeforeTheLocationTimeToLive() async throws {
        let clock = TestClock(SocialTests.midweek)
        try await TestService.withService(clock: clock) { s, client in
            let victim = try await client.register("victim")
            let stranger = try await client.register("stranger")
            _ = try await client.send(.patch, "/v1/me", as: victim, json: ["sharing": ["ghost": ["mode": "on"]]])
            _ = try await client.postFixes([fixJSON(Self.inCedarPoint.lat, Self.inCedarPoint.lon, at: clock.now())], as: victim)
            let logged = try await client.send(.post, "/v1/rides/cedar-point.magnum-xl-200/rides", as: victim)
            #expect(logged.status == .created, "\(String(buffer: logged.body))")
            let board = "/v1/leaderboards/ride?ride=cedar-point.magnum-xl-200&limit=1"
            try await s.service.housekeeping.settleTallies()
            #expect((try json(try await client.get(board, as: stranger).body)["entries"] as? [Any])?.isEmpty == true)
            clock.advance(s.configuration.location.privacy.timeToLive - 60)
            try await s.service.housekeeping.settleTallies()
            #expect((try json(try await client.get(board, as: stranger).body)["entries"] as? [Any])?.isEmpty == true)
            clock.advance(120)
            try await s.service.housekeeping.settleTallies()
            let page = try json(try await client.get(board, as: stranger).body)
            #expect((page["entries"] as? [[String: Any]])?.first?["value"] as? Int == 1)
            // The cursor holds the time of the ride, sealed: nothing of it reads as a time.
            let next = try #require(page["next"] as? String)
            let rodeAt = String(Int(SocialTests.midweek.timeIntervalSince1970))
            #expect(!next.contains(rodeAt) && !next.hasSuffix("_\(victim.id)"))
            let second = try await client.get(board + "&after=\(next)", as: stranger)
            #expect(second.status == .ok)
            // A cursor in the old plain form, or one tampered with, is a bad parameter.
            for forged in ["1_\(rodeAt)_\(victim.id)", String(next.dropLast(2)) + "AA"] {
                try expectProblem(try await client.get(board + "&after=\(forged)", as: stranger), .badRequest, .invalidParameter)
            }
        }
    }

    @Test func leaderboardsAreRateLimited() async throws {
        let s = try await TestService(configure: { $0.limits.leaderboards = RateLimit(perSecond: 0.01, burst: 3) })
        defer { s.remove() }
        try await s.app().test(.router) { client in
            let ann = try await client.register("ann")
            for _ in 0..<3 { #expect(try await client.get("/v1/leaderboards/rides", as: ann).status == .ok) }
            try expectProblem(try await client.get("/v1/leaderboards/rides", as: ann), .tooManyRequests, .tooManyRequests)
        }
    }

    // MARK: Sessions

    /// After logout, the socket opened with that session closes at once, and a friend's position
    /// sent after it never reaches it; a socket of another session of the same user stays open.
    @Test func logoutClosesTheSessionsLiveSockets() async throws {
        var location = LocationPolicy()
        location.liveHeartbeat = .milliseconds(200)
        let s = try await TestService(location: location)
        defer { s.remove() }
        try await s.app().test(.live) { client in
            let ann = try await client.register("ann")
            let bob = try await client.register("bob")
            try await client.befriend(ann, bob)
            let received = Mutex<[String]>([])
            let frame = try await client.ws("/v1/live", configuration: .init(additionalHeaders: [.authorization: "Bearer \(ann.token)"])) { inbound, _, _ in
                var messages = inbound.messages(maxSize: 1 << 16).makeAsyncIterator()
                guard let first = try await messages.next(), case .text(let hello) = first, hello.contains("hello") else {
                    Issue.record("no hello")
                    return
                }
                #expect(try await client.send(.delete, "/v1/sessions/current", as: ann).status == .noContent)
                _ = try await client.postFixes(FixTests.walkIn(endingAt: Date()), as: bob)
                while let message = try await messages.next() {
                    guard case .text(let text) = message, !text.contains("heartbeat") else { continue }
                    received.withLock { $0.append(text) }
                }
            }
            #expect(received.withLock { $0 }.isEmpty, "sent after logout: \(received.withLock { $0 })")
            #expect(frame?.closeCode == .policyViolation)
            #expect(frame?.reason?.contains("session ended") == true)
        }
    }

    /// A role or password changed by another process (the command line, another node) ends the
    /// user's cached sessions and sockets here as soon as its announcement is read.
    @Test func aDemotionByAnotherProcessEndsTheCachedAdminSession() async throws {
        try await TestService.withService { s, client in
            let admin = try await s.admin("root", on: client)
            let park = try String(contentsOf: TestService.repoRoot.appendingPathComponent("data/parks/cedar-point.geojson"), encoding: .utf8)
            let put = { try await client.execute(uri: "/v1/admin/parks/cedar-point", method: .put, headers: admin.auth, body: ByteBuffer(string: park)) }
            #expect(try await put().status == .ok)
            let (_, stream) = s.service.live.subscribeForTesting(UserID(admin.id))
            // What `coasterlife user create root --reset` does, on its own store of the same file.
            let other = try await openStore(s.configuration.database, photos: s.configuration.photoDirectory)
            _ = try await other.resetUser(username: "root", passwordHash: s.service.sessions.hashPassword("another password!"), role: .member)
            try other.close()
            try await s.service.housekeeping.applyRevocations()
            try expectProblem(try await put(), .unauthorized, .unauthorized)
            var ended = false
            for await message in stream { ended = message == "\u{0}session-ended" }
            #expect(ended)
        }
    }

    // MARK: Login throttling

    /// Behind a trusted proxy, an attacker's failures from one address lock neither the victim
    /// logging in from their own device nor anyone else behind the proxy.
    @Test func anAttackersFailuresLockNobodyElseOut() async throws {
        let s = try await TestService(clock: TestClock(), configure: { $0.trustedProxy = "127.0.0.1" })
        defer { s.remove() }
        try await s.app().test(.live) { client in
            _ = try await client.register("victim")
            _ = try await client.register("bystander")
            func login(_ name: String, _ password: String, from address: String) async throws -> HTTPResponse.Status {
                try await client.execute(uri: "/v1/sessions", method: .post,
                                         headers: [.contentType: "application/json", HTTPField.Name("X-Forwarded-For")!: "10.9.9.9, \(address)"],
                                         body: body(["username": name, "password": password])).status
            }
            // The victim's phone has logged in before.
            #expect(try await login("victim", TestUser.password, from: "198.51.100.7") == .created)
            for _ in 0..<40 { _ = try await login("victim", "wrong guess here", from: "203.0.113.66") }
            #expect(try await login("victim", TestUser.password, from: "203.0.113.66") == .tooManyRequests)
            #expect(try await login("victim", TestUser.password, from: "198.51.100.7") == .created)
            #expect(try await login("bystander", TestUser.password, from: "192.0.2.10") == .created)
        }
    }

    // MARK: Park-only sharing

    /// A park-only friend at Cedar Point, seen from Columbus: no park in the park's friend list,
    /// none in OwnTracks, no push. Seen from inside the park: the park, never a point.
    @Test func parkOnlySharingRevealsTheParkOnlyToAFriendThere() async throws {
        let clock = TestClock()
        try await TestService.withService(clock: clock) { s, client in
            let ann = try await client.register("ann")
            let far = try await client.register("far")
            let near = try await client.register("near")
            try await client.befriend(ann, far)
            try await client.befriend(ann, near)
            _ = try await client.send(.patch, "/v1/me", as: ann, json: ["sharing": ["precision": "park-only"]])
            let (_, farStream) = s.service.live.subscribeForTesting(UserID(far.id))
            _ = try await client.postFixes([fixJSON(Self.columbus.lat, Self.columbus.lon, at: clock.now())], as: far)
            _ = try await client.postFixes([fixJSON(Self.inCedarPoint.lat, Self.inCedarPoint.lon, at: clock.now())], as: near)
            clock.advance(5)
            _ = try await client.postFixes([fixJSON(Self.inCedarPoint.lat, Self.inCedarPoint.lon, at: clock.now())], as: ann)

            let farList = try json(try await client.get("/v1/parks/cedar-point/friends", as: far).body)
            #expect((farList["friends"] as? [Any] ?? farList["people"] as? [Any])?.isEmpty == true, "\(farList)")
            let nearList = try json(try await client.get("/v1/parks/cedar-point/friends", as: near).body)
            let seen = try #require((nearList["friends"] as? [[String: Any]] ?? nearList["people"] as? [[String: Any]])?.first)
            #expect(seen["precision"] as? String == "park-only")
            #expect(seen["lat"] == nil && seen["distance"] == nil)

            let owntracks = try await client.execute(uri: "/owntracks", method: .post, headers: OwnTracksTests.basic(far),
                                                     body: ByteBuffer(string: #"{"_type":"location","lat":39.9612,"lon":-82.9988,"tst":\#(Int(clock.now().timeIntervalSince1970)),"acc":10}"#))
            let answer = try #require(try JSONSerialization.jsonObject(with: Data(owntracks.body.readableBytesView)) as? [[String: Any]])
            #expect(!answer.contains { $0["tid"] != nil && $0["_type"] as? String == "card" && $0["name"] as? String == "ann" })
            #expect(answer.filter { $0["_type"] as? String == "location" }.count == 1, "only far's own location: \(answer)")
            s.service.live.sendForTesting("end", to: UserID(far.id))
            for await message in farStream {
                if message == "end" { break }
                #expect(!message.contains("cedar-point"), "pushed to a friend who is not there: \(message)")
            }
        }
    }

    /// A discoverable park-only stranger is shown to another visitor as the park alone, never
    /// an approximate position and a distance (which friends do not get either).
    @Test func aDiscoverableParkOnlyStrangerShowsNoDistance() async throws {
        let clock = TestClock()
        try await TestService.withService(clock: clock) { _, client in
            let shy = try await client.register("shy")
            let visitor = try await client.register("visitor")
            _ = try await client.send(.patch, "/v1/me", as: shy, json: ["sharing": ["precision": "park-only", "discoverable": true]])
            for user in [shy, visitor] {
                _ = try await client.postFixes([fixJSON(Self.inCedarPoint.lat, Self.inCedarPoint.lon, at: clock.now())], as: user)
            }
            let people = try #require(try json(try await client.get("/v1/people/nearby?radius=1000", as: visitor).body)["people"] as? [[String: Any]])
            let seen = try #require(people.first { ($0["user"] as? [String: Any])?["username"] as? String == "shy" || $0["username"] as? String == "shy" })
            #expect(seen["precision"] as? String == "park-only")
            #expect(seen["distance"] == nil)
        }
    }

    // MARK: OwnTracks

    @Test func owntracksTakesNoMoreThanABatchAndIsRateLimited() async throws {
        var limits = RateLimits()
        limits.fixes = RateLimit(perSecond: 0.001, burst: 3)
        let clock = TestClock()
        let s = try await TestService(clock: clock) { $0.limits = limits }
        defer { s.remove() }
        try await s.app().test(.router) { client in
            let ann = try await client.register("ann")
            let t = Int(clock.now().timeIntervalSince1970)
            let transition = #"{"_type":"transition","event":"enter","lat":41.4822,"lon":-82.6835,"tst":\#(t),"wtst":\#(t),"acc":10,"desc":"x","rid":"r"}"#
            let many = "[" + Array(repeating: transition, count: 101).joined(separator: ",") + "]"
            let big = try await client.execute(uri: "/owntracks", method: .post, headers: OwnTracksTests.basic(ann), body: ByteBuffer(string: many))
            try expectProblem(big, .contentTooLarge, .payloadTooLarge)
            for _ in 0..<3 {
                #expect(try await client.execute(uri: "/owntracks", method: .post, headers: OwnTracksTests.basic(ann),
                                                 body: ByteBuffer(string: transition)).status == .ok)
            }
            let limited = try await client.execute(uri: "/owntracks", method: .post, headers: OwnTracksTests.basic(ann), body: ByteBuffer(string: transition))
            try expectProblem(limited, .tooManyRequests, .tooManyRequests)
            #expect(try await s.service.store.ownTracksTransitionCount(of: UserID(ann.id)) == 3)
        }
    }

    /// A verified Basic credential is kept briefly: an attacker's failures do not stop the
    /// victim's phone, and a password change forgets it at once.
    @Test func aVerifiedBasicCredentialOutlivesAnAttackButNotAPasswordChange() async throws {
        // A clock that stands still: the backoff does not run out however slow the run.
        try await TestService.withService(clock: TestClock()) { s, client in
            let ann = try await client.register("ann")
            let post = { (headers: HTTPFields) in
                try await client.execute(uri: "/owntracks", method: .post, headers: headers, body: ByteBuffer(string: "[]")).status
            }
            #expect(try await post(OwnTracksTests.basic(ann)) == .ok)
            var wrong = OwnTracksTests.basic(ann)
            wrong[.authorization] = "Basic " + Data("ann:not the password".utf8).base64EncodedString()
            for _ in 0..<10 { _ = try await post(wrong) }
            #expect(try await post(wrong) == .tooManyRequests)
            #expect(try await post(OwnTracksTests.basic(ann)) == .ok)
            _ = try await s.service.accounts.reset(username: "ann", password: "a new password!", role: .member)
            #expect(try await post(OwnTracksTests.basic(ann)) != .ok)
        }
    }

    // MARK: Lengths

    @Test func textIsBoundedInBytesAndRefusesNUL() async throws {
        try await TestService.withService { _, client in
            let ann = try await client.register("ann")
            let bob = try await client.register("bob")
            try await client.befriend(ann, bob)
            // One character each, of thousands of bytes: refused by their bytes.
            let zalgo = "a" + String(repeating: "\u{0301}", count: 1_000)
            #expect(zalgo.count == 1)
            for patch in [["displayName": zalgo], ["bio": "a" + String(repeating: "\u{0301}", count: 1_500)], ["displayName": "nul\u{0}tail"],
                          ["bio": "nul\u{0}tail"]] {
                try expectProblem(try await client.send(.patch, "/v1/me", as: ann, json: patch), .badRequest, .invalidField)
            }
            for message in ["x" + String(repeating: "\u{0301}", count: 5_000), "nul\u{0}tail"] {
                try expectProblem(try await client.send(.post, "/v1/messages/\(bob.id)", as: ann, json: ["body": message]), .badRequest, .invalidField)
            }
            // The sizes of the review (600 KB names, a 900 KB bio, 1 MB messages) are refused
            // before they are read whole.
            let huge = "a" + String(repeating: "\u{0301}", count: 300_000)
            for (method, path, object) in [(HTTPRequest.Method.patch, "/v1/me", ["displayName": huge]), (.patch, "/v1/me", ["bio": huge]),
                                           (.post, "/v1/messages/\(bob.id)", ["body": huge + huge])] {
                let r = try await client.send(method, path, as: ann, json: object)
                #expect(r.status == .badRequest || r.status == .contentTooLarge, "\(path): \(r.status)")
            }
            let me = try json(try await client.get("/v1/me", as: ann).body)
            #expect(me["displayName"] as? String == "ann")
            #expect(try await client.send(.post, "/v1/messages/\(bob.id)", as: ann, json: ["body": "héllo"]).status == .created)
            let weak = try await client.execute(uri: "/v1/users", method: .post,
                                                body: body(["username": "carl", "password": "ten chars\u{0}and then some"]))
            try expectProblem(weak, .badRequest, .invalidField)
        }
    }

    // MARK: Enumeration and Sybils

    @Test func blockingNamesNoOneAndIsRateLimited() async throws {
        let s = try await TestService(configure: { $0.limits.friendRequests = RateLimit(perSecond: 0.001, burst: 3) })
        defer { s.remove() }
        try await s.app().test(.router) { client in
            let ann = try await client.register("ann")
            let others = [try await client.register("bob"), try await client.register("carl"), try await client.register("dora"),
                          try await client.register("erin")]
            for user in others.prefix(3) {
                let r = try await client.send(.put, "/v1/blocks/\(user.id)", as: ann)
                #expect(r.status == .noContent)
                #expect(r.body.readableBytes == 0)
            }
            try expectProblem(try await client.send(.put, "/v1/blocks/\(others[3].id)", as: ann), .tooManyRequests, .tooManyRequests)
        }
    }

    @Test func registrationIsThrottledPerAddress() async throws {
        let s = try await TestService(configure: { $0.limits.registrations = RateLimit(perSecond: 1.0 / 60, burst: 5) })
        defer { s.remove() }
        try await s.app().test(.router) { client in
            for i in 0..<5 { _ = try await client.register("sybil\(i)") }
            let sixth = try await client.execute(uri: "/v1/users", method: .post, body: body(["username": "sybil5", "password": TestUser.password]))
            try expectProblem(sixth, .tooManyRequests, .tooManyRequests)
        }
    }

    /// One established reporter says 20 minutes; eight accounts opened today say 300. The
    /// estimate stays with the established reporter, and the board says how many stand behind it.
    @Test func freshAccountsCannotMoveAWaitEstimate() async throws {
        let start = SocialTests.midweek
        let clock = TestClock(start)
        try await TestService.withService(clock: clock) { _, client in
            let regular = try await client.register("regular")
            // Two visits on two days, then a week later, in Maverick's line.
            for _ in 0..<2 {
                _ = try await client.postFixes([fixJSON(Self.inCedarPoint.lat, Self.inCedarPoint.lon, at: clock.now())], as: regular)
                clock.advance(26 * 3600)
            }
            clock.advance(7 * 24 * 3600)
            let station = Coordinate(lat: 41.481656, lon: -82.688132)
            let report = { (user: TestUser, minutes: Int) in
                _ = try await client.postFixes([fixJSON(station.lat, station.lon, accuracy: 6, at: clock.now())], as: user)
                let r = try await client.send(.post, "/v1/rides/cedar-point.millennium-force/waits", as: user, json: ["minutes": minutes])
                #expect(r.status == .created, "\(String(buffer: r.body))")
            }
            try await report(regular, 20)
            for i in 0..<8 { try await report(try await client.register("sock\(i)"), 300) }
            let estimate = try #require(try await WaitAPITests.board(client, as: regular)["estimate"] as? [String: Any])
            #expect(estimate["reports"] as? Int == 9)
            #expect(estimate["trustedReports"] as? Int == 1)
            #expect(estimate["minutes"] as? Double == 20, "\(estimate)")
        }
    }
}

/// The attacks that need a real socket (the peer's address is what is checked). Named for the live
/// group, which tools/test runs after the rest: with every other suite beside it on two cores, a
/// live client's request has waited out its read timeout.
@Suite("Attacks that must fail, over a socket")
struct SecurityLiveTests {
    @Test func aForwardedForHeaderFromAnUntrustedPeerIsIgnored() async throws {
        // A clock that stands still: the first wait (1 s) does not run out however slow the run.
        let s = try await TestService(clock: TestClock())  // no trusted proxy
        defer { s.remove() }
        try await s.app().test(.live) { client in
            _ = try await client.register("victim")
            for i in 0..<6 {
                _ = try await client.execute(uri: "/v1/sessions", method: .post,
                                             headers: [.contentType: "application/json", HTTPField.Name("X-Forwarded-For")!: "203.0.113.\(i)"],
                                             body: body(["username": "victim", "password": "wrong guess here"]))
            }
            // Six addresses claimed, one peer: the sixth failure from it waits.
            let r = try await client.execute(uri: "/v1/sessions", method: .post,
                                             headers: [.contentType: "application/json", HTTPField.Name("X-Forwarded-For")!: "203.0.113.99"],
                                             body: body(["username": "victim", "password": "wrong guess here"]))
            #expect(r.status == .tooManyRequests)
        }
    }
}
