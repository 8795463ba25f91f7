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

/// Ride lists over HTTP (docs: Lists): the whole story with its live pushes, and bad input.
@Suite("Lists")
struct ListTests {
    /// Creates a list as `user`; returns its JSON (and expects 201 with its Location).
    static func create(_ client: some TestClientProtocol, as user: TestUser, _ body: [String: Any],
                       sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: Any] {
        let r = try await client.send(.post, "/v1/lists", as: user, json: body)
        #expect(r.status == .created, "\(String(buffer: r.body))", sourceLocation: sourceLocation)
        let object = try json(r.body)
        #expect(r.headers[.location] == "/v1/lists/\(object["id"] as? Int ?? 0)", sourceLocation: sourceLocation)
        return object
    }

    /// Adds an item as `user`; returns its JSON (and expects 201).
    static func add(_ client: some TestClientProtocol, _ list: Int, as user: TestUser, _ body: [String: Any],
                    sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: Any] {
        let r = try await client.send(.post, "/v1/lists/\(list)/items", as: user, json: body)
        #expect(r.status == .created, "\(body): \(String(buffer: r.body))", sourceLocation: sourceLocation)
        return try json(r.body)
    }

    /// The list's page as `user` reads it (nil: anonymous).
    static func page(_ client: some TestClientProtocol, _ path: String, as user: TestUser?,
                     sourceLocation: SourceLocation = #_sourceLocation) async throws -> (list: [String: Any], items: [[String: Any]]) {
        let r = try await client.get(path, as: user)
        #expect(r.status == .ok, "\(path): \(String(buffer: r.body).prefix(300))", sourceLocation: sourceLocation)
        let object = try json(r.body)
        return (object["list"] as? [String: Any] ?? [:], object["items"] as? [[String: Any]] ?? [])
    }

    /// An item's catalogue id (its ride's, or its park's).
    static func target(_ item: [String: Any]) -> String {
        ((item["ride"] ?? item["park"]) as? [String: Any])?["id"] as? String ?? ""
    }

    /// The check of the item holding `target`, as (how, at) or nil.
    static func check(_ items: [[String: Any]], _ target: String) -> String? {
        (items.first { Self.target($0) == target }?["checked"] as? [String: Any])?["how"] as? String
    }

    /// The next live event about lists (or the test's sentinel), past the friends' locations and
    /// transitions the same connection carries.
    static func nextListEvent<I: AsyncIteratorProtocol>(_ messages: inout I, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: Any]?
    where I.Element == WebSocketMessage {
        while let event = try await LiveTests.nextEvent(&messages, sourceLocation: sourceLocation) {
            if ["list-change", "sentinel"].contains(event["type"] as? String) { return event }
        }
        return nil
    }

    static func pointers(_ problem: [String: Any]) -> [String] {
        (problem["errors"] as? [[String: Any]] ?? []).compactMap { $0["pointer"] as? String }
    }

