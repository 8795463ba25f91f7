import CoasterCore
import Foundation
import Testing

@Suite("Park file validation")
struct ParkImportTests {
    @Test(arguments: ["cedar-point", "kings-island", "six-flags-fiesta-texas"])
    func shippedParksAreValid(name: String) throws {
        let definition = try Fixtures.park(name)
        #expect(definition.park.id.rawValue == name)
        #expect(!definition.zones.isEmpty)
        #expect(TimeZone(identifier: definition.park.timeZone) != nil)
        #expect(definition.park.attribution?.contains("OpenStreetMap contributors") == true)
    }

    @Test func cedarPointHasMillenniumForceWithStatsAndAZoneInsideThePark() throws {
        let cp = try Fixtures.park("cedar-point")
        let ride = try #require(cp.rides.first { $0.name == "Millennium Force" })
        #expect(ride.id == "cedar-point.millennium-force")
        #expect(ride.type == .coaster)
        #expect(ride.stats.manufacturer == "Intamin")
        #expect(ride.stats.opened == 2000)
        let zone = try #require(cp.zones.first { $0.ride == ride.id })
        #expect(zone.kind == .ride)
        // Buffered from its station point: inside the park, about π·25² m² (clipped at the fence at most).
        #expect(try Self.areaOutside(zone.area, park: cp.park.boundary) < 1e-12)
    }

    /// Square degrees of `area` outside `park`: zero up to the rounding of clipped vertices.
    static func areaOutside(_ area: MultiPolygon, park: MultiPolygon) throws -> Double {
        let context = GEOSContext()
        return try context.geometry(area).difference(context.geometry(park)).area()
    }

    /// The OpenStreetMap file as published, before data/parks dropped what the rules refuse.
    @Test func rawOSMCedarPointIsRejectedWholeWithFeatureIndexAndReason() throws {
        let data = try Data(contentsOf: Fixtures.thirdParty.appendingPathComponent("osm-park-geofences/cedar-point.geojson"))
        let rejection = try #require(throws: ImportRejection.self) { try ParkImporter().definition(from: data) }
        let lighthouse = try #require(rejection.issues.first { $0.feature == 1 })
        #expect(lighthouse.pointer == "/features/1/geometry")
        #expect(lighthouse.reason.contains("Lighthouse Point"))
        #expect(lighthouse.reason.contains("outside its park's boundary"))
        #expect(rejection.issues.contains { $0.reason.contains("Sand Bar Stage") && $0.pointer == "/features/52/geometry/coordinates" })
    }

    @Test func aLandOvershootingTheFenceByMetresIsClippedToThePark() throws {
        // Raw OSM Cedar Point, less the two features the rules refuse: Gemini Midway reaches 4.6 m
        // past the fence there, within the tolerance, so the importer keeps it, clipped.
        let url = Fixtures.thirdParty.appendingPathComponent("osm-park-geofences/cedar-point.geojson")
        var document = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let features = try #require(document["features"] as? [[String: Any]])
        document["features"] = features.filter {
            let name = ($0["properties"] as? [String: Any])?["name"] as? String
            return name != "Lighthouse Point" && name != "Sand Bar Stage"
        }.map { feature in
            // OpenStreetMap's outline has no time zone; a park file needs one.
            guard var properties = feature["properties"] as? [String: Any], properties["kind"] as? String == "park" else { return feature }
            properties["timezone"] = "America/New_York"
            return feature.merging(["properties": properties]) { $1 }
        }
        let rawGemini = try #require(features.first { ($0["properties"] as? [String: Any])?["name"] as? String == "Gemini Midway" })
        let definition = try ParkImporter().definition(from: JSONSerialization.data(withJSONObject: document))
        let gemini = try #require(definition.zones.first { $0.name == "Gemini Midway" })
        #expect(try Self.areaOutside(gemini.area, park: definition.park.boundary) < 1e-12)
        let rawRing = try #require(((rawGemini["geometry"] as? [String: Any])?["coordinates"] as? [[[Double]]])?.first)
        let raw = MultiPolygon(polygons: [Polygon(rings: [rawRing.map { Coordinate(lat: $0[1], lon: $0[0]) }])])
        #expect(try Self.areaOutside(raw, park: definition.park.boundary) > 0)
    }

