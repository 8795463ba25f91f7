import CoasterAPI
import CoasterCore
import CoasterService
import CoasterTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// Both stores give the same answers: one scripted day at Cedar Point (registrations, friendships,
/// fixes, visits, check-ins, ride logs, waits, photos, messages, leaderboards) is played against a
/// service on SpatiaLite and one on PostgreSQL, on the same clock, and every answer is compared,
/// status and body. What is random by design (session tokens, sealed page cursors, request ids)
/// is masked.
///
/// It runs in the PostgreSQL pass of `tools/test` (the SpatiaLite pass has no PostgreSQL to compare with).
@Suite("Same answers from both stores", .enabled(if: TestDatabase.kind == .postgres))
struct SameAnswersTests {
    static let gate = Coordinate(lat: 41.4807, lon: -82.6829)
    static let millenniumForce = Coordinate(lat: 41.481656, lon: -82.688132)
    static let gemini = Coordinate(lat: 41.486382, lon: -82.689591)
    static let midway = Coordinate(lat: 41.4812, lon: -82.6830)
    /// Sandusky, outside the park.
    static let town = Coordinate(lat: 41.4489, lon: -82.7080)

    @Test func aDayAtCedarPointAnswersAlikeOnBothStores() async throws {
        let start = Date(timeIntervalSince1970: 1_783_170_000)  // 2026-07-04, morning in Ohio
        let sqlite = try await Self.play(on: .sqlite, from: start)
        let postgres = try await Self.play(on: .postgres, from: start)
        #expect(sqlite.count == postgres.count)
        #expect(sqlite.count > 60, "the script ran to its end: \(sqlite.count) answers")
        let succeeded = sqlite.filter { $0.answer.hasPrefix("2") }.count
        #expect(succeeded > 50, "the day did things rather than fail alike: \(succeeded) of \(sqlite.count) answers were 2xx")
        for (a, b) in zip(sqlite, postgres) where a != b {
            Issue.record("SpatiaLite and PostgreSQL differ at \(a.step):\n  SpatiaLite: \(a.answer)\n  PostgreSQL: \(b.answer)")
        }
    }

    struct Answer: Equatable {
        var step: String
        var answer: String
    }

    /// The day, against a new service on `store`; every answer in order.
    static func play(on store: TestDatabase.Kind, from start: Date) async throws -> [Answer] {
        let clock = TestClock(start)
        let s = try await TestService(store: store, clock: clock)
        defer { s.remove() }
        let answers = Answers()
        try await s.app().test(.router) { client in
            try await Self.script(s, client, clock, answers)
        }
        return answers.all
    }

    final class Answers: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [Answer] = []
        var all: [Answer] { self.lock.withLock { self.list } }

