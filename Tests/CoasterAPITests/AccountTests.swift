@testable import CoasterAPI
import CoasterCore
import CoasterHTTP
@testable import CoasterStore
import CoasterTestSupport
import CoasterService
import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@Suite("Accounts and sessions")
struct AccountTests {
    @Test func registerLoginSeeProfileLogout() async throws {
        try await TestService.withApp { client in
            let ann = try await client.register("Ann.Lee")
            #expect(ann.username == "Ann.Lee")
            #expect(ann.token.hasPrefix("cl_") && ann.token.count == 46)
            let me = try await client.get("/v1/me", as: ann)
            #expect(me.status == .ok)
            let profile = try json(me.body)
            #expect(profile["username"] as? String == "ann.lee")
            #expect(profile["role"] as? String == "member")
            #expect(profile["passwordHash"] == nil && profile["password_hash"] == nil)
            let out = try await client.send(.delete, "/v1/sessions/current", as: ann)
            #expect(out.status == .noContent)
            let after = try await client.get("/v1/me", as: ann)
            let problem = try expectProblem(after, .unauthorized, .unauthorized)
            #expect((problem["detail"] as? String)?.contains("revoked") == true)
            #expect(after.headers[.wwwAuthenticate]?.hasPrefix("Bearer") == true)
        }
    }

    @Test func usernamesAreUniqueCaseInsensitively() async throws {
        try await TestService.withApp { client in
            _ = try await client.register("bob")
            let again = try await client.send(.post, "/v1/users", as: nil, json: ["username": "BOB", "password": TestUser.password])
            let problem = try expectProblem(again, .conflict, .usernameTaken)
            #expect((problem["errors"] as? [[String: Any]])?.first?["pointer"] as? String == "/username")
        }
    }

    @Test(arguments: [
        (["username": "ab", "password": "long enough pw"], "/username"),
        (["username": "white space", "password": "long enough pw"], "/username"),
        (["username": String(repeating: "a", count: 33), "password": "long enough pw"], "/username"),
        (["username": "carol", "password": "short"], "/password"),
        (["username": "carol", "password": String(repeating: "é", count: 40)], "/password"),
        (["username": "carol", "password": "long enough pw", "displayName": "   "], "/displayName"),
        (["username": "carol"], "/password"),
        (["username": 42, "password": "long enough pw"], "/username"),
    ] as [([String: any Sendable], String)])
    func badRegistrationsNameTheField(body: [String: any Sendable], pointer: String) async throws {
        try await TestService.withApp { client in
            let response = try await client.send(.post, "/v1/users", as: nil, json: body)
            #expect(response.status == .badRequest)
            let problem = try json(response.body)
            #expect(["/problems/invalid-field", "/problems/malformed-body"].contains(problem["type"] as? String))
            #expect((problem["errors"] as? [[String: Any]])?.first?["pointer"] as? String == pointer)
        }
    }

    @Test func wrongPasswordAndUnknownUserLookTheSame() async throws {
        try await TestService.withApp { client in
            _ = try await client.register("dave")
            let wrong = try await client.send(.post, "/v1/sessions", as: nil, json: ["username": "dave", "password": "not the password"])
            let unknown = try await client.send(.post, "/v1/sessions", as: nil, json: ["username": "nobody", "password": "not the password"])
            let a = try expectProblem(wrong, .unauthorized, .invalidCredentials)
            let b = try expectProblem(unknown, .unauthorized, .invalidCredentials)
            #expect(a["detail"] as? String == b["detail"] as? String)
            #expect(a["title"] as? String == b["title"] as? String)
        }
    }

    @Test func repeatedFailedLoginsAreThrottledWithRetryAfter() async throws {
        // A clock that stands still: the first wait (1 s) does not run out however slow the run.
        try await TestService.withService(clock: TestClock()) { _, client in
            _ = try await client.register("erin")
            for _ in 0..<5 {
                let r = try await client.send(.post, "/v1/sessions", as: nil, json: ["username": "erin", "password": "guess guess guess"])
                #expect(r.status == .unauthorized)
            }
            // Now even the right password waits: the attacker cannot tell a hit from a miss.
            let blocked = try await client.send(.post, "/v1/sessions", as: nil, json: ["username": "erin", "password": TestUser.password])
            try expectProblem(blocked, .tooManyRequests, .tooManyRequests)
            let retry = try #require(blocked.headers[.retryAfter].flatMap { Int($0) })
            #expect(retry > 0 && retry <= 15 * 60)
            // Another user from the same address is not locked out by erin's failures.
            _ = try await client.register("frank")
        }
    }

    @Test func sessionsSurviveARestart() async throws {
        let first = try await TestService()
        defer { try? FileManager.default.removeItem(at: first.directory) }
        let user = try await first.app().test(.router) { client in try await client.register("gina") }
        first.close()
        let second = try await TestService(directory: first.directory)
        defer { second.close() }
        try await second.app().test(.router) { client in
            let me = try await client.get("/v1/me", as: user)
            #expect(me.status == .ok)
        }
    }