    struct BadCase: Sendable, CustomTestStringConvertible {
        var name: String
        var document: Data
        var feature: Int?
        var pointer: String
        var reason: String
        var testDescription: String { self.name }
    }

    static let square = Fixtures.square(minLon: 0.002, minLat: 0.002, size: 0.001)
    static let badCases: [BadCase] = [
        BadCase(name: "not JSON", document: Data("{".utf8), feature: nil, pointer: "",
                reason: "not valid JSON: unexpected end of the body at byte 1 (line 1, column 2)"),
        BadCase(name: "cut short", document: Data(#"{"type":"FeatureCollection","features":["#.utf8), feature: nil, pointer: "",
                reason: "not valid JSON: unexpected end of the body at byte 40 (line 1, column 41)"),
        BadCase(name: "a trailing comma", document: Data(#"{"type":"FeatureCollection","features":[],}"#.utf8), feature: nil, pointer: "",
                reason: "not valid JSON: a comma before the } at byte 41 (line 1, column 42)"),
        BadCase(name: "a name twice", document: Data(#"{"type":"FeatureCollection","type":"Feature","features":[]}"#.utf8), feature: nil,
                pointer: "", reason: #"not valid JSON: the name "type" twice in one object"#),
        BadCase(name: "not a collection", document: Data(#"{"type":"Feature"}"#.utf8), feature: nil, pointer: "/type", reason: "FeatureCollection"),
        BadCase(name: "no park", document: Data(#"{"type":"FeatureCollection","features":[]}"#.utf8), feature: nil, pointer: "/features", reason: "kind"),
        BadCase(name: "latitude out of range",
                document: Fixtures.document(features: [Fixtures.feature("land", "L", geometry: ["type": "Polygon", "coordinates": [[[0.001, 0.001], [0.002, 91], [0.003, 0.001], [0.001, 0.001]]]])]),
                feature: 1, pointer: "/features/1/geometry/coordinates/0/1/1", reason: "lat 91"),
        BadCase(name: "longitude out of range",
                document: Fixtures.document(features: [Fixtures.feature("poi", "P", geometry: ["type": "Point", "coordinates": [180.5, 0.001]])]),
                feature: 1, pointer: "/features/1/geometry/coordinates/0", reason: "lon 180.5"),
        BadCase(name: "antimeridian edge",
                document: Fixtures.document(features: [Fixtures.feature("land", "L", geometry: ["type": "Polygon", "coordinates": [[[179.9, 0.0], [-179.9, 0.0], [-179.9, 0.1], [179.9, 0.0]]]])]),
                feature: 1, pointer: "/features/1/geometry/coordinates/0/1", reason: "antimeridian"),
        BadCase(name: "open ring",
                document: Fixtures.document(features: [Fixtures.feature("land", "L", geometry: ["type": "Polygon", "coordinates": [[[0.001, 0.001], [0.002, 0.001], [0.002, 0.002], [0.001, 0.002]]]])]),
                feature: 1, pointer: "/features/1/geometry/coordinates/0", reason: "not closed"),
        BadCase(name: "short ring",
                document: Fixtures.document(features: [Fixtures.feature("land", "L", geometry: ["type": "Polygon", "coordinates": [[[0.001, 0.001], [0.002, 0.001], [0.001, 0.001]]]])]),
                feature: 1, pointer: "/features/1/geometry/coordinates/0", reason: "at least 4 positions"),
        BadCase(name: "self-intersecting (bowtie)",
                document: Fixtures.document(features: [Fixtures.feature("land", "Bow", geometry: ["type": "Polygon", "coordinates": [[[0.001, 0.001], [0.003, 0.003], [0.003, 0.001], [0.001, 0.003], [0.001, 0.001]]]])]),
                feature: 1, pointer: "/features/1/geometry", reason: "Self-intersection"),
        BadCase(name: "zone outside the park",
                document: Fixtures.document(features: [Fixtures.feature("land", "Far", geometry: ["type": "Polygon", "coordinates": [Fixtures.square(minLon: 0.02, minLat: 0.02, size: 0.001)]])]),
                feature: 1, pointer: "/features/1/geometry", reason: "outside its park's boundary"),
        BadCase(name: "ride point outside the park",
                document: Fixtures.document(features: [Fixtures.feature("ride", "Far Ride", geometry: ["type": "Point", "coordinates": [0.05, 0.05]])]),
                feature: 1, pointer: "/features/1/geometry/coordinates", reason: "outside its park's boundary"),
        BadCase(name: "duplicate ids",
                document: Fixtures.document(features: [Fixtures.feature("land", "A", id: "same", geometry: ["type": "Polygon", "coordinates": [square]]),
                                                       Fixtures.feature("poi", "B", id: "same", geometry: ["type": "Point", "coordinates": [0.005, 0.005]])]),
                feature: 2, pointer: "/features/2/properties/id", reason: "already used by feature 1"),
        BadCase(name: "bad id", document: Fixtures.document(features: [Fixtures.feature("land", "A", id: "Not A Slug", geometry: ["type": "Polygon", "coordinates": [square]])]),
                feature: 1, pointer: "/features/1/properties/id", reason: "a-z"),
        BadCase(name: "unknown kind", document: Fixtures.document(features: [Fixtures.feature("castle", "A", geometry: ["type": "Polygon", "coordinates": [square]])]),
                feature: 1, pointer: "/features/1/properties/kind", reason: "kind must be"),
        BadCase(name: "two parks", document: Fixtures.document(features: [Fixtures.feature("park", "Again", geometry: ["type": "Polygon", "coordinates": [square]])]),
                feature: 1, pointer: "/features/1", reason: "second park"),
        BadCase(name: "queue without its ride", document: Fixtures.document(features: [Fixtures.feature("queue", "Q", geometry: ["type": "Polygon", "coordinates": [square]], extra: ["ride": "nope"])]),
                feature: 1, pointer: "/features/1/properties/ride", reason: "queue zone"),
        BadCase(name: "land without geometry", document: Fixtures.document(features: [Fixtures.feature("land", "L", geometry: nil)]),
                feature: 1, pointer: "/features/1/geometry", reason: "needs a geometry"),
        BadCase(name: "line geometry", document: Fixtures.document(features: [Fixtures.feature("land", "L", geometry: ["type": "LineString", "coordinates": [[0.001, 0.001], [0.002, 0.002]]])]),
                feature: 1, pointer: "/features/1/geometry/type", reason: "unsupported geometry type"),
        BadCase(name: "bad ride type", document: Fixtures.document(features: [Fixtures.feature("ride", "R", geometry: ["type": "Point", "coordinates": [0.005, 0.005]], extra: ["type": "rocket"])]),
                feature: 1, pointer: "/features/1/properties/type", reason: "type must be one of"),
        BadCase(name: "stats out of range", document: Fixtures.document(features: [Fixtures.feature("ride", "R", geometry: ["type": "Point", "coordinates": [0.005, 0.005]], extra: ["stats": ["speed_kmh": -3]])]),
                feature: 1, pointer: "/features/1/properties/stats/speed_kmh", reason: "number in"),
        BadCase(name: "radius out of range", document: Fixtures.document(features: [Fixtures.feature("ride", "R", geometry: ["type": "Point", "coordinates": [0.005, 0.005]], extra: ["radius_m": 5000])]),
                feature: 1, pointer: "/features/1/properties/radius_m", reason: "radius_m"),
        BadCase(name: "bad time zone", document: Fixtures.document(park: ["timezone": "Mars/Olympus"]),
                feature: 0, pointer: "/features/0/properties/timezone", reason: "IANA"),
    ]

    @Test(arguments: badCases)
    func badFilesAreRejectedWithWhereAndWhy(_ bad: BadCase) throws {
        let rejection = try #require(throws: ImportRejection.self) { try ParkImporter().definition(from: bad.document) }
        let issue = try #require(rejection.issues.first, "no issue reported")
        #expect(issue.feature == bad.feature)
        #expect(issue.pointer == bad.pointer)
        #expect(issue.reason.contains(bad.reason), "reason was: \(issue.reason)")
    }

    /// The one issue a file with `features` added to the square park is refused for.
    static func onlyIssue(_ features: [[String: Any]]) throws -> ImportIssue {
        let rejection = try #require(throws: ImportRejection.self) {
            try ParkImporter().definition(from: Fixtures.document(features: features))
        }
        #expect(rejection.issues.count == 1, "issues: \(rejection.issues)")
        return try #require(rejection.issues.first)
    }

    @Test func aSelfIntersectingLandIsLocatedWhereItsEdgesCross() throws {
        // A lopsided bowtie, so the crossing is not the middle of the box.
        let ring: [[Double]] = [[0.001, 0.001], [0.004, 0.003], [0.004, 0.001], [0.001, 0.0025], [0.001, 0.001]]
        let issue = try Self.onlyIssue([Fixtures.feature("land", "Bow", geometry: ["type": "Polygon", "coordinates": [ring]])])
        #expect(issue.reason.contains("Self-intersection"))
        // Edge 0→1 against edge 2→3: p + t·r = q + u·s.
        let (p, r) = ((x: ring[0][0], y: ring[0][1]), (x: ring[1][0] - ring[0][0], y: ring[1][1] - ring[0][1]))
        let (q, d) = ((x: ring[2][0], y: ring[2][1]), (x: ring[3][0] - ring[2][0], y: ring[3][1] - ring[2][1]))
        let t = ((q.x - p.x) * d.y - (q.y - p.y) * d.x) / (r.x * d.y - r.y * d.x)
        let crossing = Coordinate(lat: p.y + t * r.y, lon: p.x + t * r.x)
        let location = try #require(issue.location)
        #expect(abs(location.lat - crossing.lat) < 1e-6 && abs(location.lon - crossing.lon) < 1e-6, "at \(location), crossing \(crossing)")
    }

    @Test func aLandReachingOutsideTheParkIsLocatedAtItsFarthestVertex() throws {
        // The park is 0…0.01° square; one vertex of the land lies 500 m north of its north fence.
        let north = 0.01 + 500 * Geodesy.degreesPerMetre(at: 0.005).lat
        let ring: [[Double]] = [[0.004, 0.004], [0.006, 0.004], [0.006, north], [0.004, 0.008], [0.004, 0.004]]
        let issue = try Self.onlyIssue([Fixtures.feature("land", "Overhang", geometry: ["type": "Polygon", "coordinates": [ring]])])
        #expect(issue.reason.contains("reaches 500.0 m outside"), "reason was: \(issue.reason)")
        #expect(issue.location == Coordinate(lat: north, lon: 0.006))
    }

    @Test func aLandJustOutsideTheFenceIsLocatedAtItsMiddle() throws {
        // Within the tolerance of the fence but all of it outside: nothing is left once clipped.
        let metre = Geodesy.degreesPerMetre(at: 0.01).lat
        let ring: [[Double]] = [[0.004, 0.01 + metre], [0.006, 0.01 + metre], [0.006, 0.01 + 3 * metre], [0.004, 0.01 + 3 * metre], [0.004, 0.01 + metre]]
        let issue = try Self.onlyIssue([Fixtures.feature("land", "Verge", geometry: ["type": "Polygon", "coordinates": [ring]])])
        #expect(issue.reason.contains("has no area inside the park"))
        let location = try #require(issue.location)
        #expect(abs(location.lat - (0.01 + 2 * metre)) < 1e-12 && abs(location.lon - 0.005) < 1e-12)
    }

    @Test func aRidePointOrPositionOutsideTheParkIsLocatedThere() throws {
        let point = try Self.onlyIssue([Fixtures.feature("ride", "Far Ride", geometry: ["type": "Point", "coordinates": [0.05, 0.04]])])
        #expect(point.location == Coordinate(lat: 0.04, lon: 0.05))
        let many = try Self.onlyIssue([Fixtures.feature("poi", "Stalls", geometry: ["type": "MultiPoint", "coordinates": [[0.005, 0.005], [-0.002, 0.003]]])])
        #expect(many.pointer == "/features/1/geometry/coordinates/1")
        #expect(many.location == Coordinate(lat: 0.003, lon: -0.002))
        let position = try Self.onlyIssue([Fixtures.feature("ride", "Drawn", geometry: ["type": "Polygon", "coordinates": [Self.square]],
                                                            extra: ["position": [0.02, 0.005]])])
        #expect(position.pointer == "/features/1/properties/position")
        #expect(position.location == Coordinate(lat: 0.005, lon: 0.02))
    }

    @Test func problemsOfStructureHaveNoPlace() throws {
        let issue = try Self.onlyIssue([Fixtures.feature("land", "L", geometry: nil)])
        #expect(issue.location == nil)
    }

    @Test func expectedParkIDComesFromThePathOrMustMatch() throws {
        let noID = Fixtures.document(park: ["id": NSNull()])
        #expect(try ParkImporter().definition(from: noID, expectedPark: "from-path").park.id == "from-path")
        let rejection = try #require(throws: ImportRejection.self) {
            try ParkImporter().definition(from: Fixtures.document(), expectedPark: "other")
        }
        #expect(rejection.issues.first?.pointer == "/features/0/properties/id")
    }

    @Test func pointZonesAreBufferedByTheDocumentedRadiusAndClippedAtTheFence() throws {
        // One ride in the middle, one 5 m inside the park's west edge (lon 0).
        let metreInDegrees = Geodesy.degreesPerMetre(at: 0.005).lon
        let document = Fixtures.document(features: [
            Fixtures.feature("ride", "Middle", geometry: ["type": "Point", "coordinates": [0.005, 0.005]]),
            Fixtures.feature("ride", "Edge", geometry: ["type": "Point", "coordinates": [5 * metreInDegrees, 0.005]], extra: ["radius_m": 20]),
            Fixtures.feature("poi", "Twice", geometry: ["type": "MultiPoint", "coordinates": [[0.003, 0.003], [0.007, 0.007]]]),
        ])
        let d = try ParkImporter().definition(from: document)
        let middle = try #require(d.zones.first { $0.name == "Middle" })
        let box = try #require(middle.area.boundingBox)
        let widthMetres = (box.maxLon - box.minLon) / metreInDegrees
        #expect(abs(widthMetres - 2 * ParkImporter.defaultPointRadius) < 0.5)
        let edge = try #require(d.zones.first { $0.name == "Edge" })
        #expect(try #require(edge.area.boundingBox).minLon >= 0)
        #expect(d.zones.first { $0.name == "Twice" }?.area.polygons.count == 2)
        #expect(d.rides.map(\.name) == ["Middle", "Edge"])
    }

    @Test func hugeCoordinateArraysAreRefusedByTheLimit() throws {
        var limits = ParkImporter.Limits()
        limits.maxVerticesPerFeature = 100
        let ring = (0..<200).map { i -> [Double] in
            let a = 2 * Double.pi * Double(i) / 200
            return [0.005 + 0.001 * cos(a), 0.005 + 0.001 * sin(a)]
        }
        let document = Fixtures.document(features: [Fixtures.feature("land", "Round", geometry: ["type": "Polygon", "coordinates": [ring + [ring[0]]]])])
        let rejection = try #require(throws: ImportRejection.self) { try ParkImporter(limits: limits).definition(from: document) }
        #expect(rejection.issues.first?.reason.contains("too many vertices") == true)
    }
}

@Suite("JSON values")
struct JSONValueTests {
    /// Every kind, nested, read as itself: numbers are not read as booleans or the reverse, a
    /// numeric string stays a string, and writing it back gives the same value.
    @Test func everyKindIsReadAsItself() throws {
        let text = #"{"a":[1,2.5,-3e2,[0,1]],"b":true,"c":false,"d":null,"e":"1","f":{"g":[{"h":"x"}],"i":[]},"j":0}"#
        let value = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        let expected: JSONValue = .object([
            "a": .array([.number(1), .number(2.5), .number(-300), .array([.number(0), .number(1)])]),
            "b": .bool(true), "c": .bool(false), "d": .null, "e": .string("1"),
            "f": .object(["g": .array([.object(["h": .string("x")])]), "i": .array([])]),
            "j": .number(0),
        ])
        #expect(value == expected)
        #expect(try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(value)) == expected)
    }
}