    /// Issue 48's "done means": with the repository's catalogue over the real parks, Ann finds
    /// B&M hypers and a misspelt Millennium Force, builds "Ohio coasters", shares it with her friend
    /// Bob (a stranger gets 404) and by link (a stranger with the link reads it signed out; a new
    /// link retires the old); Bob follows it. Ann walks into Cedar Point and logs Millennium Force:
    /// the ride and the park check themselves off, at once to her, and to Bob (live and on his
    /// changes page) once the location time-to-live has passed; her check by hand reaches him at
    /// once. Unchecking by hand sticks against a later log; Bob copies the list as his own.
    @Test func ohioCoastersCheckThemselvesOff() async throws {
        var location = LocationPolicy()
        location.liveHeartbeat = .milliseconds(200)
        let clock = TestClock()
        let s = try await TestService(location: location, clock: clock) {
            $0.seedCatalogFile = CatalogTests.catalogFile.path
        }
        defer { s.remove() }
        let ttl = s.configuration.location.privacy.timeToLive
        try await s.app().test(.live) { client in
            let ann = try await client.register("ann")
            let bob = try await client.register("bob")
            let carl = try await client.register("carl")
            try await client.befriend(ann, bob)

            // From the catalogue: B&M hypers, and a misspelt Millennium Force.
            let hypers = try await CatalogTests.search(client, "q=b%26m%20hyper", as: ann)
            #expect(Set(CatalogTests.rideIDs(hypers)).isSuperset(of: ["kings-island.diamondback", "kings-island.orion"]))
            let typo = try await CatalogTests.search(client, "q=millenium", as: ann)
            let millennium = try #require(CatalogTests.rideIDs(typo).first)
            #expect(millennium == "cedar-point.millennium-force" && typo["approximate"] as? Bool == true)

            let ohio = try await Self.create(client, as: ann, ["title": "Ohio coasters", "description": "Every coaster in Ohio", "visibility": "friends"])
            let id = try #require(ohio["id"] as? Int)
            #expect(ohio["visibility"] as? String == "friends" && ohio["shareUrl"] == nil)
            #expect((ohio["owner"] as? [String: Any])?["username"] as? String == "ann")
            let mfItem = try await Self.add(client, id, as: ann, ["ride": millennium, "note": "front row"])
            #expect(mfItem["kind"] as? String == "ride" && mfItem["position"] as? Int == 0)
            #expect(mfItem.keys.contains("checked") && mfItem["checked"] is NSNull, "an unchecked item says checked: null")
            #expect(((mfItem["ride"] as? [String: Any])?["park"] as? [String: Any])?["name"] as? String == "Cedar Point")
            _ = try await Self.add(client, id, as: ann, ["ride": "kings-island.orion"])
            _ = try await Self.add(client, id, as: ann, ["ride": "kings-island.diamondback", "position": 1])
            let parkItem = try await Self.add(client, id, as: ann, ["park": "cedar-point"])
            #expect((parkItem["park"] as? [String: Any])?["fenced"] as? Bool == true)
            let mine = try await Self.page(client, "/v1/lists/\(id)", as: ann)
            #expect(mine.items.map(Self.target) == [millennium, "kings-island.diamondback", "kings-island.orion", "cedar-point"])
            #expect(mine.items.map { $0["position"] as? Int ?? -1 } == [0, 1, 2, 3])
            #expect(mine.list["items"] as? Int == 4 && mine.list["checked"] as? Int == 0)
            let byHeight = try await Self.page(client, "/v1/lists/\(id)?sort=height", as: ann)
            #expect(byHeight.items.map(Self.target) == [millennium, "kings-island.orion", "kings-island.diamondback", "cedar-point"])
            #expect(try json(try await client.get("/v1/catalog/rides/\(millennium)", as: ann).body)["lists"] as? Int == 1)

            // Shared with a friend: Bob reads it; to Carl it does not exist.
            #expect(try await Self.page(client, "/v1/lists/\(id)", as: bob).items.count == 4)
            try expectProblem(try await client.get("/v1/lists/\(id)", as: carl), .notFound, .noSuchList)
            #expect((try json(try await client.get("/v1/lists?owner=\(ann.id)", as: bob).body)["lists"] as? [[String: Any]])?.count == 1)
            #expect((try json(try await client.get("/v1/lists?owner=\(ann.id)", as: carl).body)["lists"] as? [[String: Any]])?.isEmpty == true)
            try expectProblem(try await client.send(.patch, "/v1/lists/\(id)", as: bob, json: ["title": "Bob's now"]), .forbidden, .forbidden)
            try expectProblem(try await client.send(.patch, "/v1/lists/\(id)", as: carl, json: ["title": "Carl's now"]), .notFound, .noSuchList)

            // Shared by link: a stranger with it reads it signed out; a new link retires the old.
            let linked = try json(try await client.send(.patch, "/v1/lists/\(id)", as: ann, json: ["visibility": "link"]).body)
            let shareUrl = try #require(linked["shareUrl"] as? String)
            #expect(shareUrl.hasPrefix("/v1/shared-lists/") && shareUrl.count == "/v1/shared-lists/".count + 22)
            let shared = try await Self.page(client, shareUrl, as: nil)
            #expect(shared.list["title"] as? String == "Ohio coasters" && shared.items.count == 4)
            #expect(shared.list["shareUrl"] == nil, "the link is the owner's to show")
            #expect(try await Self.page(client, shareUrl + "?sort=name", as: carl).items.map(Self.target).first == "cedar-point")
            try expectProblem(try await client.get("/v1/lists/\(id)", as: carl), .notFound, .noSuchList)
            let renewed = try json(try await client.send(.patch, "/v1/lists/\(id)", as: ann, json: ["newLink": true]).body)
            let newUrl = try #require(renewed["shareUrl"] as? String)
            #expect(newUrl != shareUrl)
            try expectProblem(try await client.get(shareUrl, as: nil), .notFound, .noSuchList)
            #expect(try await Self.page(client, newUrl, as: nil).items.count == 4)
            try expectProblem(try await client.get("/v1/shared-lists/not-a-token", as: nil), .notFound, .noSuchList)
            let back = try json(try await client.send(.patch, "/v1/lists/\(id)", as: ann, json: ["visibility": "friends"]).body)
            #expect(back["shareUrl"] == nil)
            try expectProblem(try await client.get(newUrl, as: nil), .notFound, .noSuchList)

            // Bob follows it, and listens.
            let followed = try json(try await client.send(.put, "/v1/lists/\(id)/follow", as: bob).body)
            #expect(followed["following"] as? Bool == true && followed["followers"] as? Int == 1)
            try await client.ws("/v1/live", configuration: .init(additionalHeaders: [.authorization: "Bearer \(bob.token)"])) { inbound, outbound, _ in
                var messages = inbound.messages(maxSize: 1 << 16).makeAsyncIterator()
                guard case .text? = try await messages.next() else { Issue.record("no hello"); return }

                // Ann walks into Cedar Point and logs Millennium Force: checked for her at once.
                _ = try await client.postFixes(FixTests.walkIn(endingAt: clock.now()), as: ann)
                clock.advance(60)
                #expect(try await RideEvidenceTests.log(client, "millennium-force", as: ann).status == .created)
                let annNow = try await Self.page(client, "/v1/lists/\(id)", as: ann)
                #expect(Self.check(annNow.items, millennium) == "ride-log")
                #expect(Self.check(annNow.items, "cedar-point") == "visit")
                #expect(annNow.list["checked"] as? Int == 2)
                // Bob sees neither yet: each says where Ann is.
                let bobNow = try await Self.page(client, "/v1/lists/\(id)", as: bob)
                #expect(Self.check(bobNow.items, millennium) == nil && Self.check(bobNow.items, "cedar-point") == nil)
                #expect(bobNow.list["checked"] as? Int == 0)
                s.service.live.sendForTesting(#"{"type":"sentinel"}"#, to: UserID(bob.id))
                #expect(try await Self.nextListEvent(&messages)?["type"] as? String == "sentinel", "Bob heard of Ann's ride before its time")

                // A check by hand says nothing of a place: Bob hears of it at once.
                let orion = try #require(annNow.items.first { Self.target($0) == "kings-island.orion" }?["id"] as? Int)
                let ticked = try await client.send(.patch, "/v1/lists/\(id)/items/\(orion)", as: ann, json: ["checked": true])
                #expect(((try json(ticked.body))["checked"] as? [String: Any])?["how"] as? String == "by hand")
                let byHand = try #require(try await Self.nextListEvent(&messages))
                #expect(byHand["type"] as? String == "list-change" && byHand["kind"] as? String == "item-checked")
                #expect(byHand["how"] as? String == "by hand")
                #expect((byHand["item"] as? [String: Any])?["targetId"] as? String == "kings-island.orion")
                #expect((byHand["list"] as? [String: Any])?["title"] as? String == "Ohio coasters")

                // Past the time-to-live the sweep delivers the evidence's checks.
                clock.advance(ttl + 60)
                try await s.service.housekeeping.deliverListChanges()
                var heard: [[String: Any]] = []
                while heard.count < 2, let event = try await Self.nextListEvent(&messages) { heard.append(event) }
                let ride = try #require(heard.first { ($0["item"] as? [String: Any])?["targetId"] as? String == millennium })
                #expect(ride["type"] as? String == "list-change" && ride["kind"] as? String == "item-checked" && ride["how"] as? String == "ride-log")
                #expect((ride["owner"] as? [String: Any])?["username"] as? String == "ann")
                #expect(heard.contains { ($0["item"] as? [String: Any])?["targetId"] as? String == "cedar-point" && $0["how"] as? String == "visit" })

                // The changes page says the same, newest first.
                let changes = try json(try await client.get("/v1/lists/following/changes", as: bob).body)["changes"] as? [[String: Any]] ?? []
                var pushed = ride
                pushed["type"] = nil
                let paged = try #require(changes.first { ($0["id"] as? Int) == (ride["id"] as? Int) })
                #expect(NSDictionary(dictionary: paged) == NSDictionary(dictionary: pushed), "page \(paged) vs push \(pushed)")
                #expect(changes.contains { $0["kind"] as? String == "item-added" })
                let ids = changes.compactMap { $0["id"] as? Int }
                #expect(ids == ids.sorted(by: >))
                try await outbound.close(.normalClosure, reason: nil)
            }
            let bobLater = try await Self.page(client, "/v1/lists/\(id)", as: bob)
            #expect(Self.check(bobLater.items, millennium) == "ride-log")
            #expect(bobLater.list["checked"] as? Int == 3)
            #expect((try json(try await client.get("/v1/lists/following/changes", as: carl).body)["changes"] as? [Any])?.isEmpty == true)

            // Unchecking by hand sticks: another log of the ride leaves it unchecked.
            let mfID = try #require(mfItem["id"] as? Int)
            let unticked = try json(try await client.send(.patch, "/v1/lists/\(id)/items/\(mfID)", as: ann, json: ["checked": false]).body)
            #expect(unticked["checked"] is NSNull)
            #expect(try await RideEvidenceTests.log(client, "millennium-force", as: ann).status == .created)
            #expect(Self.check(try await Self.page(client, "/v1/lists/\(id)", as: ann).items, millennium) == nil)

            // Bob makes it his: a private copy, his own evidence only; Carl may not.
            try expectProblem(try await client.send(.post, "/v1/lists/\(id)/copy", as: carl), .notFound, .noSuchList)
            let copy = try await client.send(.post, "/v1/lists/\(id)/copy", as: bob)
            #expect(copy.status == .created)
            let copied = try json(copy.body)
            let copyID = try #require(copied["id"] as? Int)
            #expect(copy.headers[.location] == "/v1/lists/\(copyID)")
            #expect(copied["visibility"] as? String == "private" && copied["copiedFrom"] as? Int == id && copied["checked"] as? Int == 0)
            let copyPage = try await Self.page(client, "/v1/lists/\(copyID)", as: bob)
            #expect(copyPage.items.map(Self.target) == mine.items.map(Self.target))
            #expect(copyPage.items.first?["note"] as? String == "front row")
            #expect(copyPage.items.allSatisfy { $0["checked"] is NSNull })
            try expectProblem(try await client.get("/v1/lists/\(copyID)", as: ann), .notFound, .noSuchList)
            #expect(try json(try await client.get("/v1/catalog/rides/\(millennium)", as: carl).body)["lists"] as? Int == 2)

            // Likes; following one's own list is refused.
            let liked = try json(try await client.send(.put, "/v1/lists/\(id)/like", as: bob).body)
            #expect(liked["likes"] as? Int == 1 && liked["liked"] as? Bool == true)
            let own = try expectProblem(try await client.send(.put, "/v1/lists/\(id)/follow", as: ann), .conflict, .listRefused)
            #expect(own["reason"] as? String == "own_list")
            // Deleting it takes it from everyone.
            #expect(try await client.send(.delete, "/v1/lists/\(id)", as: ann).status == .noContent)
            try expectProblem(try await client.get("/v1/lists/\(id)", as: bob), .notFound, .noSuchList)
        }
    }

    /// Every bad body is a problem naming its member; full lists, duplicates and positions past
    /// the end are refused with the number to act on. The bounds are the service's
    /// (``ServiceConfiguration/listRules``), set small here: the rule is the same at 1,000 items.
    @Test func badInputIsRefusedNamingTheField() async throws {
        let s = try await TestService {
            $0.listRules.maximumItems = 3
            $0.listRules.maximumLists = 2
            $0.limits.sharedLists = RateLimit(perSecond: 0.001, burst: 3)
        }
        defer { s.remove() }
        try await s.app().test(.router) { client in
            let ann = try await client.register("ann")
            let bob = try await client.register("bob")
            let cases: [([String: Any], [String])] = [
                (["title": String(repeating: "t", count: 10_000)], ["/title"]),
                (["title": "  "], ["/title"]),
                (["title": "Hypers", "description": String(repeating: "d", count: 2_001)], ["/description"]),
                (["title": "Hypers", "visibility": "secret"], ["/visibility"]),
                (["title": "Hypers", "coverPhotoId": 0], ["/coverPhotoId"]),
                (["title": "", "visibility": "everyone"], ["/visibility", "/title"]),
            ]
            for (body, pointers) in cases {
                let problem = try expectProblem(try await client.send(.post, "/v1/lists", as: ann, json: body), .unprocessableContent, .invalidList)
                #expect(Set(Self.pointers(problem)) == Set(pointers), "\(body.mapValues { "\($0)".prefix(20) }): \(problem)")
            }
            var headers = ann.auth
            headers[.contentType] = "application/json"
            let broken = try await client.execute(uri: "/v1/lists", method: .post, headers: headers, body: ByteBuffer(string: #"{"title": "#))
            try expectProblem(broken, .badRequest, .malformedBody)
            let missing = try await client.send(.post, "/v1/lists", as: ann, json: ["description": "no title"])
            #expect(Self.pointers(try expectProblem(missing, .badRequest, .malformedBody)) == ["/title"])
            let bobsPhoto = try #require(try json(try await PhotoTests.upload(client, "coaster.png", as: bob).body)["id"] as? Int)
            let notMine = try await client.send(.post, "/v1/lists", as: ann, json: ["title": "Hypers", "coverPhotoId": bobsPhoto])
            #expect(Self.pointers(try expectProblem(notMine, .unprocessableContent, .invalidList)) == ["/coverPhotoId"])
            #expect((try json(try await client.get("/v1/lists", as: ann).body)["lists"] as? [Any])?.isEmpty == true, "a refused body left a list")

            let list = try await Self.create(client, as: ann, ["title": "Cedar Point"])
            let id = try #require(list["id"] as? Int)
            let items: [([String: Any], HTTPResponse.Status, ProblemType, [String])] = [
                (["ride": "cedar-point.no-such-ride"], .unprocessableContent, .invalidList, ["/ride"]),
                (["park": "atlantis"], .unprocessableContent, .invalidList, ["/park"]),
                (["ride": "not an id"], .unprocessableContent, .invalidList, ["/ride"]),
                (["ride": "cedar-point.maverick", "park": "cedar-point"], .unprocessableContent, .invalidList, ["/park"]),
                ([:], .unprocessableContent, .invalidList, [""]),
                (["ride": "cedar-point.maverick", "note": String(repeating: "n", count: 501)], .unprocessableContent, .invalidList, ["/note"]),
                (["ride": "cedar-point.maverick", "position": -1], .unprocessableContent, .invalidList, ["/position"]),
            ]
            for (body, status, type, pointers) in items {
                let problem = try expectProblem(try await client.send(.post, "/v1/lists/\(id)/items", as: ann, json: body), status, type)
                #expect(Self.pointers(problem) == pointers, "\(body.mapValues { "\($0)".prefix(30) }): \(problem)")
            }
            let first = try await Self.add(client, id, as: ann, ["ride": "cedar-point.millennium-force"])
            let firstID = try #require(first["id"] as? Int)
            let duplicate = try expectProblem(try await client.send(.post, "/v1/lists/\(id)/items", as: ann, json: ["ride": "cedar-point.millennium-force"]),
                                              .conflict, .listRefused)
            #expect(duplicate["reason"] as? String == "duplicate_item" && duplicate["existingItem"] as? Int == firstID)
            let past = try expectProblem(try await client.send(.post, "/v1/lists/\(id)/items", as: ann, json: ["ride": "cedar-point.maverick", "position": 2]),
                                         .unprocessableContent, .invalidList)
            #expect(Self.pointers(past) == ["/position"] && past["largest"] as? Int == 1, "\(past)")
            let maverick = try await Self.add(client, id, as: ann, ["ride": "cedar-point.maverick", "position": 0])
            let farMove = try expectProblem(try await client.send(.patch, "/v1/lists/\(id)/items/\(maverick["id"] as? Int ?? 0)", as: ann, json: ["position": 2]),
                                            .unprocessableContent, .invalidList)
            #expect(Self.pointers(farMove) == ["/position"] && farMove["largest"] as? Int == 1, "\(farMove)")
            let third = try await Self.add(client, id, as: ann, ["park": "cedar-point"])
            let full = try expectProblem(try await client.send(.post, "/v1/lists/\(id)/items", as: ann, json: ["ride": "cedar-point.raptor"]),
                                         .conflict, .listRefused)
            #expect(full["reason"] as? String == "too_many_items" && full["limit"] as? Int == 3)
            #expect(try await Self.page(client, "/v1/lists/\(id)", as: ann).list["items"] as? Int == 3)

            // Item edits.
            let thirdID = try #require(third["id"] as? Int)
            let edits: [([String: Any], [String])] = [
                ([:], [""]), (["note": String(repeating: "n", count: 501)], ["/note"]), (["position": 1000], ["/position"]),
            ]
            for (body, pointers) in edits {
                let problem = try expectProblem(try await client.send(.patch, "/v1/lists/\(id)/items/\(thirdID)", as: ann, json: body), .unprocessableContent, .invalidList)
                #expect(Self.pointers(problem) == pointers, "\(body.mapValues { "\($0)".prefix(30) })")
            }
            let moved = try json(try await client.send(.patch, "/v1/lists/\(id)/items/\(thirdID)", as: ann, json: ["position": 0, "note": "first"]).body)
            #expect(moved["position"] as? Int == 0 && moved["note"] as? String == "first")
            let unnoted = try json(try await client.send(.patch, "/v1/lists/\(id)/items/\(thirdID)", as: ann, json: ["note": NSNull()]).body)
            #expect(unnoted["note"] == nil)
            #expect(try await Self.page(client, "/v1/lists/\(id)", as: ann).items.map(Self.target)
                == ["cedar-point", "cedar-point.maverick", "cedar-point.millennium-force"])
            try expectProblem(try await client.send(.patch, "/v1/lists/\(id)/items/999999", as: ann, json: ["checked": true]), .notFound, .noSuchListItem)
            try expectProblem(try await client.send(.delete, "/v1/lists/\(id)/items/999999", as: ann), .notFound, .noSuchListItem)
            #expect(try await client.send(.delete, "/v1/lists/\(id)/items/\(firstID)", as: ann).status == .noContent)
            #expect(try await Self.page(client, "/v1/lists/\(id)", as: ann).items.map { $0["position"] as? Int ?? -1 } == [0, 1])

            // List edits.
            let patches: [([String: Any], [String])] = [
                ([:], [""]), (["title": String(repeating: "t", count: 10_000)], ["/title"]), (["newLink": false], ["/newLink"]),
                (["newLink": true, "visibility": "public"], ["/newLink"]), (["coverPhotoId": -4], ["/coverPhotoId"]), (["visibility": "all"], ["/visibility"]),
            ]
            for (body, pointers) in patches {
                let problem = try expectProblem(try await client.send(.patch, "/v1/lists/\(id)", as: ann, json: body), .unprocessableContent, .invalidList)
                #expect(Self.pointers(problem) == pointers, "\(body.mapValues { "\($0)".prefix(30) })")
            }
            #expect(try await Self.page(client, "/v1/lists/\(id)", as: ann).list["title"] as? String == "Cedar Point", "a refused patch changed the list")
            let annsPhoto = try #require(try json(try await PhotoTests.upload(client, "coaster.png", as: ann).body)["id"] as? Int)
            let covered = try json(try await client.send(.patch, "/v1/lists/\(id)", as: ann, json: ["coverPhotoId": annsPhoto, "visibility": "public"]).body)
            #expect(covered["coverPhotoId"] as? Int == annsPhoto)
            #expect(try await client.get("/v1/photos/\(annsPhoto)", as: bob).status == .ok, "a public list's cover is shown to its readers")
            let uncovered = try json(try await client.send(.patch, "/v1/lists/\(id)", as: ann, json: ["coverPhotoId": NSNull()]).body)
            #expect(uncovered["coverPhotoId"] == nil)

            // Parameters.
            try expectProblem(try await client.get("/v1/lists/abc", as: ann), .badRequest, .invalidParameter)
            try expectProblem(try await client.get("/v1/lists/\(id)?sort=best", as: ann), .badRequest, .invalidParameter)
            try expectProblem(try await client.get("/v1/lists/\(id)?limit=0", as: ann), .badRequest, .invalidParameter)
            try expectProblem(try await client.get("/v1/lists?owner=you", as: ann), .badRequest, .invalidParameter)
            try expectProblem(try await client.get("/v1/lists/999999", as: ann), .notFound, .noSuchList)
            // The changes page's first segments are no list: not found, never a 405 refusing the GET it has.
            try expectProblem(try await client.get("/v1/lists/following", as: ann), .notFound, .notFound)
            let wrongMethod = try await client.send(.post, "/v1/lists/following/changes", as: ann)
            try expectProblem(wrongMethod, .methodNotAllowed, .methodNotAllowed)
            #expect(wrongMethod.headers[.allow] == "GET, HEAD, OPTIONS")

            // Limits: lists a user, following oneself, unknown users.
            _ = try await Self.create(client, as: ann, ["title": "Second"])
            let tooMany = try expectProblem(try await client.send(.post, "/v1/lists", as: ann, json: ["title": "Third"]), .conflict, .listRefused)
            #expect(tooMany["reason"] as? String == "too_many_lists" && tooMany["limit"] as? Int == 2)
            let copyRefused = try expectProblem(try await client.send(.post, "/v1/lists/\(id)/copy", as: ann), .conflict, .listRefused)
            #expect(copyRefused["reason"] as? String == "too_many_lists")
            #expect(try expectProblem(try await client.send(.put, "/v1/users/\(ann.id)/lists/follow", as: ann), .conflict, .listRefused)["reason"] as? String == "own_list")
            try expectProblem(try await client.send(.put, "/v1/users/999999/lists/follow", as: ann), .notFound, .noSuchUser)
            #expect(try await client.send(.put, "/v1/users/\(ann.id)/lists/follow", as: bob).status == .noContent)
            #expect(try await client.send(.delete, "/v1/users/\(ann.id)/lists/follow", as: bob).status == .noContent)

            // The shared-list route: refused before the store for a token of the wrong shape, and
            // limited per client address.
            var limited: TestResponse?
            for n in 0..<5 where limited == nil {
                let r = try await client.get("/v1/shared-lists/\(String(repeating: "A", count: 21 + n % 2))", as: nil)
                if r.status == .tooManyRequests { limited = r } else { try expectProblem(r, .notFound, .noSuchList) }
            }
            let refused = try #require(limited, "5 shared-list reads at a burst of 3 and none refused")
            try expectProblem(refused, .tooManyRequests, .tooManyRequests)
            #expect(refused.headers[.retryAfter] != nil)
        }
    }
}