    /// The store keeps each token's SHA-256 (FIPS 180-2's test vectors), which the cache's
    /// fixed-size key must give back byte for byte (bulk-loaded sessions depend on it).
    @Test func tokensAreStoredAsTheirSHA256() {
        func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }
        #expect(hex(Sessions.hash("abc")) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(hex(Sessions.hash("")) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(hex(Sessions.hash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"))
            == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test func garbageTokensAre401() async throws {
        try await TestService.withApp { client in
            for header in ["Bearer nope", "Bearer " + String(repeating: "x", count: 500), "Basic Zm9vOmJhcg==", "Bearer"] {
                let r = try await client.execute(uri: "/v1/me", method: .get, headers: [.authorization: header])
                try expectProblem(r, .unauthorized, .unauthorized)
            }
        }
    }

    /// How an `Authorization` header is read: the scheme in any case after any spaces, one space,
    /// the token with spaces and tabs around it trimmed; anything else is not a bearer header.
    @Test func bearerHeadersAreReadLeniently() async throws {
        try await TestService.withApp { client in
            let ann = try await client.register("ann")
            let t = ann.token
            for header in ["Bearer \(t)", "bearer \(t)", "BEARER \(t)", "bEaReR \(t)", "  Bearer \(t)", "Bearer   \(t)",
                           "Bearer \t\(t)\t ", "Bearer \(t)  "] {
                let r = try await client.execute(uri: "/v1/me", method: .get, headers: [.authorization: header])
                #expect(r.status == .ok, "\(header.debugDescription)")
            }
            for header in ["Bearer\t\(t)", "Bearer", "Bearer ", "Bearers \(t)", "Beare \(t)", "Bearer\u{301} \(t)", "Bearer \(t) x",
                           "Bearer \u{301}\(t)", "Cearer \(t)", "Bfarer \(t)"] {
                let r = try await client.execute(uri: "/v1/me", method: .get, headers: [.authorization: header])
                try expectProblem(r, .unauthorized, .unauthorized)
            }
        }
    }

    /// The header reader against the way it was written before (split, lower-case, trim), over
    /// every string of up to five characters from those that matter, and some longer ones: HTTP
    /// trims a header's ends, so the test above cannot reach leading spaces or a bare `Bearer `.
    @Test func bearerTokenReadingMatchesSplitting() {
        func reference(_ header: String) -> String? {
            let parts = header.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
            var token = parts[1]
            while let c = token.first, c == " " || c == "\t" { token.removeFirst() }
            while let c = token.last, c == " " || c == "\t" { token.removeLast() }
            return String(token)
        }
        let pieces = ["Bearer", "bEARER", "Beare", "bearers", " ", "  ", "\t", "x", "tok en", "\u{301}", "é", ""]
        var checked = 0
        for a in pieces {
            for b in pieces {
                for c in pieces {
                    for d in pieces {
                        let header = a + b + c + d
                        #expect(BearerAuthentication.token(header) == reference(header), "\(header.debugDescription)")
                        checked += 1
                    }
                }
            }
        }
        #expect(checked == 20_736)
    }

    /// A session revoked by another process (straight in the store here): the cache answers for it
    /// while it is fresh; the first use once it is due is still answered from the cache and sends
    /// it to the background recheck, which finds it revoked; unused for two recheck periods, a
    /// request waits for the store. The revocation feed, which tells every process within a second,
    /// is held off: this is the recheck that catches what the feed did not say.
    @Test func dueSessionsAreRecheckedInTheBackground() async throws {
        let clock = TestClock()
        let s = try await TestService(clock: clock) { $0.revocationPoll = .seconds(3600) }
        defer { s.remove() }
        try await s.app().test(.router) { client in
            let ann = try await client.register("ann")
            let bob = try await client.register("bob")
            for user in [ann, bob] { try await s.service.store.revokeSession(tokenHash: Sessions.hash(user.token)) }
            #expect(try await client.get("/v1/me", as: ann).status == .ok, "fresh: the cache answers")
            clock.advance(s.configuration.accounts.sessionRecheck + 1)
            #expect(try await client.get("/v1/me", as: ann).status == .ok, "due: answered from the cache, rechecked behind")
            try await waitUntil("the recheck forgets ann's session") { try await client.get("/v1/me", as: ann).status == .unauthorized }
            clock.advance(s.configuration.accounts.sessionRecheck)
            try expectProblem(try await client.get("/v1/me", as: bob), .unauthorized, .unauthorized)
        }
    }

