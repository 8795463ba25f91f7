import CoasterAPI
import CoasterCore
import CoasterHTTP
import CoasterService
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// Profiles, people search, "riders like you" and follows over HTTP (docs: People): validation
/// problems that name what is wrong, the opt-in, blocks both ways, no enumeration, idempotent
/// follows.
@Suite("People")
struct PeopleTests {
    static let ride = "cedar-point.millennium-force"

    /// `PATCH /v1/me` as `user`; the answer.
    static func patch(_ client: some TestClientProtocol, _ user: TestUser, _ body: [String: Any]) async throws -> TestResponse {
        try await client.send(.patch, "/v1/me", as: user, json: body)
    }

    /// The usernames a search finds, as `user` asks.
    static func found(_ client: some TestClientProtocol, _ q: String, as user: TestUser, sourceLocation: SourceLocation = #_sourceLocation)
        async throws -> [String] {
        let query = q.addingPercentEncoding(withAllowedCharacters: .alphanumerics.intersection(.urlQueryAllowed)) ?? q
        let r = try await client.get("/v1/people/search?q=\(query)", as: user)
        #expect(r.status == .ok, "\(String(buffer: r.body))", sourceLocation: sourceLocation)
        let people = try json(r.body)["people"] as? [[String: Any]] ?? []
        return people.compactMap { $0["username"] as? String }
    }

    @Test func theProfileIsPatchedAndShown() async throws {
        try await TestService.withApp { client in
            let ann = try await client.register("ann"), bob = try await client.register("bob")
            try await client.befriend(ann, bob)
            let r = try await Self.patch(client, ann, [
                "description": "Coaster nerd", "status": ["emoji": "🎢", "text": " Front row "], "homePark": "cedar-point",
                "favouriteRides": [Self.ride, "cedar-point.steel-vengeance"], "findable": true,
            ])
            #expect(r.status == .ok, "\(String(buffer: r.body))")
            let me = try json(try await client.get("/v1/me", as: ann).body)
            #expect(me["description"] as? String == "Coaster nerd" && me["bio"] as? String == "Coaster nerd")
            #expect(me["status"] as? [String: String] == ["emoji": "🎢", "text": "Front row"])
            #expect((me["homePark"] as? [String: Any])?["name"] as? String == "Cedar Point")
            #expect((me["favouriteRides"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [Self.ride, "cedar-point.steel-vengeance"])
            #expect(me["findable"] as? Bool == true && me["followers"] as? Int == 0 && me["following"] as? Int == 0)

            // The friend's view of the profile page.
            let page = try json(try await client.get("/v1/users/\(ann.id)", as: bob).body)
            #expect(page["description"] as? String == "Coaster nerd" && page["bio"] as? String == "Coaster nerd")
            #expect((page["status"] as? [String: String])?["emoji"] == "🎢")
            #expect((page["homePark"] as? [String: Any])?["id"] as? String == "cedar-point")
            #expect((page["favouriteRides"] as? [[String: Any]])?.count == 2)
            #expect(page["followedByYou"] as? Bool == false && page["followers"] as? Int == 0)

            // `bio` still sets it; null and [] clear; members left out stay.
            let cleared = try json(try await Self.patch(client, ann, ["bio": "hi", "status": NSNull(), "homePark": NSNull(), "favouriteRides": []]).body)
            #expect(cleared["description"] as? String == "hi" && cleared["status"] == nil && cleared["homePark"] == nil)
            #expect((cleared["favouriteRides"] as? [Any])?.isEmpty == true && cleared["findable"] as? Bool == true)
        }
    }

    @Test(arguments: [
        (["status": ["emoji": "a"]], "/status/emoji"),
        (["status": ["emoji": "🎢🎢"]], "/status/emoji"),
        (["status": ["emoji": "1"]], "/status/emoji"),
        (["status": ["emoji": "🎢", "text": String(repeating: "x", count: 81)]], "/status/text"),
        (["status": ["emoji": "🎢", "text": "two\nlines"]], "/status/text"),
        (["homePark": "Cedar Point"], "/homePark"),
        (["homePark": "atlantis"], "/homePark"),
        (["favouriteRides": ["cedar-point.millennium-force", "nope"]], "/favouriteRides/1"),
        (["favouriteRides": ["cedar-point.millennium-force", "cedar-point.no-such-ride"]], "/favouriteRides/1"),
        (["favouriteRides": ["cedar-point.millennium-force", "cedar-point.millennium-force"]], "/favouriteRides/1"),
        (["favouriteRides": Array(repeating: "cedar-point.millennium-force", count: 11)], "/favouriteRides"),
        (["bio": "one", "description": "two"], "/description"),
        (["description": String(repeating: "x", count: 501)], "/description"),
        (["displayName": ""], "/displayName"),
    ] as [([String: any Sendable], String)])
    func aRefusedMemberIsNamed(_ body: [String: any Sendable], _ pointer: String) async throws {
        try await TestService.withApp { client in
            let ann = try await client.register("ann")
            let before = String(buffer: try await client.get("/v1/me", as: ann).body)
            let problem = try expectProblem(try await Self.patch(client, ann, body), .badRequest, .invalidField)
            #expect((problem["errors"] as? [[String: Any]])?.first?["pointer"] as? String == pointer, "\(problem)")
            // Nothing of a refused patch is written.
            #expect(String(buffer: try await client.get("/v1/me", as: ann).body) == before)
        }
    }

    @Test func everyRefusedMemberIsNamedAtOnce() async throws {
        try await TestService.withApp { client in
            let ann = try await client.register("ann")
            let problem = try expectProblem(try await Self.patch(client, ann, ["status": ["emoji": "x"], "homePark": "A B", "favouriteRides": ["x"]]),
                                            .badRequest, .invalidField)
            #expect((problem["errors"] as? [[String: Any]])?.compactMap { $0["pointer"] as? String } == ["/status/emoji", "/homePark", "/favouriteRides/0"])
            // Wrong types are the decoder's 400, naming the member.
            let typed = try expectProblem(try await Self.patch(client, ann, ["findable": "yes"]), .badRequest, .malformedBody)
            #expect((typed["detail"] as? String)?.contains("findable") == true, "\(typed)")
        }
    }

    @Test func searchFindsOnlyThoseWhoOptedIn() async throws {
        try await TestService.withApp { client in
            let me = try await client.register("searcher")
            let zoe = try await client.register("zoe_r"), shy = try await client.register("zoe_shy")
            _ = try await Self.patch(client, zoe, ["displayName": "Zoë Ångström", "findable": true])
            _ = try await Self.patch(client, shy, ["displayName": "Zoë Shy"])
            #expect(try await Self.found(client, "ZOE", as: me) == ["zoe_r"])
            #expect(try await Self.found(client, "angs", as: me) == ["zoe_r"])
            #expect(try await Self.found(client, "shy", as: me) == [])

            // A hit and a miss are the same object; a hit says who they are to the caller.
            let hit = try json(try await client.get("/v1/people/search?q=zoe", as: me).body)
            let miss = try json(try await client.get("/v1/people/search?q=nobody", as: me).body)
            #expect(Set(hit.keys) == ["people"] && Set(miss.keys) == ["people"])
            #expect((miss["people"] as? [Any])?.isEmpty == true)
            let person = try #require((hit["people"] as? [[String: Any]])?.first)
            #expect(person["id"] as? Int == Int(zoe.id) && person["displayName"] as? String == "Zoë Ångström")
            #expect(person["friend"] as? Bool == false && person["following"] as? Bool == false)
        }
    }

    @Test func blocksHideBothWaysAndSayNothing() async throws {
        try await TestService.withApp { client in
            let ann = try await client.register("ann"), bob = try await client.register("bob")
            for user in [ann, bob] { _ = try await Self.patch(client, user, ["findable": true]) }
            #expect(try await Self.found(client, "bob", as: ann) == ["bob"])
            #expect(try await client.send(.put, "/v1/users/\(bob.id)/follow", as: ann).status == .noContent)
            #expect(try await client.send(.put, "/v1/blocks/\(ann.id)", as: bob).status == .noContent)
            #expect(try await Self.found(client, "bob", as: ann) == [])
            #expect(try await Self.found(client, "ann", as: bob) == [])
            // The block ended the follow, and a new one meets what an unknown user meets.
            #expect(try json(try await client.get("/v1/me", as: bob).body)["followers"] as? Int == 0)
            let blocked = try expectProblem(try await client.send(.put, "/v1/users/\(bob.id)/follow", as: ann), .notFound, .noSuchUser)
            let unknown = try expectProblem(try await client.send(.put, "/v1/users/999999/follow", as: ann), .notFound, .noSuchUser)
            #expect(blocked["title"] as? String == unknown["title"] as? String && blocked["detail"] as? String == unknown["detail"] as? String)
            _ = try expectProblem(try await client.send(.put, "/v1/users/\(ann.id)/follow", as: bob), .notFound, .noSuchUser)
        }
    }

    @Test func followsAreIdempotent() async throws {
        try await TestService.withApp { client in
            let ann = try await client.register("ann"), bob = try await client.register("bob")
            for _ in 0..<2 { #expect(try await client.send(.put, "/v1/users/\(bob.id)/follow", as: ann).status == .noContent) }
            #expect(try json(try await client.get("/v1/me", as: bob).body)["followers"] as? Int == 1)
            #expect(try json(try await client.get("/v1/me", as: ann).body)["following"] as? Int == 1)
            _ = try await Self.patch(client, bob, ["findable": true])
            let hit = try #require((try json(try await client.get("/v1/people/search?q=bob", as: ann).body)["people"] as? [[String: Any]])?.first)
            #expect(hit["following"] as? Bool == true)
            for _ in 0..<2 { #expect(try await client.send(.delete, "/v1/users/\(bob.id)/follow", as: ann).status == .noContent) }
            #expect(try json(try await client.get("/v1/me", as: bob).body)["followers"] as? Int == 0)
            #expect(try await client.send(.delete, "/v1/users/999999/follow", as: ann).status == .noContent)

            _ = try expectProblem(try await client.send(.put, "/v1/users/\(ann.id)/follow", as: ann), .badRequest, .cannotFollowSelf)
            _ = try expectProblem(try await client.send(.put, "/v1/users/zero/follow", as: ann), .badRequest, .invalidParameter)
            _ = try expectProblem(try await client.send(.put, "/v1/users/\(bob.id)/follow", as: nil), .unauthorized, .unauthorized)
        }
    }

    @Test(arguments: [
        "/v1/people/search", "/v1/people/search?q=", "/v1/people/search?q=%20%20", "/v1/people/search?q=" + String(repeating: "a", count: 65),
        "/v1/people/search?q=a&limit=0", "/v1/people/search?q=a&limit=51", "/v1/people/search?q=a&limit=x",
        "/v1/people/suggested?limit=0", "/v1/people/suggested?limit=51",
    ])
    func badParametersAreNamed(_ uri: String) async throws {
        try await TestService.withApp { client in
            let ann = try await client.register("ann")
            let problem = try expectProblem(try await client.get(uri, as: ann), .badRequest, .invalidParameter)
            let name = (problem["invalid-params"] as? [[String: Any]])?.first?["name"] as? String
            #expect(name == (uri.contains("limit=") ? "limit" : "q"), "\(problem)")
        }
    }

    @Test func aSixtyFourCharacterSearchIsAllowed() async throws {
        try await TestService.withApp { client in
            let ann = try await client.register("ann")
            #expect(try await Self.found(client, String(repeating: "é", count: 64), as: ann) == [])
        }
    }

    @Test func searchesAreRateLimited() async throws {
        let s = try await TestService(configure: { $0.limits.peopleSearches = RateLimit(perSecond: 0.01, burst: 2) })
        defer { s.remove() }
        try await s.app().test(.router) { client in
            let ann = try await client.register("ann")
            for _ in 0..<2 { #expect(try await client.get("/v1/people/search?q=a", as: ann).status == .ok) }
            let r = try await client.get("/v1/people/suggested", as: ann)
            _ = try expectProblem(r, .tooManyRequests, .tooManyRequests)
            #expect(r.headers[.retryAfter] != nil)
        }
    }

    @Test func suggestionsAreFindableFriendsOfFriends() async throws {
        try await TestService.withApp { client in
            let me = try await client.register("rider"), friend = try await client.register("friend")
            let fof = try await client.register("fof"), shy = try await client.register("shy"), blocker = try await client.register("blocker")
            try await client.befriend(me, friend)
            for user in [fof, shy, blocker] { try await client.befriend(friend, user) }
            for user in [fof, blocker] { _ = try await Self.patch(client, user, ["findable": true]) }
            let r = try await client.get("/v1/people/suggested", as: me)
            #expect(r.status == .ok)
            var people = try json(r.body)["people"] as? [[String: Any]] ?? []
            #expect(people.compactMap { $0["username"] as? String } == ["fof", "blocker"])
            #expect(people.first?["mutualFriends"] as? Int == 1 && people.first?["sharedCredits"] as? Int == 0)
            #expect(people.first?["friend"] as? Bool == false)
            _ = try await client.send(.put, "/v1/blocks/\(me.id)", as: blocker)
            people = try json(try await client.get("/v1/people/suggested?limit=5", as: me).body)["people"] as? [[String: Any]] ?? []
            #expect(people.compactMap { $0["username"] as? String } == ["fof"])
        }
    }

    @Test func aFindableUsersPhotoIsShownToThoseWhoFindThem() async throws {
        try await TestService.withApp { client in
            let ann = try await client.register("ann"), bob = try await client.register("bob"), cat = try await client.register("cat")
            let png = try Data(contentsOf: TestService.repoRoot.appendingPathComponent("Tests/CoasterAPITests/Data/coaster.png"))
            let upload = try await client.execute(uri: "/v1/me/photos", method: .post, headers: bob.auth, body: ByteBuffer(bytes: png))
            let photo = try #require(try json(upload.body)["id"] as? Int)
            #expect(try await client.send(.put, "/v1/me/photo", as: bob, json: ["photoId": photo]).status == .noContent)
            #expect(try await client.get("/v1/photos/\(photo)", as: ann).status == .notFound)
            _ = try await Self.patch(client, bob, ["findable": true])
            let hit = try #require((try json(try await client.get("/v1/people/search?q=bob", as: ann).body)["people"] as? [[String: Any]])?.first)
            #expect(hit["photoId"] as? Int == photo)
            #expect(try await client.get("/v1/photos/\(photo)", as: ann).status == .ok)
            _ = try await client.send(.put, "/v1/blocks/\(cat.id)", as: bob)
            #expect(try await client.get("/v1/photos/\(photo)", as: cat).status == .notFound)
        }
    }
}
