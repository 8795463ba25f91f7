import CoasterAPI
import CoasterHTTP
import CoasterService
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// Every route × every kind of caller: the status and problem type each gets.
///
/// Callers, relative to a target user T named in the route (`{userId}`): anonymous (no token),
/// member and admin (no tie to T), friend (friends with T), stranger (no tie, a member),
/// pending (has asked T to be friends), blocked (T has blocked them). A route added to the
/// router without a row here fails ``everyRouteHasARow()``.
@Suite("Authorization matrix")
struct AuthorizationMatrixTests {
    enum Actor: String, CaseIterable, Sendable {
        case anonymous, member, admin, friend, stranger, pending, blocked
    }

    enum Outcome: Sendable, CustomStringConvertible {
        case ok(HTTPResponse.Status)
        case problem(HTTPResponse.Status, ProblemType)

        var description: String {
            switch self {
            case .ok(let s): "\(s.code)"
            case .problem(let s, let t): "\(s.code) \(t.rawValue)"
            }
        }
    }

    struct Row: Sendable, CustomTestStringConvertible {
        var method: HTTPRequest.Method
        var path: String
        var body: (@Sendable (_ caller: String, _ target: String) -> [String: any Sendable])? = nil
        var rawBody: (@Sendable () throws -> ByteBuffer)? = nil
        /// OwnTracks: the caller's username and password as HTTP Basic credentials.
        var basicAuth = false
        var outcomes: [Actor: Outcome]
        var testDescription: String { "\(self.method) \(self.path)" }
    }

    /// Anonymous gets 401; everyone else gets `status`.
    static func members(_ status: HTTPResponse.Status) -> [Actor: Outcome] {
        Dictionary(uniqueKeysWithValues: Actor.allCases.map { ($0, $0 == .anonymous ? .problem(.unauthorized, .unauthorized) : .ok(status)) })
    }

    /// A map page: a signed-out visitor is sent to sign in (303); everyone else gets `status`.
    static func pages(_ status: HTTPResponse.Status) -> [Actor: Outcome] {
        Dictionary(uniqueKeysWithValues: Actor.allCases.map { ($0, .ok($0 == .anonymous ? .seeOther : status)) })
    }

    /// An admin's map page: sign-in for a visitor, `status` for an admin, a 403 page for the rest.
    static func adminPages(_ status: HTTPResponse.Status) -> [Actor: Outcome] {
        Dictionary(uniqueKeysWithValues: Actor.allCases.map { ($0, .ok($0 == .anonymous ? .seeOther : $0 == .admin ? status : .forbidden)) })
    }

    static func everyone(_ status: HTTPResponse.Status) -> [Actor: Outcome] {
        Dictionary(uniqueKeysWithValues: Actor.allCases.map { ($0, .ok(status)) })
    }

    /// Anonymous 401; the listed actors `yes`; everyone else `no`.
    static func only(_ actors: Set<Actor>, _ yes: Outcome, else no: Outcome) -> [Actor: Outcome] {
        Dictionary(uniqueKeysWithValues: Actor.allCases.map { a in
            (a, a == .anonymous ? .problem(.unauthorized, .unauthorized) : actors.contains(a) ? yes : no)
        })
    }

