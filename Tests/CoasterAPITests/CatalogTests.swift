import CoasterAPI
import CoasterCore
import CoasterHTTP
import CoasterService
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// The ride catalogue over HTTP (docs: Catalogue): the repository's catalogue file loaded by an
/// admin over the real parks, searched by words, typos and filters; bad searches and bad files.
@Suite("Catalogue")
struct CatalogTests {
    static let catalogFile = TestService.repoRoot.appendingPathComponent("data/catalog/coasters.json")

    /// The ride ids of a search, in order.
    static func search(_ client: some TestClientProtocol, _ query: String, as user: TestUser,
                       sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: Any] {
        let r = try await client.get("/v1/catalog/search?\(query)", as: user)
        #expect(r.status == .ok, "\(query): \(String(buffer: r.body).prefix(300))", sourceLocation: sourceLocation)
        return try json(r.body)
    }

    static func rideIDs(_ page: [String: Any]) -> [String] {
        (page["rides"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
    }

    /// An admin loads the catalogue file; then search finds by prefix words with manufacturers'
    /// abbreviations, by a misspelt name, and by filters, and a ride's detail says whether it can
    /// be logged. Loading the file again changes nothing.
    @Test func theWikipediaCoastersOverTheRealParks() async throws {
        try await TestService.withService { s, client in
            let admin = try await s.admin("catalogue.admin", on: client)
            let ann = try await client.register("ann")
            var headers = admin.auth
            headers[.contentType] = "application/json"
            let file = ByteBuffer(bytes: try Data(contentsOf: Self.catalogFile))
            let loaded = try await client.execute(uri: "/v1/admin/catalog", method: .put, headers: headers, body: file)
            #expect(loaded.status == .ok, "\(String(buffer: loaded.body).prefix(500))")
            let summary = try json(loaded.body)
            #expect((summary["added"] as? Int ?? 0) > 700, "\(summary)")
            #expect((summary["matchedFenced"] as? Int ?? 0) > 0, "the fenced Cedar Point coasters are in the file: \(summary)")
            let counts = try #require(summary["catalog"] as? [String: Any])
            #expect((counts["rides"] as? Int ?? 0) >= 780)
            #expect((counts["parks"] as? Int ?? 0) >= 256)
            let again = try json(try await client.execute(uri: "/v1/admin/catalog", method: .put, headers: headers, body: file).body)
            #expect(again["added"] as? Int == 0, "the same file twice: \(again)")
            #expect((again["catalog"] as? [String: Any])?["rides"] as? Int == counts["rides"] as? Int)

            // Words: every word a prefix, the manufacturer's abbreviation a word.
            let hypers = try await Self.search(client, "q=b%26m%20hyper", as: ann)
            #expect(Set(Self.rideIDs(hypers)).isSuperset(of: ["kings-island.diamondback", "kings-island.orion"]), "\(Self.rideIDs(hypers))")
            #expect(hypers["approximate"] as? Bool == false)
            let hyperRides = hypers["rides"] as? [[String: Any]] ?? []
            #expect(hyperRides.allSatisfy { (($0["stats"] as? [String: Any])?["manufacturer"] as? String) == "Bolliger & Mabillard" }, "\(Self.rideIDs(hypers))")
            // A typo: spelt alike, said so.
            let typo = try await Self.search(client, "q=millenium", as: ann)
            #expect(Self.rideIDs(typo).first == "cedar-point.millennium-force", "\(Self.rideIDs(typo))")
            #expect(typo["approximate"] as? Bool == true)
            // Diacritics and case do not matter; a park's name finds the park too.
            let park = try await Self.search(client, "q=CEDAR%20POINT&sort=height&limit=3", as: ann)
            #expect(Self.rideIDs(park).first == "cedar-point.top-thrill-dragster", "\(Self.rideIDs(park))")
            #expect((park["parks"] as? [[String: Any]])?.first?["id"] as? String == "cedar-point")
            #expect((park["parks"] as? [[String: Any]])?.first?["fenced"] as? Bool == true)

            // Filters, together.
            let tall = try await Self.search(client, "park=kings-island&minHeight=60&sort=height", as: ann)
            #expect(Self.rideIDs(tall).starts(with: ["kings-island.orion", "kings-island.diamondback"]), "\(Self.rideIDs(tall))")
            let heights = (tall["rides"] as? [[String: Any]] ?? []).map { (($0["stats"] as? [String: Any])?["heightM"] as? NSNumber)?.doubleValue ?? 0 }
            #expect(heights.allSatisfy { $0 >= 60 } && heights == heights.sorted(by: >))
            let bm = try await Self.search(client, "manufacturer=b%26m&park=cedar-point&openedFrom=2010&sort=name", as: ann)
            #expect(Self.rideIDs(bm) == ["cedar-point.gatekeeper", "cedar-point.rougarou", "cedar-point.valravn"], "\(Self.rideIDs(bm))")
            let looping = try await Self.search(client, "park=cedar-point&inversions=5&type=coaster", as: ann)
            #expect(!Self.rideIDs(looping).isEmpty)
            #expect((looping["rides"] as? [[String: Any]] ?? []).allSatisfy { (($0["stats"] as? [String: Any])?["inversions"] as? Int ?? 0) >= 5 })
            // Without words: the catalogue by name, a page at a time.
            let first = Self.rideIDs(try await Self.search(client, "limit=5", as: ann))
            let next = Self.rideIDs(try await Self.search(client, "limit=5&offset=5", as: ann))
            #expect(first.count == 5 && next.count == 5 && Set(first).isDisjoint(with: next))

            // FTS syntax is words: never an error.
            for q in ["%22", "*", "NEAR(", "-x", "a%20OR%20b", "millennium%22%20OR%20%22force", "force*", "%22%22%22", "NEAR(millennium%20force,%202)"] {
                let r = try await client.get("/v1/catalog/search?q=\(q)", as: ann)
                #expect(r.status == .ok, "q=\(q): \(String(buffer: r.body).prefix(200))")
            }

            // One ride: fenced, with its figures and whether it is loggable.
            let mf = try json(try await client.get("/v1/catalog/rides/cedar-point.millennium-force", as: ann).body)
            #expect(mf["name"] as? String == "Millennium Force")
            #expect(mf["fencedRide"] as? String == "cedar-point.millennium-force")
            #expect(mf["loggable"] as? Bool == true && mf["note"] == nil)
            #expect(((mf["stats"] as? [String: Any])?["heightM"] as? NSNumber)?.doubleValue == 94)
            #expect((mf["park"] as? [String: Any])?["fenced"] as? Bool == true)
            #expect(mf["lists"] as? Int == 0)
            // A coaster whose park has no fence yet: in the catalogue, not loggable, and it says so.
            let nemesis = try json(try await client.get("/v1/catalog/rides/alton-towers.nemesis", as: ann).body)
            #expect(nemesis["loggable"] as? Bool == false)
            #expect((nemesis["note"] as? String)?.contains("not loaded with geofences") == true)
            #expect(nemesis.keys.contains("fencedRide") && nemesis["fencedRide"] is NSNull, "fencedRide is written as null")
            #expect((nemesis["position"] as? [String: Any])?["lat"] != nil)
            try expectProblem(try await client.get("/v1/catalog/rides/cedar-point.no-such-ride", as: ann), .notFound, .noSuchRide)
            try expectProblem(try await client.get("/v1/catalog/rides/nonsense", as: ann), .notFound, .noSuchRide)
        }
    }

    /// A search parameter out of its bounds is 422 naming it; a bad catalogue file is refused
    /// whole, naming every problem, and writes nothing.
    @Test func badSearchesAndBadFilesAreRefusedNamingWhatIsWrong() async throws {
        try await TestService.withService { s, client in
            let ann = try await client.register("ann")
            let cases: [(String, [String])] = [
                ("q=", ["q"]), ("q=%20%20", ["q"]), ("q=\(String(repeating: "a", count: 201))", ["q"]),
                ("limit=0", ["limit"]), ("limit=51", ["limit"]), ("offset=1001", ["offset"]), ("offset=-1", ["offset"]),
                ("type=rocket", ["type"]), ("sort=fun", ["sort"]), ("minHeight=NaN", ["minHeight"]), ("minSpeed=-1", ["minSpeed"]),
                ("minHeight=1e400", ["minHeight"]), ("inversions=x", ["inversions"]), ("park=Cedar%20Point", ["park"]),
                ("openedFrom=2020&openedTo=2000", ["openedTo"]), ("q=&limit=0&sort=up", ["q", "limit", "sort"]),
            ]
            for (query, names) in cases {
                let problem = try expectProblem(try await client.get("/v1/catalog/search?\(query)", as: ann), .unprocessableContent, .invalidSearch)
                let named = (problem["invalid-params"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
                #expect(named.sorted() == names.sorted(), "\(query): \(problem)")
            }
            try expectProblem(try await client.get("/v1/catalog/search?q=force", as: nil), .unauthorized, .unauthorized)

            let admin = try await s.admin("catalogue.admin", on: client)
            var headers = admin.auth
            headers[.contentType] = "application/json"
            let bad = #"""
                {"parks": [{"id": "Bad Park", "name": ""}, {"id": "ok-park", "name": "OK"}],
                 "rides": [{"id": "ok-park.fine", "park": "ok-park", "name": "Fine", "height_m": 40},
                           {"id": "ok-park.tall", "park": "ok-park", "name": "Tall", "height_m": 9000, "type": "rocket"},
                           {"id": "elsewhere.x", "park": "elsewhere", "name": "X"}]}
                """#
            let refused = try await client.execute(uri: "/v1/admin/catalog", method: .put, headers: headers, body: ByteBuffer(string: bad))
            let problem = try expectProblem(refused, .unprocessableContent, .invalidCatalogFile)
            let pointers = Set((problem["errors"] as? [[String: Any]] ?? []).compactMap { $0["pointer"] as? String })
            #expect(pointers.isSuperset(of: ["/parks/0/id", "/parks/0/name", "/rides/1/height_m", "/rides/1/type", "/rides/2/park"]), "\(pointers)")
            #expect(!pointers.contains { $0.hasPrefix("/rides/0") })
            // Nothing of it was written: not even its good entry.
            try expectProblem(try await client.get("/v1/catalog/rides/ok-park.fine", as: ann), .notFound, .noSuchRide)
            let shape = try await client.execute(uri: "/v1/admin/catalog", method: .put, headers: headers, body: ByteBuffer(string: #"{"parks": [], "rides": [{"id": 7}]}"#))
            #expect(Set((try expectProblem(shape, .unprocessableContent, .invalidCatalogFile)["errors"] as? [[String: Any]] ?? [])
                .compactMap { $0["pointer"] as? String }) == ["/rides/0/id"])
            let broken = try await client.execute(uri: "/v1/admin/catalog", method: .put, headers: headers, body: ByteBuffer(string: #"{"parks": [,"#))
            try expectProblem(broken, .badRequest, .malformedBody)
            let member = try await client.execute(uri: "/v1/admin/catalog", method: .put, headers: [.authorization: "Bearer \(ann.token)"],
                                                  body: ByteBuffer(string: "{}"))
            try expectProblem(member, .forbidden, .forbidden)
        }
    }
}