    /// Every session due at a time is rechecked, and a live one renewed: after its recheck it is
    /// answered from the cache for another two periods, so a revocation after the recheck is seen
    /// only at the next one.
    @Test func backgroundRechecksRenewLiveSessions() async throws {
        let clock = TestClock()
        // The store's revocations are revoked "by another process" here, and the recheck alone is
        // under test: the reading of announced revocations (within a second) is held off.
        let s = try await TestService(clock: clock, configure: { $0.revocationPoll = .seconds(3600) })
        defer { s.remove() }
        try await s.app().test(.router) { client in
            var users: [TestUser] = []
            for name in ["ann", "bob", "cai", "dee", "eve"] { users.append(try await client.register(name)) }
            let period = s.configuration.accounts.sessionRecheck
            for user in users.prefix(3) { try await s.service.store.revokeSession(tokenHash: Sessions.hash(user.token)) }
            clock.advance(period + 1)
            for user in users { #expect(try await client.get("/v1/me", as: user).status == .ok, "\(user.username)") }
            try await waitUntil("the recheck forgets the three revoked sessions and keeps the others") {
                var statuses: [HTTPResponse.Status] = []
                for user in users { statuses.append(try await client.get("/v1/me", as: user).status) }
                return statuses == [.unauthorized, .unauthorized, .unauthorized, .ok, .ok]
            }
            for user in users.suffix(2) { try await s.service.store.revokeSession(tokenHash: Sessions.hash(user.token)) }
            clock.advance(1.5 * period)
            // Renewed at period + 1: due now, not past two periods, so answered from the cache once.
            for user in users.suffix(2) { #expect(try await client.get("/v1/me", as: user).status == .ok, "\(user.username)") }
            try await waitUntil("the recheck forgets eve's session") { try await client.get("/v1/me", as: users[4]).status == .unauthorized }
        }
    }

    @Test func profileAndSharingSettings() async throws {
        try await TestService.withApp { client in
            let hana = try await client.register("hana")
            let until = ISO8601DateFormatter().string(from: Date().addingTimeInterval(3600))
            let patched = try await client.send(.patch, "/v1/me", as: hana, json: [
                "displayName": "Hana K", "bio": "Coaster nerd",
                "sharing": ["precision": "approximate", "ghost": ["mode": "until", "until": until]],
            ])
            #expect(patched.status == .ok)
            let body = try json(patched.body)
            #expect(body["displayName"] as? String == "Hana K")
            let sharing = try #require(body["sharing"] as? [String: Any])
            #expect(sharing["precision"] as? String == "approximate")
            #expect((sharing["ghost"] as? [String: Any])?["mode"] as? String == "until")

            let past = try await client.send(.patch, "/v1/me", as: hana, json: ["sharing": ["ghost": ["mode": "until", "until": "2001-01-01T00:00:00Z"]]])
            let problem = try expectProblem(past, .badRequest, .invalidField)
            #expect((problem["errors"] as? [[String: Any]])?.first?["pointer"] as? String == "/sharing/ghost/until")
            let badPrecision = try await client.send(.patch, "/v1/me", as: hana, json: ["sharing": ["precision": "fuzzy"]])
            let p2 = try expectProblem(badPrecision, .badRequest, .malformedBody)
            #expect((p2["errors"] as? [[String: Any]])?.first?["pointer"] as? String == "/sharing/precision")
            // What would do, not the Swift type's name.
            #expect(p2["detail"] as? String == #"/sharing/precision: "fuzzy" is not one of "exact", "approximate", "park-only""#)
        }
    }
}

@Suite("Friends")
struct FriendTests {
    @Test func befriendAndSeeEachOtherListedAndNobodyElse() async throws {
        // A clock that stands still: "online" is a login within five minutes of the listing.
        try await TestService.withService(clock: TestClock()) { _, client in
            let ann = try await client.register("ann")
            let bob = try await client.register("bob")
            let eve = try await client.register("eve")
            let request = try await client.send(.post, "/v1/friends/requests", as: ann, json: ["username": "BOB"])
            #expect(request.status == .created)
            #expect(try json(request.body)["status"] as? String == "requested")

            let pending = try json(try await client.get("/v1/friends/requests", as: bob).body)
            #expect(((pending["incoming"] as? [[String: Any]])?.first?["user"] as? [String: Any])?["username"] as? String == "ann")
            let annOut = try json(try await client.get("/v1/friends/requests", as: ann).body)
            #expect((annOut["outgoing"] as? [Any])?.count == 1)
            // Incoming requests in pages: eve's too, newest first, the next page after the cursor.
            #expect(try await client.send(.post, "/v1/friends/requests", as: eve, json: ["username": "bob"]).status == .created)
            let first = try json(try await client.get("/v1/friends/requests?limit=1", as: bob).body)
            #expect(((first["incoming"] as? [[String: Any]])?.first?["user"] as? [String: Any])?["username"] as? String == "eve")
            let next = try #require(first["next"] as? String)
            let second = try json(try await client.get("/v1/friends/requests?limit=1&after=\(next)", as: bob).body)
            #expect(((second["incoming"] as? [[String: Any]])?.first?["user"] as? [String: Any])?["username"] as? String == "ann")
            let third = try json(try await client.get("/v1/friends/requests?limit=1&after=\(try #require(second["next"] as? String))", as: bob).body)
            #expect((third["incoming"] as? [Any])?.isEmpty == true && third["next"] == nil)
            #expect(try json(try await client.get("/v1/friends/requests", as: bob).body)["next"] == nil)
            try expectProblem(try await client.get("/v1/friends/requests?after=yesterday", as: bob), .badRequest, .invalidParameter)
            try expectProblem(try await client.get("/v1/friends/requests?limit=201", as: bob), .badRequest, .invalidParameter)
            #expect(try await client.send(.delete, "/v1/friends/requests/\(bob.id)", as: eve).status == .noContent)
            // Pending is not friends yet.
            #expect((try json(try await client.get("/v1/friends", as: ann).body)["friends"] as? [Any])?.isEmpty == true)

            let accept = try await client.send(.post, "/v1/friends/requests/\(ann.id)/accept", as: bob)
            #expect(accept.status == .ok)
            for (me, other) in [(ann, "bob"), (bob, "ann")] {
                let friends = try #require(try json(try await client.get("/v1/friends", as: me).body)["friends"] as? [[String: Any]])
                #expect(friends.map { $0["username"] as? String } == [other])
                #expect(friends.first?["online"] as? Bool == true)
                #expect(friends.first?["lastSeen"] != nil)
            }
            #expect((try json(try await client.get("/v1/friends", as: eve).body)["friends"] as? [Any])?.isEmpty == true)
        }
    }

    /// The friend list in pages by display name: `next` while a page is full, every friend once;
    /// a cursor that is not one (not hexadecimal, not UTF-8, no username) is a 400.
    @Test func theFriendListComesInPages() async throws {
        try await TestService.withApp { client in
            let me = try await client.register("zoe")
            for name in ["dan", "ann", "cat", "bob_b", "eve"] {
                let friend = try await client.register(name)
                #expect(try await client.send(.post, "/v1/friends/requests", as: friend, json: ["username": "zoe"]).status == .created)
                #expect(try await client.send(.post, "/v1/friends/requests/\(friend.id)/accept", as: me).status == .ok)
            }
            var seen: [String] = [], after = "", pages = 0
            for _ in 0..<5 {
                let page = try json(try await client.get("/v1/friends?limit=2" + after, as: me).body)
                seen += (page["friends"] as? [[String: Any]] ?? []).compactMap { $0["username"] as? String }
                pages += 1
                guard let next = page["next"] as? String else { break }
                after = "&after=" + next
            }
            #expect(seen == ["ann", "bob_b", "cat", "dan", "eve"])
            #expect(pages == 3)
            let whole = try json(try await client.get("/v1/friends", as: me).body)
            #expect((whole["friends"] as? [Any])?.count == 5 && whole["next"] == nil)
            for bad in ["zz_ann", "616_ann", "61_Ann", "ff_ann", "+1_ann", "61"] {
                try expectProblem(try await client.get("/v1/friends?after=\(bad)", as: me), .badRequest, .invalidParameter)
            }
            try expectProblem(try await client.get("/v1/friends?limit=0", as: me), .badRequest, .invalidParameter)
            // A cursor reads back as its place, whatever the name holds.
            let place = NamePosition(displayName: "Zoë 🎢 _x\u{0}", username: "a_b.c")
            #expect(NamePosition(cursor: place.cursor) == place)
        }
    }

    @Test func requestingSomeoneWhoAskedFirstAccepts() async throws {
        try await TestService.withApp { client in
            let a = try await client.register("ann")
            let b = try await client.register("bob")
            _ = try await client.send(.post, "/v1/friends/requests", as: a, json: ["username": "bob"])
            let r = try await client.send(.post, "/v1/friends/requests", as: b, json: ["username": "ann"])
            #expect(r.status == .ok)
            #expect(try json(r.body)["status"] as? String == "accepted")
        }
    }

    /// Friends are capped at 5,000 and requests waiting on others at 1,000: the lists, nearby and
    /// the friends' board cost what they are. The cap holds when a request is sent, when it is
    /// accepted, and for either side.
    @Test func friendsAndPendingRequestsAreCapped() async throws {
        try await TestService.withService { service, client in
            let ann = try await client.register("ann")
            let bob = try await client.register("bob")
            let cat = try await client.register("cat")
            _ = try await client.send(.post, "/v1/friends/requests", as: cat, json: ["username": "ann"])
            // Ann has as many friends as anyone can, written directly (5,000 sign-ups would be slow).
            let sql = TestSQL(service.service.store)
            try await sql.execute("""
                INSERT INTO users (id, username, display_name, password_hash, role, created_at)
                WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < ?)
                SELECT 1000000 + x, 'rider' || x, 'R', 'x', 'member', 0 FROM n
                """, [FriendRules.maximumFriends])
            try await sql.execute("""
                INSERT INTO friendships (requester, addressee, status, created_at, accepted_at)
                WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < ?)
                SELECT CASE WHEN x % 2 = 0 THEN 1000000 + x ELSE ? END, CASE WHEN x % 2 = 0 THEN ? ELSE 1000000 + x END, 'accepted', 0, 0 FROM n
                """, [FriendRules.maximumFriends, ann.id, ann.id])
            let toAnn = try expectProblem(try await client.send(.post, "/v1/friends/requests", as: bob, json: ["username": "ann"]), .conflict, .friendLimit)
            #expect((toAnn["detail"] as? String)?.hasPrefix("That user has 5000 friends") == true)
            let fromAnn = try expectProblem(try await client.send(.post, "/v1/friends/requests", as: ann, json: ["username": "bob"]), .conflict, .friendLimit)
            #expect((fromAnn["detail"] as? String)?.hasPrefix("You have 5000 friends") == true)
            // Cat's request, sent before Ann was full, cannot be accepted now, by either route.
            try expectProblem(try await client.send(.post, "/v1/friends/requests/\(cat.id)/accept", as: ann), .conflict, .friendLimit)
            try expectProblem(try await client.send(.post, "/v1/friends/requests", as: ann, json: ["username": "cat"]), .conflict, .friendLimit)
            // One friend fewer and there is room again.
            #expect(try await client.send(.delete, "/v1/friends/1000001", as: ann).status == .noContent)
            #expect(try await client.send(.post, "/v1/friends/requests/\(cat.id)/accept", as: ann).status == .ok)
            try expectProblem(try await client.send(.post, "/v1/friends/requests", as: bob, json: ["username": "ann"]), .conflict, .friendLimit)

            // Bob has as many requests waiting as anyone can; one answered frees a place.
            try await sql.execute("""
                INSERT INTO friendships (requester, addressee, status, created_at)
                WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < ?)
                SELECT ?, 1000000 + x, 'pending', 0 FROM n
                """, [FriendRules.maximumPendingRequests, bob.id])
            let pending = try expectProblem(try await client.send(.post, "/v1/friends/requests", as: bob, json: ["username": "cat"]), .conflict, .friendLimit)
            #expect((pending["detail"] as? String)?.contains("1000 friend requests waiting") == true)
            #expect(try await client.send(.delete, "/v1/friends/requests/1000002", as: bob).status == .noContent)
            #expect(try await client.send(.post, "/v1/friends/requests", as: bob, json: ["username": "cat"]).status == .created)
        }
    }

    /// Friend requests are throttled per sender, those naming no one included: a request says
    /// whether a username exists.
    @Test func friendRequestsBeyondTheBurstAreRefused() async throws {
        let s = try await TestService { configuration in
            configuration.limits.friendRequests = RateLimit(perSecond: 0.001, burst: 3)
        }
        defer { s.remove() }
        try await s.app().test(.router) { client in
            let ann = try await client.register("ann")
            for name in ["bob", "cat", "dan"] { _ = try await client.register(name) }
            var statuses: [HTTPResponse.Status] = []
            for name in ["bob", "nobody", "cat", "dan"] {
                let sent = try await client.send(.post, "/v1/friends/requests", as: ann, json: ["username": name])
                statuses.append(sent.status)
                if sent.status == .tooManyRequests {
                    try expectProblem(sent, .tooManyRequests, .tooManyRequests)
                    #expect(Int(sent.headers[.retryAfter] ?? "") ?? 0 > 0)
                }
            }
            #expect(statuses == [.created, .notFound, .created, .tooManyRequests])
            // Another sender has their own allowance; answering is not throttled.
            let bob = try await client.login("bob")
            #expect(try await client.send(.post, "/v1/friends/requests", as: bob, json: ["username": "dan"]).status == .created)
            #expect(try await client.send(.post, "/v1/friends/requests/\(ann.id)/accept", as: bob).status == .ok)
        }
    }

    @Test func declineCancelRemove() async throws {
        try await TestService.withApp { client in
            let a = try await client.register("ann")
            let b = try await client.register("bob")
            _ = try await client.send(.post, "/v1/friends/requests", as: a, json: ["username": "bob"])
            #expect(try await client.send(.post, "/v1/friends/requests/\(a.id)/decline", as: b).status == .noContent)
            try expectProblem(try await client.send(.post, "/v1/friends/requests/\(a.id)/accept", as: b), .notFound, .noPendingRequest)

            _ = try await client.send(.post, "/v1/friends/requests", as: a, json: ["username": "bob"])
            #expect(try await client.send(.delete, "/v1/friends/requests/\(b.id)", as: a).status == .noContent)
            try expectProblem(try await client.send(.delete, "/v1/friends/requests/\(b.id)", as: a), .notFound, .noPendingRequest)

            try await client.befriend(a, b)
            #expect(try await client.send(.delete, "/v1/friends/\(b.id)", as: a).status == .noContent)
            #expect((try json(try await client.get("/v1/friends", as: b).body)["friends"] as? [Any])?.isEmpty == true)
            try expectProblem(try await client.send(.post, "/v1/friends/requests", as: a, json: ["username": "ann"]), .unprocessableContent, .cannotBefriendSelf)
            try expectProblem(try await client.send(.post, "/v1/friends/requests", as: a, json: ["username": "nobody"]), .notFound, .noSuchUser)
        }
    }

    @Test func blockingEndsTheFriendshipAndHidesEachFromTheOther() async throws {
        try await TestService.withApp { client in
            let a = try await client.register("ann")
            let b = try await client.register("bob")
            try await client.befriend(a, b)
            #expect(try await client.send(.put, "/v1/blocks/\(b.id)", as: a).status == .noContent)
            for user in [a, b] {
                #expect((try json(try await client.get("/v1/friends", as: user).body)["friends"] as? [Any])?.isEmpty == true)
            }
            // Bob cannot find Ann to ask again: she looks like nobody.
            try expectProblem(try await client.send(.post, "/v1/friends/requests", as: b, json: ["username": "ann"]), .notFound, .noSuchUser)
            let blocks = try json(try await client.get("/v1/blocks", as: a).body)
            #expect((blocks["users"] as? [[String: Any]])?.first?["username"] as? String == "bob")
            #expect(blocks["next"] == nil)
            // In pages, newest first: Cid's block, then Bob's after the cursor.
            let c = try await client.register("cid")
            #expect(try await client.send(.put, "/v1/blocks/\(c.id)", as: a).status == .noContent)
            let first = try json(try await client.get("/v1/blocks?limit=1", as: a).body)
            #expect((first["users"] as? [[String: Any]])?.map { $0["username"] as? String } == ["cid"])
            let second = try json(try await client.get("/v1/blocks?limit=1&after=\(try #require(first["next"] as? String))", as: a).body)
            #expect((second["users"] as? [[String: Any]])?.map { $0["username"] as? String } == ["bob"])
            let third = try json(try await client.get("/v1/blocks?limit=1&after=\(try #require(second["next"] as? String))", as: a).body)
            #expect((third["users"] as? [Any])?.isEmpty == true && third["next"] == nil)
            try expectProblem(try await client.get("/v1/blocks?after=yesterday", as: a), .badRequest, .invalidParameter)
            try expectProblem(try await client.get("/v1/blocks?limit=0", as: a), .badRequest, .invalidParameter)
            #expect(try await client.send(.delete, "/v1/blocks/\(b.id)", as: a).status == .noContent)
            #expect(try await client.send(.post, "/v1/friends/requests", as: b, json: ["username": "ann"]).status == .created)
        }
    }

    @Test func ghostModeHidesLastSeenFromFriends() async throws {
        try await TestService.withApp { client in
            let a = try await client.register("ann")
            let b = try await client.register("bob")
            try await client.befriend(a, b)
            _ = try await client.send(.patch, "/v1/me", as: b, json: ["sharing": ["ghost": ["mode": "on"]]])
            let friends = try #require(try json(try await client.get("/v1/friends", as: a).body)["friends"] as? [[String: Any]])
            #expect(friends.first?["lastSeen"] == nil)
            #expect(friends.first?["online"] as? Bool == false)
            // A per-friend override: hidden from Carl only, even with ghost mode off; then from Ann.
            _ = try await client.send(.patch, "/v1/me", as: b, json: ["sharing": ["ghost": ["mode": "off"]]])
            let c = try await client.register("carl")
            try await client.befriend(c, b)
            #expect(try await client.send(.put, "/v1/friends/\(c.id)/sharing", as: b, json: ["hidden": true]).status == .noContent)
            func bobSeen(by viewer: TestUser) async throws -> Bool {
                let friends = try #require(try json(try await client.get("/v1/friends", as: viewer).body)["friends"] as? [[String: Any]])
                return try #require(friends.first { $0["username"] as? String == "bob" })["lastSeen"] != nil
            }
            #expect(try await bobSeen(by: a))
            #expect(try await !bobSeen(by: c))
            #expect(try await client.send(.put, "/v1/friends/\(a.id)/sharing", as: b, json: ["hidden": true]).status == .noContent)
            let again = try #require(try json(try await client.get("/v1/friends", as: a).body)["friends"] as? [[String: Any]])
            #expect(again.first?["lastSeen"] == nil)
            // A friend's override towards Ann decides, not Ann's own towards them.
            #expect(try await client.send(.put, "/v1/friends/\(b.id)/sharing", as: c, json: ["hidden": true]).status == .noContent)
            #expect(try await !bobSeen(by: c))
            #expect(try await client.send(.delete, "/v1/friends/\(c.id)/sharing", as: b).status == .noContent)
            #expect(try await bobSeen(by: c))
            let me = try json(try await client.get("/v1/me", as: b).body)
            let overrides = try #require((me["sharing"] as? [String: Any])?["overrides"] as? [[String: Any]])
            #expect(overrides.first?["hidden"] as? Bool == true)
        }
    }
}

@Suite("Admin park loading")
struct AdminParkTests {
    @Test func anAdminLoadsAParkOverHTTPAndLocateSeesIt() async throws {
        try await TestService.withService { service, client in
            let admin = try await service.admin("root", on: client)
            var document = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: TestService.repoRoot
                .appendingPathComponent("data/parks/kings-island.geojson"))) as? [String: Any])
            var features = try #require(document["features"] as? [[String: Any]])
            var park = features[0]
            var properties = try #require(park["properties"] as? [String: Any])
            properties["id"] = "kings-island-copy"
            properties["name"] = "Kings Island Copy"
            park["properties"] = properties
            features[0] = park
            document["features"] = features
            let created = try await client.send(.put, "/v1/admin/parks/kings-island-copy", as: admin, json: document)
            #expect(created.status == .created)
            #expect(try json(created.body)["zones"] as? Int == 162)
            let again = try await client.send(.put, "/v1/admin/parks/kings-island-copy", as: admin, json: document)
            #expect(again.status == .ok)

            // An app keeps the park's GeoJSON and asks again with its ETag: 304 until the park changes.
            let first = try await client.get("/v1/parks/kings-island-copy", as: admin)
            let etag = try #require(first.headers[.eTag])
            #expect(first.status == .ok && etag.hasPrefix("\"") && etag.count == 66, "\(etag)")
            #expect(try await client.get("/v1/parks/kings-island-copy", as: admin).headers[.eTag] == etag)
            for tag in [etag, "W/\(etag)", "\"other\", \(etag)", "*"] {
                let kept = try await client.execute(uri: "/v1/parks/kings-island-copy", method: .get,
                                                    headers: admin.auth + [.ifNoneMatch: tag]) { $0 }
                #expect(kept.status == .notModified, "\(tag)")
                #expect(kept.body.readableBytes == 0 && kept.headers[.eTag] == etag)
            }
            let stale = try await client.execute(uri: "/v1/parks/kings-island-copy", method: .get,
                                                 headers: admin.auth + [.ifNoneMatch: "\"other\""]) { $0 }
            #expect(stale.status == .ok && stale.headers[.eTag] == etag)
            properties["name"] = "Kings Island Again"
            park["properties"] = properties
            features[0] = park
            document["features"] = features
            #expect(try await client.send(.put, "/v1/admin/parks/kings-island-copy", as: admin, json: document).status == .ok)
            let changed = try await client.execute(uri: "/v1/parks/kings-island-copy", method: .get,
                                                   headers: admin.auth + [.ifNoneMatch: etag]) { $0 }
            #expect(changed.status == .ok && changed.headers[.eTag] != etag)
            let located = try json(try await client.get("/v1/locate?lat=39.3440&lon=-84.2680", as: admin).body)
            let ids = (located["parks"] as? [[String: Any]])?.compactMap { $0["id"] as? String }
            #expect(ids?.contains("kings-island-copy") == true)
        }
    }

    /// The GeoJSON is written once per load of the park and kept; a load the server did not make
    /// (`coasterlife import` in another process: the store written directly, the fence index left
    /// as it was) is seen at the next request, by the park's load time.
    @Test func theParksGeoJSONFollowsALoadFromOutsideTheServer() async throws {
        let clock = TestClock()
        try await TestService.withService(clock: clock) { service, client in
            let ann = try await client.register("ann")
            let first = try await client.get("/v1/parks/cedar-point", as: ann)
            let etag = try #require(first.headers[.eTag])
            #expect(try await client.get("/v1/parks/cedar-point", as: ann).body == first.body)
            var definition = try #require(try await service.service.store.park(ParkID(rawValue: "cedar-point")))
            definition.park.name = "Cedar Point, Loaded Elsewhere"
            clock.advance(1)
            _ = try await service.service.store.replaceParks([definition])
            let changed = try await client.execute(uri: "/v1/parks/cedar-point", method: .get, headers: ann.auth + [.ifNoneMatch: etag]) { $0 }
            #expect(changed.status == .ok && changed.headers[.eTag] != etag)
            #expect(String(buffer: changed.body).contains("Cedar Point, Loaded Elsewhere"))
        }
    }

    /// The park list is written once per set of loads and a park's rides are kept per load of
    /// the park; a load the server did not make is seen at the next request, and so is a new
    /// park. The list carries a strong ETag like the GeoJSON.
    @Test func theParkListAndAParksRidesFollowLoadsFromOutsideTheServer() async throws {
        let clock = TestClock()
        try await TestService.withService(clock: clock) { service, client in
            let ann = try await client.register("ann")
            let store = service.service.store
            func names() async throws -> [String] {
                let list = try json(try await client.get("/v1/parks", as: ann).body)
                return try #require(list["parks"] as? [[String: Any]]).compactMap { $0["name"] as? String }
            }
            func rides() async throws -> [String] {
                let list = try json(try await client.get("/v1/parks/cedar-point/rides", as: ann).body)
                return try #require(list["rides"] as? [[String: Any]]).compactMap { $0["name"] as? String }
            }
            let first = try await client.get("/v1/parks", as: ann)
            let etag = try #require(first.headers[.eTag])
            #expect(first.status == .ok && first.headers[.contentType] == "application/json; charset=utf-8")
            #expect(try await client.get("/v1/parks", as: ann).body == first.body)
            let kept = try await client.execute(uri: "/v1/parks", method: .get, headers: ann.auth + [.ifNoneMatch: etag]) { $0 }
            #expect(kept.status == .notModified && kept.body.readableBytes == 0 && kept.headers[.eTag] == etag)
            #expect(try await names() == (try await store.parkSummaries()).map(\.name))
            let ridesBefore = try await rides()
            #expect(ridesBefore.count > 10)

            var definition = try #require(try await store.park(ParkID(rawValue: "cedar-point")))
            definition.park.name = "Cedar Point, Loaded Elsewhere"
            definition.rides[0].name = "Renamed Elsewhere"
            clock.advance(1)
            _ = try await store.replaceParks([definition])
            let changed = try await client.execute(uri: "/v1/parks", method: .get, headers: ann.auth + [.ifNoneMatch: etag]) { $0 }
            #expect(changed.status == .ok && changed.headers[.eTag] != etag)
            #expect(try await names().contains("Cedar Point, Loaded Elsewhere"))
            #expect(try await rides() == ["Renamed Elsewhere"] + ridesBefore.dropFirst())

            // A new park changes the list, though no load time it had was replaced.
            var copy = definition
            copy.park.id = ParkID(rawValue: "cedar-point-copy")
            copy.park.name = "A Copy"
            copy.zones = []
            copy.rides = []
            _ = try await store.replaceParks([copy])
            #expect(try await names() == (try await store.parkSummaries()).map(\.name))
            #expect(try await names().contains("A Copy"))
        }
    }

    @Test func aBadFileIsRejectedWholeWithFeatureIndexAndNothingWritten() async throws {
        try await TestService.withService { service, client in
            let admin = try await service.admin("root", on: client)
            let raw = try Data(contentsOf: TestService.repoRoot.appendingPathComponent("Tests/Fixtures/osm-park-geofences/cedar-point.geojson"))
            let response = try await client.execute(uri: "/v1/admin/parks/cedar-point", method: .put, headers: admin.auth, body: ByteBuffer(bytes: raw))
            let problem = try expectProblem(response, .unprocessableContent, .invalidParkFile)
            let errors = try #require(problem["errors"] as? [[String: Any]])
            #expect(errors.contains { $0["feature"] as? Int == 1 && $0["pointer"] as? String == "/features/1/geometry" })
            // The shipped Cedar Point is untouched: still five lands.
            let park = try json(try await client.get("/v1/parks/cedar-point", as: admin).body)
            let lands = (park["features"] as? [[String: Any]])?.filter { ($0["properties"] as? [String: Any])?["kind"] as? String == "land" }
            #expect(lands?.count == 5)
            let mismatch = try await client.execute(uri: "/v1/admin/parks/other-id", method: .put, headers: admin.auth,
                                                    body: ByteBuffer(bytes: try Data(contentsOf: TestService.repoRoot.appendingPathComponent("data/parks/kings-island.geojson"))))
            try expectProblem(mismatch, .unprocessableContent, .invalidParkFile)
            let notJSON = try await client.execute(uri: "/v1/admin/parks/x", method: .put, headers: admin.auth, body: ByteBuffer(string: "{nope"))
            #expect(try expectProblem(notJSON, .badRequest, .malformedBody)["detail"] as? String
                == "not valid JSON: unexpected 'n' at byte 1 (line 1, column 2)")
            // A file said to be something else: refused before it is read.
            var plain = admin.auth
            plain[.contentType] = "text/plain"
            let text = try await client.execute(uri: "/v1/admin/parks/kings-island-copy", method: .put, headers: plain,
                                                body: ByteBuffer(bytes: try Data(contentsOf: TestService.repoRoot.appendingPathComponent("data/parks/kings-island.geojson"))))
            try expectProblem(text, .unsupportedMediaType, .unsupportedMediaType)
            #expect(try await client.get("/v1/parks/kings-island-copy", as: admin).status == .notFound)
        }
    }

    /// A park file that is not JSON says where, as every body does: `JSONDecoder` said only "The
    /// given data was not valid JSON.", with no position.
    @Test func aParkFileThatIsNotJSONSaysWhere() async throws {
        try await TestService.withService { service, client in
            let admin = try await service.admin("root", on: client)
            let cut = #"{"type":"FeatureCollection","features":["#
            let response = try await client.execute(uri: "/v1/admin/parks/x", method: .put, headers: admin.auth, body: ByteBuffer(string: cut))
            #expect(try expectProblem(response, .badRequest, .malformedBody)["detail"] as? String
                == "not valid JSON: unexpected end of the body at byte 40 (line 1, column 41)")
            // A file of many lines: its line and column too.
            let lines = "{\n  \"type\": \"FeatureCollection\",\n  \"features\": [],\n}\n"
            let comma = try await client.execute(uri: "/v1/admin/parks/x", method: .put, headers: admin.auth, body: ByteBuffer(string: lines))
            #expect(try expectProblem(comma, .badRequest, .malformedBody)["detail"] as? String
                == "not valid JSON: a comma before the } at byte 49 (line 3, column 17)")
            #expect(try await client.get("/v1/parks/x", as: admin).status == .notFound)
        }
    }

    @Test func bodiesOverTheLimitAre413() async throws {
        try await TestService.withService { service, client in
            let admin = try await service.admin("root", on: client)
            let big = ByteBuffer(repeating: UInt8(ascii: " "), count: 16 * 1024 * 1024 + 1)
            let response = try await client.execute(uri: "/v1/admin/parks/big", method: .put, headers: admin.auth, body: big)
            try expectProblem(response, .contentTooLarge, .payloadTooLarge)
        }
    }
}