    static let rows: [Row] = [
        Row(method: .get, path: "/health", outcomes: everyone(.ok)),
        // The map pages (docs: Map): pages answer a signed-out visitor with the sign-in page (303)
        // and a refusal with a page of its status; the matrix's callers carry a bearer header,
        // which the pages take as the cookie's session. Forms without their CSRF token are
        // MapPageTests'.
        Row(method: .get, path: "/map", outcomes: pages(.ok)),
        Row(method: .get, path: "/map/login", outcomes: Dictionary(uniqueKeysWithValues: Actor.allCases.map { ($0, .ok($0 == .anonymous ? .ok : .seeOther)) })),
        Row(method: .post, path: "/map/login", body: { _, target in ["username": target, "password": TestUser.password] },
            outcomes: everyone(.unsupportedMediaType)),
        Row(method: .post, path: "/map/logout", outcomes: Dictionary(uniqueKeysWithValues: Actor.allCases.map {
            ($0, .ok($0 == .anonymous ? .unauthorized : .unsupportedMediaType)) })),
        Row(method: .get, path: "/map/parks/{parkId}", outcomes: pages(.ok)),
        Row(method: .get, path: "/map/me", outcomes: pages(.ok)),
        Row(method: .get, path: "/map/me/state.json", outcomes: members(.ok)),
        Row(method: .get, path: "/map/admin/parks", outcomes: adminPages(.ok)),
        Row(method: .post, path: "/map/admin/parks", outcomes: Dictionary(uniqueKeysWithValues: Actor.allCases.map {
            ($0, .ok($0 == .anonymous ? .unauthorized : $0 == .admin ? .unsupportedMediaType : .forbidden)) })),
        Row(method: .get, path: "/map/admin/parks/{parkId}/density", outcomes: adminPages(.ok)),
        Row(method: .get, path: "/map/assets/{file}", outcomes: everyone(.ok)),
        Row(method: .get, path: "/map/assets/leaflet/{file}", outcomes: everyone(.ok)),
        Row(method: .get, path: "/map/assets/leaflet/images/{file}", outcomes: everyone(.ok)),
        Row(method: .get, path: "/ready", outcomes: everyone(.ok)),
        Row(method: .get, path: "/openapi.json", outcomes: everyone(.ok)),
        Row(method: .get, path: "/metrics", outcomes: everyone(.ok)),
        Row(method: .post, path: "/v1/users", body: { caller, _ in ["username": caller + "x", "password": TestUser.password] },
            outcomes: everyone(.created)),
        Row(method: .post, path: "/v1/sessions", body: { _, target in ["username": target, "password": TestUser.password] },
            outcomes: everyone(.created)),
        Row(method: .delete, path: "/v1/sessions/current", outcomes: members(.noContent)),
        Row(method: .get, path: "/v1/me", outcomes: members(.ok)),
        Row(method: .patch, path: "/v1/me", body: { _, _ in ["bio": "hi"] }, outcomes: members(.ok)),
        Row(method: .get, path: "/v1/parks", outcomes: members(.ok)),
        Row(method: .get, path: "/v1/parks/{parkId}", outcomes: members(.ok)),
        Row(method: .get, path: "/v1/parks/{parkId}/rides", outcomes: members(.ok)),
        Row(method: .get, path: "/v1/parks/{parkId}/places", outcomes: members(.ok)),
        Row(method: .get, path: "/v1/locate", outcomes: members(.ok)),
        Row(method: .get, path: "/v1/friends", outcomes: members(.ok)),
        Row(method: .get, path: "/v1/friends/requests", outcomes: members(.ok)),
        Row(method: .get, path: "/v1/blocks", outcomes: members(.ok)),
        Row(method: .post, path: "/v1/friends/requests", body: { _, target in ["username": target] }, outcomes: {
            var o = only([.member, .admin, .stranger], .ok(.created), else: .ok(.ok))
            o[.blocked] = .problem(.notFound, .noSuchUser)
            return o
        }()),
        Row(method: .post, path: "/v1/friends/requests/{userId}/accept", outcomes: only([], .ok(.ok), else: .problem(.notFound, .noPendingRequest))),
        Row(method: .post, path: "/v1/friends/requests/{userId}/decline", outcomes: only([], .ok(.noContent), else: .problem(.notFound, .noPendingRequest))),
        Row(method: .delete, path: "/v1/friends/requests/{userId}", outcomes: only([.pending], .ok(.noContent), else: .problem(.notFound, .noPendingRequest))),
        Row(method: .delete, path: "/v1/friends/{userId}", outcomes: only([.friend], .ok(.noContent), else: .problem(.notFound, .notFriends))),
        Row(method: .put, path: "/v1/friends/{userId}/sharing", body: { _, _ in ["precision": "approximate"] },
            outcomes: only([.friend], .ok(.noContent), else: .problem(.notFound, .notFriends))),
        Row(method: .delete, path: "/v1/friends/{userId}/sharing", outcomes: only([.friend], .ok(.noContent), else: .problem(.notFound, .notFriends))),
        Row(method: .put, path: "/v1/blocks/{userId}", outcomes: members(.noContent)),
        Row(method: .delete, path: "/v1/blocks/{userId}", outcomes: only([], .ok(.noContent), else: .problem(.notFound, .notBlocked))),
        Row(method: .post, path: "/v1/fixes", body: { _, _ in
                ["lat": 41.4817, "lon": -82.6881, "accuracy": 10, "recordedAt": Date().formatted(.iso8601)]
            }, outcomes: members(.ok)),
        Row(method: .post, path: "/v1/checkins", body: { _, _ in ["parkId": "cedar-point"] },
            outcomes: only([], .ok(.created), else: .problem(.unprocessableContent, .checkinRefused))),
        Row(method: .get, path: "/v1/checkins", outcomes: members(.ok)),
        Row(method: .get, path: "/v1/rides/{rideId}", outcomes: members(.ok)),
        Row(method: .post, path: "/v1/rides/{rideId}/rides", outcomes: only([], .ok(.created), else: .problem(.unprocessableContent, .rideRefused))),
        Row(method: .get, path: "/v1/me/rides", outcomes: members(.ok)),
        Row(method: .get, path: "/v1/friends/nearby", outcomes: only([], .ok(.ok), else: .problem(.unprocessableContent, .nearbyRefused))),
        Row(method: .get, path: "/v1/people/nearby", outcomes: only([], .ok(.ok), else: .problem(.unprocessableContent, .nearbyRefused))),
        Row(method: .get, path: "/v1/parks/{parkId}/friends", outcomes: members(.ok)),
        // A plain GET (no Upgrade header): the WebSocket itself is tested in LiveTests.
        Row(method: .get, path: "/v1/live", outcomes: only([], .ok(.ok), else: .problem(.upgradeRequired, .upgradeRequired))),
        Row(method: .get, path: "/v1/me/stats", outcomes: members(.ok)),
        Row(method: .post, path: "/owntracks", rawBody: {
                ByteBuffer(string: #"{"_type":"location","lat":41.4817,"lon":-82.6881,"acc":10,"tst":\#(Int(Date().timeIntervalSince1970))}"#)
            }, basicAuth: true, outcomes: members(.ok)),
        Row(method: .post, path: "/v1/rides/{rideId}/waits", body: { _, _ in ["minutes": 20] },
            outcomes: only([], .ok(.created), else: .problem(.unprocessableContent, .reportRefused))),
        Row(method: .post, path: "/v1/rides/{rideId}/status", body: { _, _ in ["status": "down"] },
            outcomes: only([], .ok(.created), else: .problem(.unprocessableContent, .reportRefused))),
        Row(method: .get, path: "/v1/parks/{parkId}/waits", outcomes: members(.ok)),
        Row(method: .get, path: "/v1/rides/{rideId}/waits/history", outcomes: members(.ok)),
        Row(method: .put, path: "/v1/admin/parks/{parkId}/posted-waits", rawBody: {
                ByteBuffer(string: #"[{"ride":"millennium-force","at":"2026-07-04T16:00:00Z","minutes":45}]"#)
            }, outcomes: only([.admin], .ok(.ok), else: .problem(.forbidden, .forbidden))),
        Row(method: .post, path: "/v1/me/photos", rawBody: {
                ByteBuffer(bytes: try Data(contentsOf: TestService.repoRoot.appendingPathComponent("Tests/CoasterAPITests/Data/coaster.png")))
            }, outcomes: members(.created)),
        Row(method: .get, path: "/v1/me/photos", outcomes: members(.ok)),
        Row(method: .put, path: "/v1/me/photo", body: { _, _ in ["photoId": 999_999] }, outcomes: only([], .ok(.noContent), else: .problem(.notFound, .noSuchPhoto))),
        Row(method: .delete, path: "/v1/me/photo", outcomes: members(.noContent)),
        // The target's photo: friends (and only friends) may fetch it; only its owner may delete it.
        Row(method: .get, path: "/v1/photos/{photoId}", outcomes: only([.friend], .ok(.ok), else: .problem(.notFound, .noSuchPhoto))),
        // A friend sees the photo, so is told it is not theirs; to anyone else it does not exist.
        Row(method: .delete, path: "/v1/photos/{photoId}", outcomes: only([], .ok(.noContent), else: .problem(.notFound, .noSuchPhoto))
            .merging([.friend: .problem(.forbidden, .forbidden)]) { $1 }),
        Row(method: .get, path: "/v1/users/{userId}", outcomes: only([.friend], .ok(.ok), else: .problem(.notFound, .noSuchUser))),
        Row(method: .get, path: "/v1/users/{userId}/photos", outcomes: only([.friend], .ok(.ok), else: .problem(.notFound, .noSuchUser))),
        Row(method: .get, path: "/v1/users/{userId}/rides", outcomes: only([.friend], .ok(.ok), else: .problem(.notFound, .noSuchUser))),
        Row(method: .get, path: "/v1/me/badges", outcomes: members(.ok)),
        Row(method: .get, path: "/v1/leaderboards/{metric}", outcomes: members(.ok)),
        Row(method: .get, path: "/v1/messages", outcomes: members(.ok)),
        Row(method: .get, path: "/v1/messages/{userId}", outcomes: {
            var o = members(.ok)
            o[.blocked] = .problem(.notFound, .noSuchUser)
            return o
        }()),
        Row(method: .post, path: "/v1/messages/{userId}", body: { _, _ in ["body": "hello"] },
            outcomes: only([.friend], .ok(.created), else: .problem(.notFound, .notFriends))),
        Row(method: .post, path: "/v1/messages/{userId}/read", outcomes: members(.noContent)),
        // Challenges: the target's private one, to which only the friend is invited (see
        // ``targetChallenge``); to anyone else it does not exist.
        Row(method: .post, path: "/v1/challenges", body: { _, _ in
                ["name": "Laps", "unit": "rides", "start": Date().formatted(.iso8601), "end": Date().addingTimeInterval(86_400).formatted(.iso8601)]
            }, outcomes: members(.created)),
        Row(method: .get, path: "/v1/challenges", outcomes: members(.ok)),
        Row(method: .get, path: "/v1/challenges/search", outcomes: members(.ok)),
        Row(method: .get, path: "/v1/challenges/trending", outcomes: members(.ok)),
        Row(method: .get, path: "/v1/challenges/{challengeId}", outcomes: invitedOnly(.ok(.ok))),
        Row(method: .patch, path: "/v1/challenges/{challengeId}", body: { _, _ in ["name": "Renamed"] },
            outcomes: invitedOnly(.problem(.forbidden, .forbidden))),
        Row(method: .delete, path: "/v1/challenges/{challengeId}", outcomes: invitedOnly(.problem(.forbidden, .forbidden))),
        Row(method: .post, path: "/v1/challenges/{challengeId}/invitations", body: { _, _ in ["userIds": [1]] },
            outcomes: invitedOnly(.problem(.forbidden, .forbidden))),
        Row(method: .post, path: "/v1/challenges/{challengeId}/join", outcomes: invitedOnly(.ok(.ok))),
        Row(method: .post, path: "/v1/challenges/{challengeId}/decline", outcomes: invitedOnly(.ok(.noContent))),
        Row(method: .delete, path: "/v1/challenges/{challengeId}/members/me", outcomes: invitedOnly(.problem(.conflict, .challengeRefused))),
        Row(method: .get, path: "/v1/challenges/{challengeId}/ranking", outcomes: invitedOnly(.ok(.ok))),
        Row(method: .post, path: "/v1/challenges/{challengeId}/entries", body: { _, _ in ["amount": 1] },
            outcomes: invitedOnly(.problem(.conflict, .challengeRefused))),
        // The entry is the target's: no one else's to delete.
        Row(method: .delete, path: "/v1/challenges/{challengeId}/entries/{entryId}", outcomes: invitedOnly(.problem(.notFound, .noSuchEntry))),
        Row(method: .get, path: "/v1/challenges/{challengeId}/gallery", outcomes: invitedOnly(.ok(.ok))),
        Row(method: .put, path: "/v1/challenges/{challengeId}/like", outcomes: invitedOnly(.ok(.ok))),
        Row(method: .delete, path: "/v1/challenges/{challengeId}/like", outcomes: invitedOnly(.ok(.ok))),
        // The catalogue: every member reads it; only admins load it.
        Row(method: .get, path: "/v1/catalog/search", outcomes: members(.ok)),
        Row(method: .get, path: "/v1/catalog/rides/{rideId}", outcomes: members(.ok)),
        Row(method: .put, path: "/v1/admin/catalog", rawBody: {
                ByteBuffer(string: #"{"parks": [{"id": "matrix-park", "name": "Matrix Park"}], "rides": [{"id": "matrix-park.loop", "park": "matrix-park", "name": "Loop"}]}"#)
            }, outcomes: only([.admin], .ok(.ok), else: .problem(.forbidden, .forbidden))),
        // Lists: the target's friends-only list with one item (see ``targetList``): the friend reads
        // it and may like, follow and copy it, but not change it; to anyone else it does not exist.
        Row(method: .post, path: "/v1/lists", body: { _, _ in ["title": "Hypers"] }, outcomes: members(.created)),
        Row(method: .get, path: "/v1/lists", outcomes: members(.ok)),
        Row(method: .get, path: "/v1/lists/following/changes", outcomes: members(.ok)),
        Row(method: .get, path: "/v1/lists/{listId}", outcomes: friendsList(.ok(.ok))),
        Row(method: .patch, path: "/v1/lists/{listId}", body: { _, _ in ["title": "Renamed"] }, outcomes: friendsList(.problem(.forbidden, .forbidden))),
        Row(method: .delete, path: "/v1/lists/{listId}", outcomes: friendsList(.problem(.forbidden, .forbidden))),
        Row(method: .post, path: "/v1/lists/{listId}/items", body: { _, _ in ["ride": "cedar-point.maverick"] },
            outcomes: friendsList(.problem(.forbidden, .forbidden))),
        Row(method: .patch, path: "/v1/lists/{listId}/items/{itemId}", body: { _, _ in ["note": "front row"] },
            outcomes: friendsList(.problem(.forbidden, .forbidden))),
        Row(method: .delete, path: "/v1/lists/{listId}/items/{itemId}", outcomes: friendsList(.problem(.forbidden, .forbidden))),
        Row(method: .put, path: "/v1/lists/{listId}/like", outcomes: friendsList(.ok(.ok))),
        Row(method: .delete, path: "/v1/lists/{listId}/like", outcomes: friendsList(.ok(.ok))),
        Row(method: .put, path: "/v1/lists/{listId}/follow", outcomes: friendsList(.ok(.ok))),
        Row(method: .delete, path: "/v1/lists/{listId}/follow", outcomes: friendsList(.ok(.ok))),
        Row(method: .post, path: "/v1/lists/{listId}/copy", outcomes: friendsList(.ok(.created))),
        // Following a user's lists follows those the caller may read, present and future: none, for
        // a stranger, which is no reason to refuse; to someone they blocked, the user does not exist.
        Row(method: .put, path: "/v1/users/{userId}/lists/follow", outcomes: {
            var o = members(.noContent)
            o[.blocked] = .problem(.notFound, .noSuchUser)
            return o
        }()),
        Row(method: .delete, path: "/v1/users/{userId}/lists/follow", outcomes: members(.noContent)),
        // People: search and suggestions answer every member alike; following someone who blocked
        // the caller meets what an unknown user meets.
        Row(method: .get, path: "/v1/people/search", outcomes: members(.ok)),
        Row(method: .get, path: "/v1/people/suggested", outcomes: members(.ok)),
        Row(method: .put, path: "/v1/users/{userId}/follow", outcomes: {
            var o = members(.noContent)
            o[.blocked] = .problem(.notFound, .noSuchUser)
            return o
        }()),
        Row(method: .delete, path: "/v1/users/{userId}/follow", outcomes: members(.noContent)),
        // Posts: the target's friends-only post with a comment of theirs (see ``targetPost``): the
        // friend reads it, thumbs and comments on it, but may not change it or delete the comment;
        // to anyone else it does not exist. Feeds and search answer every member.
        Row(method: .post, path: "/v1/posts", body: { _, _ in ["text": "Hello from the midway"] }, outcomes: members(.created)),
        Row(method: .get, path: "/v1/posts/{postId}", outcomes: friendsPost(.ok(.ok))),
        Row(method: .patch, path: "/v1/posts/{postId}", body: { _, _ in ["text": "Edited"] }, outcomes: friendsPost(.problem(.forbidden, .forbidden))),
        Row(method: .delete, path: "/v1/posts/{postId}", outcomes: friendsPost(.problem(.forbidden, .forbidden))),
        Row(method: .put, path: "/v1/posts/{postId}/reaction", body: { _, _ in ["value": "up"] }, outcomes: friendsPost(.ok(.ok))),
        Row(method: .delete, path: "/v1/posts/{postId}/reaction", outcomes: friendsPost(.ok(.ok))),
        Row(method: .get, path: "/v1/posts/{postId}/comments", outcomes: friendsPost(.ok(.ok))),
        Row(method: .post, path: "/v1/posts/{postId}/comments", body: { _, _ in ["text": "Nice"] }, outcomes: friendsPost(.ok(.created))),
        Row(method: .delete, path: "/v1/comments/{commentId}",
            outcomes: only([.friend], .problem(.forbidden, .forbidden), else: .problem(.notFound, .noSuchComment))),
        Row(method: .get, path: "/v1/feed/home", outcomes: members(.ok)),
        Row(method: .get, path: "/v1/feed/public", outcomes: members(.ok)),
        Row(method: .get, path: "/v1/feed/park/{parkId}", outcomes: members(.ok)),
        Row(method: .get, path: "/v1/feed/ride/{rideId}", outcomes: members(.ok)),
        Row(method: .get, path: "/v1/feed/user/{userId}", outcomes: members(.ok)),
        Row(method: .get, path: "/v1/feed/tag/{hashtag}", outcomes: members(.ok)),
        Row(method: .get, path: "/v1/search/posts", outcomes: members(.ok)),
        // The one public list route: the share link is the credential, whoever holds it.
        Row(method: .get, path: "/v1/shared-lists/{token}", outcomes: everyone(.ok)),
        Row(method: .put, path: "/v1/admin/parks/{parkId}",
            rawBody: { ByteBuffer(bytes: try Data(contentsOf: TestService.repoRoot.appendingPathComponent("data/parks/cedar-point.geojson"))) },
            outcomes: only([.admin], .ok(.ok), else: .problem(.forbidden, .forbidden))),
    ]

    /// The friend (invited to the target's private challenge) gets `friend`; everyone else but
    /// the anonymous 404 `no-such-challenge`.
    static func invitedOnly(_ friend: Outcome) -> [Actor: Outcome] {
        only([.friend], friend, else: .problem(.notFound, .noSuchChallenge))
    }

    /// The friend gets `friend`; everyone else but the anonymous 404 `no-such-list`.
    static func friendsList(_ friend: Outcome) -> [Actor: Outcome] {
        only([.friend], friend, else: .problem(.notFound, .noSuchList))
    }

    /// The friend gets `friend`; everyone else but the anonymous 404 `no-such-post`.
    static func friendsPost(_ friend: Outcome) -> [Actor: Outcome] {
        only([.friend], friend, else: .problem(.notFound, .noSuchPost))
    }

    /// The target's friends-only post and their comment on it: the post's and the comment's ids.
    static func targetPost(_ target: TestUser, _ client: some TestClientProtocol) async throws -> (Int, Int) {
        let post = try await client.send(.post, "/v1/posts", as: target, json: ["text": "Front row on Millennium Force", "visibility": "friends"])
        let id = try #require(try json(post.body)["id"] as? Int, "\(String(buffer: post.body))")
        let comment = try await client.send(.post, "/v1/posts/\(id)/comments", as: target, json: ["text": "Again tomorrow"])
        return (id, try #require(try json(comment.body)["id"] as? Int, "\(String(buffer: comment.body))"))
    }

    /// The target's friends-only list holding Millennium Force, and a link list of theirs: the
    /// list's id, its item's id and the link list's share token.
    static func targetList(_ target: TestUser, _ client: some TestClientProtocol) async throws -> (Int, Int, String) {
        let list = try await client.send(.post, "/v1/lists", as: target, json: ["title": "Ohio coasters", "visibility": "friends"])
        let id = try #require(try json(list.body)["id"] as? Int, "\(String(buffer: list.body))")
        let item = try await client.send(.post, "/v1/lists/\(id)/items", as: target, json: ["ride": "cedar-point.millennium-force"])
        let itemID = try #require(try json(item.body)["id"] as? Int, "\(String(buffer: item.body))")
        let link = try await client.send(.post, "/v1/lists", as: target, json: ["title": "Shared", "visibility": "link"])
        let url = try #require(try json(link.body)["shareUrl"] as? String, "\(String(buffer: link.body))")
        return (id, itemID, String(url.dropFirst("/v1/shared-lists/".count)))
    }

    /// The target's private custom challenge, started, with an entry of theirs; `invitee` invited.
    /// Returns the challenge's and the entry's ids.
    static func targetChallenge(_ target: TestUser, inviting invitee: TestUser?, _ client: some TestClientProtocol) async throws -> (Int, Int) {
        let created = try await client.send(.post, "/v1/challenges", as: target, json: [
            "name": "Funnel cakes", "unit": "custom", "unitLabel": "funnel cakes",
            "start": Date().addingTimeInterval(-60).formatted(.iso8601), "end": Date().addingTimeInterval(86_400).formatted(.iso8601),
        ])
        let id = try #require(try json(created.body)["id"] as? Int, "\(String(buffer: created.body))")
        if let invitee {
            #expect(try await client.send(.post, "/v1/challenges/\(id)/invitations", as: target, json: ["userIds": [invitee.id]]).status == .ok)
        }
        let entry = try await client.send(.post, "/v1/challenges/\(id)/entries", as: target, json: ["amount": 1])
        let entryID = try #require((try json(entry.body)["entry"] as? [String: Any])?["id"] as? Int, "\(String(buffer: entry.body))")
        return (id, entryID)
    }

    /// A photo owned by the target, for the photo routes.
    static func targetPhoto(_ target: TestUser, _ client: some TestClientProtocol) async throws -> Int {
        let png = try Data(contentsOf: TestService.repoRoot.appendingPathComponent("Tests/CoasterAPITests/Data/coaster.png"))
        let r = try await client.execute(uri: "/v1/me/photos", method: .post, headers: target.auth, body: ByteBuffer(bytes: png))
        return try #require(try json(r.body)["id"] as? Int)
    }

    @Test func everyRouteHasARow() async throws {
        let s = try await TestService()
        defer { s.remove() }
        let routed = Set(try buildRouter(s.service).routes.map { "\($0.method) \($0.path)" })
        let covered = Set(Self.rows.map { "\($0.method) \($0.path)" })
        #expect(routed.subtracting(covered).isEmpty, "routes without a matrix row: \(routed.subtracting(covered).sorted())")
        #expect(covered.subtracting(routed).isEmpty, "rows for routes that do not exist: \(covered.subtracting(routed).sorted())")
        #expect(Self.rows.allSatisfy { Set($0.outcomes.keys) == Set(Actor.allCases) })
    }

    @Test(arguments: rows)
    func route(_ row: Row) async throws {
        try await TestService.withService { service, client in
            for actor in Actor.allCases {
                let tag = String(UUID().uuidString.prefix(8)).lowercased()
                let target = try await client.register("t\(tag)")
                var caller: TestUser?
                switch actor {
                case .anonymous: caller = nil
                case .admin: caller = try await service.admin("a\(tag)", on: client)
                default: caller = try await client.register("c\(tag)")
                }
                switch actor {
                case .friend: try await client.befriend(caller!, target)
                case .pending: _ = try await client.send(.post, "/v1/friends/requests", as: caller, json: ["username": target.username])
                case .blocked: _ = try await client.send(.put, "/v1/blocks/\(caller!.id)", as: target)
                default: break
                }
                var challenge = (0, 0)
                if row.path.contains("{challengeId}") {
                    challenge = try await Self.targetChallenge(target, inviting: actor == .friend ? caller : nil, client)
                }
                var list = (0, 0, "")
                if row.path.contains("{listId}") || row.path.contains("{token}") { list = try await Self.targetList(target, client) }
                var post = (0, 0)
                if row.path.contains("{postId}") || row.path.contains("{commentId}") { post = try await Self.targetPost(target, client) }
                let uri = row.path
                    .replacingOccurrences(of: "{postId}", with: String(post.0))
                    .replacingOccurrences(of: "{commentId}", with: String(post.1))
                    .replacingOccurrences(of: "{hashtag}", with: "launch")
                    .replacingOccurrences(of: "{listId}", with: String(list.0))
                    .replacingOccurrences(of: "{itemId}", with: String(list.1))
                    .replacingOccurrences(of: "{token}", with: list.2)
                    .replacingOccurrences(of: "{challengeId}", with: String(challenge.0))
                    .replacingOccurrences(of: "{entryId}", with: String(challenge.1))
                    .replacingOccurrences(of: "{userId}", with: String(target.id))
                    .replacingOccurrences(of: "{parkId}", with: "cedar-point")
                    .replacingOccurrences(of: "{rideId}", with: "cedar-point.millennium-force")
                    .replacingOccurrences(of: "{photoId}", with: String(try await Self.targetPhoto(target, client)))
                    .replacingOccurrences(of: "{metric}", with: "rides")
                    .replacingOccurrences(of: "{file}", with: row.path.hasSuffix("images/{file}") ? "layers.png" : row.path.contains("leaflet") ? "leaflet.js" : "map.js")
                    + (row.path == "/v1/locate" ? "?lat=41.4822&lon=-82.6835" : "")
                    + (row.path == "/v1/people/search" ? "?q=t" : "")
                    + (row.path == "/v1/search/posts" ? "?q=front" : "")
                var headers = caller?.auth ?? [:]
                if row.basicAuth {
                    headers = caller.map { [.authorization: "Basic " + Data("\($0.username):\(TestUser.password)".utf8).base64EncodedString()] } ?? [:]
                }
                var payload: ByteBuffer?
                if let make = row.body {
                    payload = body(make("c\(tag)", target.username))
                    headers[.contentType] = "application/json"
                } else if let raw = row.rawBody {
                    payload = try raw()
                }
                let response = try await client.execute(uri: uri, method: row.method, headers: headers, body: payload)
                let expected = try #require(row.outcomes[actor])
                let label = "\(row.method) \(row.path) as \(actor.rawValue): expected \(expected), got \(response.status.code) \(String(buffer: response.body).prefix(200))"
                switch expected {
                case .ok(let status):
                    #expect(response.status == status, "\(label)")
                case .problem(let status, let type):
                    #expect(response.status == status, "\(label)")
                    let problem = try json(response.body)
                    #expect(problem["type"] as? String == type.uri, "\(label)")
                }
            }
        }
    }
}