        /// Records an answer with what is random by design masked.
        func record(_ step: String, _ response: TestResponse) {
            var text = "\(response.status.code) " + String(buffer: response.body)
            for key in ["token", "cursor", "next", "nextCursor", "requestId"] {
                text = text.replacingOccurrences(of: "\"\(key)\":\"[^\"]*\"", with: "\"\(key)\":\"*\"", options: .regularExpression)
            }
            self.lock.withLock { self.list.append(Answer(step: step, answer: text)) }
        }
    }

    static func script(_ s: TestService, _ client: some TestClientProtocol, _ clock: TestClock, _ answers: Answers) async throws {
        func call(_ method: HTTPRequest.Method, _ uri: String, as user: TestUser?, json: [String: Any]? = nil) async throws {
            answers.record("\(method) \(uri)", try await client.send(method, uri, as: user, json: json))
        }
        func fixes(_ user: TestUser, _ points: [(Coordinate, String?)], accuracy: Double = 6) async throws {
            let body = points.enumerated().map { i, p in
                fixJSON(p.0.lat, p.0.lon, accuracy: accuracy, at: clock.now().addingTimeInterval(Double(i) * 20 - Double(points.count) * 20), id: p.1)
            }
            let response = try await client.execute(uri: "/v1/fixes", method: .post, headers: user.auth,
                                                    body: ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: body)))
            answers.record("POST /v1/fixes (\(user.username), \(points.count))", response)
        }

        // Morning: accounts, friends, a block.
        var people: [String: TestUser] = [:]
        for name in ["ann", "bob", "cat", "dan"] {
            answers.record("POST /v1/users \(name)", try await client.execute(uri: "/v1/users", method: .post,
                                                                             body: body(["username": name, "password": TestUser.password])))
            people[name] = try await client.login(name)
        }
        let (ann, bob, cat, dan) = (people["ann"]!, people["bob"]!, people["cat"]!, people["dan"]!)
        try await call(.post, "/v1/users", as: nil, json: ["username": "ann", "password": TestUser.password])  // taken
        try await call(.post, "/v1/friends/requests", as: ann, json: ["username": "bob"])
        try await call(.post, "/v1/friends/requests/\(ann.id)/accept", as: bob)
        try await call(.post, "/v1/friends/requests", as: ann, json: ["username": "cat"])
        try await call(.post, "/v1/friends/requests/\(ann.id)/accept", as: cat)
        try await call(.post, "/v1/friends/requests", as: bob, json: ["username": "cat"])
        try await call(.put, "/v1/blocks/\(cat.id)", as: dan)
        try await call(.get, "/v1/friends", as: ann)
        try await call(.get, "/v1/friends/requests", as: cat)
        try await call(.get, "/v1/blocks", as: dan)
        try await call(.patch, "/v1/me", as: ann, json: ["displayName": "Ann Rider", "bio": "Hypers first."])

        // Into the park: fixes, a duplicate, one outside, a check-in.
        clock.advance(600)
        try await fixes(ann, [(Self.town, "a1"), (Self.gate, "a2"), (Self.midway, "a3")])
        try await fixes(ann, [(Self.midway, "a3")])  // the same fix again
        try await fixes(bob, [(Self.gate, nil), (Self.gemini, nil)])
        try await fixes(cat, [(Self.midway, "c1")], accuracy: 15)
        try await call(.post, "/v1/checkins", as: cat, json: ["parkId": "cedar-point"])
        try await call(.get, "/v1/checkins", as: cat)
        try await call(.get, "/v1/locate?lat=\(Self.millenniumForce.lat)&lon=\(Self.millenniumForce.lon)&accuracy=5", as: ann)
        try await call(.get, "/v1/friends/nearby", as: ann)
        try await call(.get, "/v1/parks/cedar-point/friends", as: ann)

        // Rides: at the ride, across the park, too soon, again later.
        clock.advance(900)
        try await fixes(ann, [(Self.millenniumForce, "a4")], accuracy: 5)
        try await fixes(bob, [(Self.gemini, nil)], accuracy: 5)
        clock.advance(60)
        try await call(.post, "/v1/rides/cedar-point.millennium-force/rides", as: ann)
        try await call(.post, "/v1/rides/cedar-point.gemini/rides", as: bob)
        try await call(.post, "/v1/rides/cedar-point.gemini/rides", as: bob)  // too soon
        try await call(.post, "/v1/rides/cedar-point.millennium-force/rides", as: cat)
        clock.advance(1800)
        try await fixes(ann, [(Self.gemini, "a5")], accuracy: 5)
        clock.advance(60)
        try await call(.post, "/v1/rides/cedar-point.gemini/rides", as: ann)
        try await call(.get, "/v1/me/rides", as: ann)
        try await call(.get, "/v1/users/\(ann.id)/rides", as: bob)
        try await call(.get, "/v1/users/\(ann.id)/rides", as: dan)  // not a friend
        try await call(.get, "/v1/me/stats", as: ann)
        try await call(.get, "/v1/parks/cedar-point/rides", as: ann)

        // Waits: reports, a status report, the board, a ride's page, history.
        try await call(.post, "/v1/rides/cedar-point.gemini/waits", as: ann, json: ["minutes": 35])
        try await call(.post, "/v1/rides/cedar-point.gemini/waits", as: bob, json: ["minutes": 40])
        try await call(.post, "/v1/rides/cedar-point.gemini/waits", as: dan, json: ["minutes": 5])  // not in the park
        try await call(.post, "/v1/rides/cedar-point.gemini/status", as: bob, json: ["condition": "down"])
        try await call(.get, "/v1/parks/cedar-point/waits", as: cat)
        try await call(.get, "/v1/rides/cedar-point.gemini", as: cat)
        try await call(.get, "/v1/rides/cedar-point.gemini/waits/history", as: cat)

        // Photos: an upload, a profile picture, a friend's view, a stranger's.
        let upload = try await PhotoTests.upload(client, "coaster.png", as: ann, query: "?caption=Top%20of%20the%20lift&parkId=cedar-point")
        answers.record("POST /v1/me/photos", upload)
        let photo = try json(upload.body)["id"] as? Int ?? 0
        try await call(.put, "/v1/me/photo", as: ann, json: ["photoId": photo])
        try await call(.get, "/v1/me/photos", as: ann)
        try await call(.get, "/v1/users/\(ann.id)/photos", as: bob)
        try await call(.get, "/v1/users/\(ann.id)/photos", as: dan)
        try await call(.get, "/v1/photos/\(photo)", as: bob)
        try await call(.get, "/v1/users/\(ann.id)", as: bob)

        // Messages: a conversation, read, and one to a stranger.
        for (from, to, text) in [(ann, bob, "Gemini after lunch?"), (bob, ann, "Yes, blue side."), (ann, bob, "Deal")] {
            try await call(.post, "/v1/messages/\(to.id)", as: from, json: ["body": text])
            clock.advance(30)
        }
        try await call(.post, "/v1/messages/\(ann.id)", as: dan, json: ["body": "hi"])
        try await call(.get, "/v1/messages", as: bob)
        try await call(.get, "/v1/messages/\(ann.id)", as: bob)
        try await call(.post, "/v1/messages/\(ann.id)/read", as: bob)
        try await call(.get, "/v1/messages", as: bob)

        // Evening: out of the park; the boards settle once the rides are older than the privacy window.
        clock.advance(3 * 3600)
        try await fixes(ann, [(Self.town, "a6")])
        try await fixes(bob, [(Self.town, nil)])
        clock.advance(2 * 3600)
        try await s.service.housekeeping.settleTallies()
        for board in ["rides", "credits"] {
            for scope in ["global", "friends", "park:cedar-point"] {
                try await call(.get, "/v1/leaderboards/\(board)?scope=\(scope)", as: ann)
            }
        }
        try await call(.get, "/v1/leaderboards/rides?scope=global&period=day", as: bob)
        try await call(.get, "/v1/me/badges", as: ann)
        try await call(.get, "/v1/me", as: ann)
        try await call(.get, "/v1/checkins", as: ann)
        try await call(.delete, "/v1/friends/\(cat.id)", as: ann)
        try await call(.get, "/v1/friends", as: ann)

        // People: a profile, the opt-in, searches, riders like you (ann and cat share Millennium
        // Force, bob's request to cat is waiting, dan blocked cat), follows.
        try await call(.patch, "/v1/me", as: ann, json: ["status": ["emoji": "🎢", "text": "Hypers"], "homePark": "cedar-point",
                                                          "favouriteRides": ["cedar-point.millennium-force", "cedar-point.gemini"], "findable": true])
        for user in [bob, cat, dan] { try await call(.patch, "/v1/me", as: user, json: ["findable": true]) }
        try await call(.patch, "/v1/me", as: bob, json: ["homePark": "atlantis", "favouriteRides": ["cedar-point.nothing"]])  // refused
        try await call(.get, "/v1/people/search?q=ann", as: bob)
        try await call(.get, "/v1/people/search?q=RID", as: dan)
        try await call(.get, "/v1/people/search?q=cat", as: dan)  // blocked
        try await call(.get, "/v1/people/search?q=nobody", as: bob)
        for user in [ann, bob, cat, dan] { try await call(.get, "/v1/people/suggested", as: user) }
        try await call(.put, "/v1/users/\(bob.id)/follow", as: ann)
        try await call(.put, "/v1/users/\(bob.id)/follow", as: ann)
        try await call(.put, "/v1/users/\(cat.id)/follow", as: dan)  // blocked
        try await call(.put, "/v1/users/\(ann.id)/follow", as: ann)
        try await call(.get, "/v1/users/\(bob.id)", as: ann)
        try await call(.get, "/v1/people/search?q=bo", as: ann)
        try await call(.delete, "/v1/users/\(bob.id)/follow", as: ann)
        try await call(.get, "/v1/me", as: bob)
        try await call(.delete, "/v1/photos/\(photo)", as: ann)
        try await call(.get, "/v1/me/photos", as: ann)
        try await call(.get, "/v1/parks", as: nil)
    }
}
