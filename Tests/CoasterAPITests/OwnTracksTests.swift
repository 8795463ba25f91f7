@testable import CoasterAPI
import CoasterCore
import CoasterHTTP
import CoasterService
import CoasterStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@Suite("OwnTracks HTTP mode")
struct OwnTracksTests {
    static let fixtures = TestService.repoRoot.appendingPathComponent("Tests/Fixtures/owntracks-json-schema")

    struct Fixture: Sendable, CustomTestStringConvertible {
        var file: String
        var expected: String
        var testDescription: String { "\(self.file) (\(self.expected))" }
    }

    /// Every fixture with upstream's verdict, from EXPECTED.tsv.
    static let table: [Fixture] = {
        guard let text = try? String(contentsOf: fixtures.appendingPathComponent("EXPECTED.tsv"), encoding: .utf8) else { return [] }
        return text.split(separator: "\n").dropFirst().compactMap { line in
            let cols = line.split(separator: "\t").map(String.init)
            return cols.count == 3 ? Fixture(file: cols[0], expected: cols[2]) : nil
        }
    }()

    static func basic(_ user: TestUser) -> HTTPFields {
        [.authorization: "Basic " + Data("\(user.username):\(TestUser.password)".utf8).base64EncodedString(), .contentType: "application/json"]
    }

