import CoasterAPI
import CoasterCore
import CoasterHTTP
import CoasterService
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// Trip reports over HTTP (docs: Posts): the whole story, and bad input.
@Suite("Posts")
struct PostTests {
    static func create(_ client: some TestClientProtocol, as user: TestUser, _ body: [String: Any],
                       sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: Any] {
        let r = try await client.send(.post, "/v1/posts", as: user, json: body)
        #expect(r.status == .created, "\(String(buffer: r.body))", sourceLocation: sourceLocation)
        let object = try json(r.body)
        #expect(r.headers[.location] == "/v1/posts/\(object["id"] as? Int ?? 0)", sourceLocation: sourceLocation)
        return object
    }

    /// The ids of a feed page's posts, and the page.
    static func feed(_ client: some TestClientProtocol, _ path: String, as user: TestUser,
                     sourceLocation: SourceLocation = #_sourceLocation) async throws -> (ids: [Int], page: [String: Any]) {
        let r = try await client.get(path, as: user)
        #expect(r.status == .ok, "\(path): \(String(buffer: r.body).prefix(300))", sourceLocation: sourceLocation)
        let page = try json(r.body)
        return ((page["posts"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? Int }, page)
    }

    static func hits(_ client: some TestClientProtocol, _ query: String, as user: TestUser,
                     sourceLocation: SourceLocation = #_sourceLocation) async throws -> [Int] {
        let r = try await client.get("/v1/search/posts?\(query)", as: user)
        #expect(r.status == .ok, "\(query): \(String(buffer: r.body).prefix(300))", sourceLocation: sourceLocation)
        return (try json(r.body)["results"] as? [[String: Any]] ?? []).compactMap { ($0["post"] as? [String: Any])?["id"] as? Int }
    }

    /// Issue 49's "done means", for posts: two friends post trip reports from Cedar Point with a
    /// photo (served without GPS) and a ride tag; each sees the other's in home and in the park
    /// feed, thumbs one up and comments; search "maverick launch" finds the post; a user the first
    /// blocked sees none of it. The "I was there" of a post shows to others only once the visit
    /// behind it is older than the location time-to-live.
    @Test func twoFriendsPostTripReportsFromCedarPoint() async throws {
        let clock = TestClock()
        try await TestService.withService(clock: clock) { s, client in
            let ann = try await client.register("ann")
            let bob = try await client.register("bob")
            let eve = try await client.register("eve")
            try await client.befriend(ann, bob)
            // Ann is at Cedar Point: a validated visit backs her "I was there".
            _ = try await client.postFixes(FixTests.walkIn(endingAt: clock.now()), as: ann)
            clock.advance(60)

            let upload = try await PhotoTests.upload(client, "coaster-gps.jpg", as: ann)
            #expect(upload.status == .created)
            let photo = try #require(try json(upload.body)["id"] as? Int)
            let annPost = try await Self.create(client, as: ann, [
                "text": "Maverick's launch is still the best in the park! #CedarPoint #launch", "photos": [photo],
                "rides": ["cedar-point.maverick"], "verifiedAt": "cedar-point",
            ])
            let annID = try #require(annPost["id"] as? Int)
            #expect(annPost["hashtags"] as? [String] == ["cedarpoint", "launch"])
            #expect((annPost["parks"] as? [[String: Any]])?.first?["id"] as? String == "cedar-point", "a ride's park is what the post is about")
            #expect((annPost["rides"] as? [[String: Any]])?.first?["name"] as? String == "Maverick")
            #expect((annPost["verified"] as? [String: Any])?["park"] as? [String: Any] != nil, "the author sees her claim at once")
            #expect(annPost["edited"] as? Bool == false)

            let bobUpload = try await PhotoTests.upload(client, "coaster.png", as: bob)
            let bobPhoto = try #require(try json(bobUpload.body)["id"] as? Int)
            let bobPost = try await Self.create(client, as: bob, [
                "text": "Rode Millennium Force twice", "photos": [bobPhoto], "rides": ["cedar-point.millennium-force"], "visibility": "friends",
            ])
            let bobID = try #require(bobPost["id"] as? Int)

            // Each sees the other's, in home and in the park feed.
            #expect(try await Self.feed(client, "/v1/feed/home", as: ann).ids == [bobID, annID])
            #expect(try await Self.feed(client, "/v1/feed/home", as: bob).ids == [bobID, annID])
            #expect(try await Self.feed(client, "/v1/feed/park/cedar-point", as: bob).ids == [bobID, annID])
            #expect(try await Self.feed(client, "/v1/feed/ride/cedar-point.maverick", as: bob).ids == [annID])
            #expect(try await Self.feed(client, "/v1/feed/tag/%23CEDARPOINT", as: bob).ids == [annID])
            // Bob's post is for friends: not in the public feed, and not to Eve.
            #expect(try await Self.feed(client, "/v1/feed/public", as: eve).ids == [annID])
            try expectProblem(try await client.get("/v1/posts/\(bobID)", as: eve), .notFound, .noSuchPost)

            // Bob sees Ann's photo, served without GPS; her claim waits for the privacy window.
            let fetched = try await client.get("/v1/photos/\(photo)", as: bob)
            #expect(fetched.status == .ok)
            #expect(!PhotoTests.hasLocation(Data(fetched.body.readableBytesView)))
            let seen = try json(try await client.get("/v1/posts/\(annID)", as: bob).body)
            #expect(seen["verified"] is NSNull, "Bob learnt where Ann is from her post")

            // Thumbs and comments.
            let thumbed = try json(try await client.send(.put, "/v1/posts/\(annID)/reaction", as: bob, json: ["value": "up"]).body)
            #expect((thumbed["counts"] as? [String: Any])?["up"] as? Int == 1 && thumbed["reaction"] as? String == "up")
            let changed = try json(try await client.send(.put, "/v1/posts/\(annID)/reaction", as: bob, json: ["value": "down"]).body)
            #expect((changed["counts"] as? [String: Any])?["up"] as? Int == 0 && (changed["counts"] as? [String: Any])?["down"] as? Int == 1)
            _ = try await client.send(.put, "/v1/posts/\(annID)/reaction", as: bob, json: ["value": "up"])
            let comment = try await client.send(.post, "/v1/posts/\(annID)/comments", as: bob, json: ["text": "That launch! Jealous."])
            #expect(comment.status == .created)
            let thread = try await client.get("/v1/posts/\(annID)/comments", as: ann)
            let comments = try json(thread.body)["comments"] as? [[String: Any]] ?? []
            #expect(comments.map { $0["text"] as? String } == ["That launch! Jealous."], "\(String(buffer: thread.body))")
            let counted = try json(try await client.get("/v1/posts/\(annID)", as: ann).body)
            #expect((counted["counts"] as? [String: Any])?["comments"] as? Int == 1 && (counted["counts"] as? [String: Any])?["up"] as? Int == 1)

            // Search finds it, for Bob and for a stranger (the post is public).
            #expect(try await Self.hits(client, "q=maverick%20launch", as: bob) == [annID])
            #expect(try await Self.hits(client, "q=jealous", as: ann) == [annID], "a comment's words find its post")
            #expect(try await Self.hits(client, "q=%22still%20the%20best%22&park=cedar-point&sort=newest", as: bob) == [annID])
            #expect(try await Self.hits(client, "q=maverick&author=\(bob.id)", as: bob).isEmpty)

            // Once the visit is older than the time-to-live, Bob sees the claim too.
            clock.advance(s.configuration.location.privacy.timeToLive + 600)
            _ = try await client.postFixes([fixJSON(41.4, -82.4, at: clock.now(), id: "home")], as: ann)
            clock.advance(s.configuration.location.privacy.timeToLive + 600)
            let later = try json(try await client.get("/v1/posts/\(annID)", as: bob).body)
            #expect(((later["verified"] as? [String: Any])?["park"] as? [String: Any])?["id"] as? String == "cedar-point")

            // Ann blocks Eve: Eve sees none of it, nor Ann hers.
            #expect(try await client.send(.put, "/v1/blocks/\(eve.id)", as: ann).status.code < 300)
            let evePost = try await Self.create(client, as: eve, ["text": "Maverick launch fan here"])
            #expect(try await Self.feed(client, "/v1/feed/public", as: eve).ids == [evePost["id"] as? Int ?? 0])
            #expect(try await Self.feed(client, "/v1/feed/park/cedar-point", as: eve).ids.isEmpty)
            #expect(try await Self.feed(client, "/v1/feed/user/\(ann.id)", as: eve).ids.isEmpty)
            #expect(try await Self.hits(client, "q=maverick", as: eve) == [evePost["id"] as? Int ?? 0])
            try expectProblem(try await client.get("/v1/posts/\(annID)", as: eve), .notFound, .noSuchPost)
            try expectProblem(try await client.get("/v1/posts/\(annID)/comments", as: eve), .notFound, .noSuchPost)
            try expectProblem(try await client.send(.post, "/v1/posts/\(annID)/comments", as: eve, json: ["text": "hi"]), .notFound, .noSuchPost)
            try expectProblem(try await client.get("/v1/photos/\(photo)", as: eve), .notFound, .noSuchPhoto)
            #expect(!(try await Self.feed(client, "/v1/feed/public", as: ann).ids.contains(evePost["id"] as? Int ?? 0)))

            // The author edits (marked edited) and deletes.
            let edited = try json(try await client.send(.patch, "/v1/posts/\(annID)", as: ann, json: ["text": "Maverick's launch, best in Ohio #launch"]).body)
            #expect(edited["edited"] as? Bool == true && edited["hashtags"] as? [String] == ["launch"])
            try expectProblem(try await client.send(.patch, "/v1/posts/\(annID)", as: bob, json: ["text": "mine now"]), .forbidden, .forbidden)
            #expect(try await client.send(.delete, "/v1/posts/\(annID)", as: ann).status == .noContent)
            try expectProblem(try await client.get("/v1/posts/\(annID)", as: bob), .notFound, .noSuchPost)
            #expect(try await Self.feed(client, "/v1/feed/home", as: bob).ids == [bobID])
        }
    }

    /// Every bad field is a problem naming it: an empty post with no photo, 11 photos, a tag to an
    /// unknown ride, a reaction other than up or down, a comment on a post the caller cannot see,
    /// a tampered cursor. An FTS5-syntax query is plain words, never an error.
    @Test func badInputIsNamed() async throws {
        try await TestService.withApp { client in
            let ann = try await client.register("ann")
            let carl = try await client.register("carl")
            func pointers(_ r: TestResponse) throws -> [String] {
                ListTests.pointers(try expectProblem(r, .unprocessableContent, .invalidPost))
            }
            #expect(try pointers(try await client.send(.post, "/v1/posts", as: ann, json: ["text": "  "])) == ["/text"])
            #expect(try pointers(try await client.send(.post, "/v1/posts", as: ann, json: ["text": "x", "photos": Array(1...11)])) == ["/photos"])
            #expect(try pointers(try await client.send(.post, "/v1/posts", as: ann, json: ["text": "x", "rides": ["cedar-point.no-such-ride"]])) == ["/rides/0"])
            #expect(try pointers(try await client.send(.post, "/v1/posts", as: ann, json: ["text": "x", "rides": ["Not An Id"]])) == ["/rides/0"])
            #expect(try pointers(try await client.send(.post, "/v1/posts", as: ann, json: ["text": "x", "photos": [12345]])) == ["/photos/0"])
            #expect(try pointers(try await client.send(.post, "/v1/posts", as: ann, json: ["text": String(repeating: "é", count: 5_001)])) == ["/text"])
            #expect(try pointers(try await client.send(.post, "/v1/posts", as: ann, json: ["text": "x", "visibility": "everyone"])) == ["/visibility"])
            #expect(try pointers(try await client.send(.post, "/v1/posts", as: ann, json: ["text": "x", "verifiedAt": "cedar-point"])) == ["/verifiedAt"])
            // 5,000 user-perceived characters fit, whatever their bytes.
            let flags = String(repeating: "🇺🇸", count: 1_000) + String(repeating: "e\u{301}", count: 4_000)
            #expect(try await client.send(.post, "/v1/posts", as: ann, json: ["text": flags]).status == .created)

            let secret = try await Self.create(client, as: ann, ["text": "friends only", "visibility": "friends"])
            let id = try #require(secret["id"] as? Int)
            #expect(try pointers(try await client.send(.put, "/v1/posts/\(id)/reaction", as: ann, json: ["value": "sideways"])) == ["/value"])
            try expectProblem(try await client.send(.post, "/v1/posts/\(id)/comments", as: carl, json: ["text": "hello"]), .notFound, .noSuchPost)
            try expectProblem(try await client.send(.put, "/v1/posts/\(id)/reaction", as: carl, json: ["value": "up"]), .notFound, .noSuchPost)
            #expect(try pointers(try await client.send(.post, "/v1/posts/\(id)/comments", as: ann, json: ["text": String(repeating: "a", count: 1_001)])) == ["/text"])
            #expect(try pointers(try await client.send(.patch, "/v1/posts/\(id)", as: ann, json: [:] as [String: Any])) == [""])

            for tampered in ["garbage", "c1.!!!", "c1.LTE", "c1." + Data("99999999999999999999".utf8).base64EncodedString()] {
                let r = try await client.get("/v1/feed/home?after=\(tampered.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")", as: ann)
                #expect(try expectProblem(r, .badRequest, .invalidParameter)["detail"] as? String ?? "" != "", "\(tampered)")
            }
            try expectProblem(try await client.get("/v1/feed/home?limit=0", as: ann), .badRequest, .invalidParameter)
            try expectProblem(try await client.get("/v1/feed/tag/%23", as: ann), .badRequest, .invalidParameter)
            try expectProblem(try await client.get("/v1/feed/ride/maverick", as: ann), .badRequest, .invalidParameter)
            try expectProblem(try await client.get("/v1/posts/0", as: ann), .badRequest, .invalidParameter)

            for syntax in ["friends%20OR%20only", "NEAR(friends%20only)", "%22friends", "*", "friends%20-only%20%5E", "only:*%20%26%20!friends"] {
                let r = try await client.get("/v1/search/posts?q=\(syntax)", as: ann)
                #expect(r.status == .ok, "\(syntax): \(String(buffer: r.body).prefix(200))")
            }
            #expect(try await Self.hits(client, "q=friends%20OR%20only", as: ann) == [], "OR is a word: no post holds it")
            #expect(try await Self.hits(client, "q=NEAR(friends%20only)", as: ann) == [], "NEAR is a word")
            #expect(try await Self.hits(client, "q=%22friends", as: ann) == [id], "an unclosed quote is a phrase to the end")
            let refused = try expectProblem(try await client.get("/v1/search/posts?q=&sort=best&from=yesterday&limit=500", as: ann), .unprocessableContent, .invalidSearch)
            #expect(Set((refused["invalid-params"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }) == ["q", "sort", "from", "limit"])
        }
    }

    /// Paging a feed with `after` and refreshing it with `since` skips and repeats nothing.
    @Test func feedPagesNeitherSkipNorRepeat() async throws {
        try await TestService.withApp { client in
            let ann = try await client.register("ann")
            var made: [Int] = []
            for n in 0..<7 { made.append(try #require(try await Self.create(client, as: ann, ["text": "post \(n)"])["id"] as? Int)) }
            var seen: [Int] = []
            var path = "/v1/feed/user/\(ann.id)?limit=3"
            var newest: String?
            while true {
                let (ids, page) = try await Self.feed(client, path, as: ann)
                if newest == nil { newest = page["newest"] as? String }
                seen += ids
                guard let next = page["next"] as? String else { break }
                path = "/v1/feed/user/\(ann.id)?limit=3&after=\(next)"
            }
            #expect(seen == made.reversed())
            var fresh: [Int] = []
            for n in 0..<5 { fresh.append(try #require(try await Self.create(client, as: ann, ["text": "new \(n)"])["id"] as? Int)) }
            var refreshed: [Int] = []
            var since = try #require(newest)
            while true {
                let (ids, page) = try await Self.feed(client, "/v1/feed/user/\(ann.id)?limit=2&since=\(since)", as: ann)
                guard !ids.isEmpty else { break }
                #expect(ids == ids.sorted(by: >), "a page reads newest first")
                refreshed += ids.reversed()
                since = try #require(page["newest"] as? String)
            }
            #expect(refreshed == fresh)
        }
    }
}