    @Test func theTableCoversEveryFixture() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.fixtures.appendingPathComponent("test").path)
        #expect(Self.table.count == 59)
        #expect(Set(Self.table.map(\.file)).isSubset(of: Set(files)))
    }

    /// Upstream "fail" payloads: 200 [] and nothing stored. "success" payloads: 200 and an array.
    /// Either way never a 4xx or 5xx, which the apps would drop or retry forever.
    @Test(arguments: table)
    func fixture(_ fixture: Fixture) async throws {
        try await TestService.withService { service, client in
            let ann = try await client.register("ann")
            let body = try Data(contentsOf: Self.fixtures.appendingPathComponent("test/\(fixture.file)"))
            let response = try await client.execute(uri: "/owntracks", method: .post, headers: Self.basic(ann), body: ByteBuffer(bytes: body))
            #expect(response.status == .ok)
            let array = try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [Any]
            #expect(array != nil, "the answer is a JSON array")
            let store = service.service.store
            if fixture.expected == "fail" {
                #expect(array?.isEmpty == true)
                #expect(try await store.fixCount(of: UserID(ann.id)) == 0)
                #expect(try await store.ownTracksTransitionCount(of: UserID(ann.id)) == 0)
            }
            // The fixtures' locations are from 2023: too old for the live pipeline, so never stored.
            #expect(try await store.fixCount(of: UserID(ann.id)) == 0)
        }
    }

    @Test func aTransitionFixtureIsRecorded() async throws {
        try await TestService.withService { service, client in
            let ann = try await client.register("ann")
            let body = try Data(contentsOf: Self.fixtures.appendingPathComponent("test/transition.json"))
            _ = try await client.execute(uri: "/owntracks", method: .post, headers: Self.basic(ann), body: ByteBuffer(bytes: body))
            #expect(try await service.service.store.ownTracksTransitionCount(of: UserID(ann.id)) == 1)
        }
    }

    @Test func badCredentialsAre401AndIdentityNeverComesFromHeaders() async throws {
        try await TestService.withService { service, client in
            let ann = try await client.register("ann")
            let bob = try await client.register("bob")
            let now = Int(Date().timeIntervalSince1970)
            let payload = ByteBuffer(string: #"{"_type":"location","lat":41.4817,"lon":-82.6881,"acc":10,"tst":"\#(now)"}"#)
            var wrong = Self.basic(ann)
            wrong[.authorization] = "Basic " + Data("ann:wrong password".utf8).base64EncodedString()
            let refused = try await client.execute(uri: "/owntracks", method: .post, headers: wrong, body: payload)
            try expectProblem(refused, .unauthorized, .unauthorized)
            #expect(refused.headers[.wwwAuthenticate]?.hasPrefix("Basic") == true)
            let none = try await client.execute(uri: "/owntracks", method: .post, body: payload)
            #expect(none.status == .unauthorized)
            // X-Limit-U names bob, the credentials are ann's: the fix is ann's, tst given as a string.
            var headers = Self.basic(ann)
            headers[HTTPField.Name("X-Limit-U")!] = "bob"
            headers[HTTPField.Name("X-Limit-D")!] = "phone"
            let ok = try await client.execute(uri: "/owntracks", method: .post, headers: headers, body: payload)
            #expect(ok.status == .ok)
            #expect(try await service.service.store.fixCount(of: UserID(ann.id)) == 1)
            #expect(try await service.service.store.fixCount(of: UserID(bob.id)) == 0)
        }
    }

    @Test func theAnswerShowsFriendsAsTheirSharingAllows() async throws {
        try await TestService.withService { service, client in
            let ann = try await client.register("ann")
            let anna = try await client.register("anna")
            let bob = try await client.register("bob")
            let ghost = try await client.register("casper")
            let stranger = try await client.register("eve")
            let pam = try await client.register("pam")
            for friend in [anna, bob, ghost, pam] { try await client.befriend(ann, friend) }
            let now = Date()
            // Ann is at Cedar Point too: park-only sharing shows pam's park only to a friend there.
            for (user, dx) in [(ann, -0.0001), (anna, 0.0), (bob, 0.0005), (ghost, 0.001), (stranger, 0.0015), (pam, 0.002)] {
                _ = try await client.postFixes([fixJSON(41.4817, -82.6881 + dx, at: now)], as: user)
            }
            _ = try await client.send(.patch, "/v1/me", as: ghost, json: ["sharing": ["ghost": ["mode": "on"]]])
            _ = try await client.send(.patch, "/v1/me", as: bob, json: ["sharing": ["precision": "approximate"]])
            _ = try await client.send(.patch, "/v1/me", as: pam, json: ["sharing": ["precision": "park-only"]])

            let payload = #"{"_type":"location","lat":41.4816,"lon":-82.6882,"acc":12,"tst":\#(Int(now.timeIntervalSince1970))}"#
            let response = try await client.execute(uri: "/owntracks", method: .post, headers: Self.basic(ann), body: ByteBuffer(string: payload))
            let objects = try #require(try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [[String: Any]])
            let locations = objects.filter { $0["_type"] as? String == "location" }
            let cards = objects.filter { $0["_type"] as? String == "card" }
            let byTopic = Dictionary(uniqueKeysWithValues: locations.map { ($0["topic"] as! String, $0) })
            #expect(Set(byTopic.keys) == ["owntracks/ann/coasterlife", "owntracks/anna/coasterlife", "owntracks/bob/coasterlife",
                                          "owntracks/pam/coasterlife"])
            let tids = locations.compactMap { $0["tid"] as? String }
            #expect(Set(tids).count == tids.count && tids.allSatisfy { $0.count == 2 })
            #expect(byTopic["owntracks/anna/coasterlife"]?["lon"] as? Double == -82.6881)
            let snapped = ApproximateGrid.snap(Coordinate(lat: 41.4817, lon: -82.6876))
            #expect(abs((byTopic["owntracks/bob/coasterlife"]?["lat"] as? Double ?? 0) - snapped.lat) < 1e-9)
            #expect((byTopic["owntracks/bob/coasterlife"]?["acc"] as? Int ?? 0) > 500)
            // Park-only: the park's centre, with an accuracy covering the park, never where pam is.
            let parkOnly = try #require(byTopic["owntracks/pam/coasterlife"])
            let shown = Coordinate(lat: parkOnly["lat"] as? Double ?? 0, lon: parkOnly["lon"] as? Double ?? 0)
            let park = try #require(service.service.fences.index.park("cedar-point")?.bounds)
            #expect(Geodesy.distance(shown, park.center) < 1e-3)
            #expect(Geodesy.distance(shown, Coordinate(lat: 41.4817, lon: -82.6861)) > 50)
            #expect((parkOnly["acc"] as? Int ?? 0) > 500)
            #expect(Set(cards.compactMap { $0["name"] as? String }) == ["anna", "bob", "pam"])
        }
    }

    /// The caller's own location comes back as long as it is fresh: a fix older than the
    /// locations' time-to-live (two hours) is stored, but not echoed as where the caller is.
    @Test func theCallersOwnLocationComesBackOnlyWhileFresh() async throws {
        try await TestService.withService { _, client in
            let ann = try await client.register("ann")
            func answer(recordedAgo seconds: TimeInterval) async throws -> [String] {
                let tst = Int(Date().addingTimeInterval(-seconds).timeIntervalSince1970)
                let payload = #"{"_type":"location","lat":41.4816,"lon":-82.6882,"acc":12,"tst":\#(tst)}"#
                let response = try await client.execute(uri: "/owntracks", method: .post, headers: Self.basic(ann), body: ByteBuffer(string: payload))
                #expect(response.status == .ok)
                let objects = try #require(try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [[String: Any]])
                return objects.filter { $0["_type"] as? String == "location" }.compactMap { $0["topic"] as? String }
            }
            #expect(try await answer(recordedAgo: 3 * 3600) == [])
            #expect(try await answer(recordedAgo: 60) == ["owntracks/ann/coasterlife"])
        }
    }

    /// JSON that Foundation reads past (a trailing comma, a name twice) is malformed as well; the
    /// same fix written strictly is stored.
    @Test func laxJSONIsMalformed() async throws {
        try await TestService.withService { service, client in
            let ann = try await client.register("ann")
            let tst = Int(Date().timeIntervalSince1970) - 60
            let members = #""lat":41.4816,"lon":-82.6882,"acc":12,"tst":\#(tst)"#
            func post(_ payload: String) async throws -> Int {
                let response = try await client.execute(uri: "/owntracks", method: .post, headers: Self.basic(ann), body: ByteBuffer(string: payload))
                #expect(response.status == .ok)
                return try await service.service.store.fixCount(of: UserID(ann.id))
            }
            for lax in [#"{"_type":"location",\#(members),}"#, #"[{"_type":"location",\#(members)},]"#,
                        #"{"_type":"location","lat":0,\#(members)}"#, #"{"_type":"transition","_type":"location",\#(members)}"#] {
                #expect(try await post(lax) == 0, "\(lax)")
            }
            #expect(try await post(#"{"_type":"location",\#(members)}"#) == 1)
        }
    }

    /// Why a body was ignored, for the log: a syntax error says where, as every body's does.
    @Test func aMalformedBodySaysWhy() {
        #expect(OwnTracksPayload.decode(Data(#"{"_type":"location","lat":1,"#.utf8))
            == .failure(.init(description: "not valid JSON: unexpected end of the body at byte 28 (line 1, column 29)")))
        #expect(OwnTracksPayload.decode(Data(#"[{"_type":"location","lat":1},]"#.utf8))
            == .failure(.init(description: "not valid JSON: a comma before the ] at byte 29 (line 1, column 30)")))
        #expect(OwnTracksPayload.decode(Data(#"{"lat":41.48}"#.utf8)) == .failure(.notMessages))
        #expect(OwnTracksPayload.decode(Data(#"{"_type":"card"}"#.utf8)) == .success([.unsupported("card")]))
    }

    @Test(arguments: [
        #"{"_type":"location","lat":"41.48","lon":-82.68,"tst":1}"#,
        #"{"_type":"location","lat":41.48,"lon":-82.68}"#,
        #"{"_type":"location","lat":41.48,"lon":-82.68,"tst":"12a"}"#,
        #"{"_type":"location","lat":41.48,"lon":-82.68,"tst":-5}"#,
        #"{"lat":41.48}"#, "[1,2]", "null", "", "[{\"_type\":\"location\"}", String(repeating: "[", count: 10_000),
    ])
    func malformedPayloadsAre200EmptyAndStoreNothing(payload: String) async throws {
        try await TestService.withService { service, client in
            let ann = try await client.register("ann")
            let response = try await client.execute(uri: "/owntracks", method: .post, headers: Self.basic(ann), body: ByteBuffer(string: payload))
            #expect(response.status == .ok)
            #expect(String(buffer: response.body) == "[]")
            #expect(try await service.service.store.fixCount(of: UserID(ann.id)) == 0)
        }
    }
}
