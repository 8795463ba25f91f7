import CoasterCore
import Foundation
import Testing

@Suite("Places")
struct PlacesTests {
    static let millenniumForce = Coordinate(lat: 41.481656, lon: -82.688132)

    // MARK: The park file's places

    @Test func shippedParksCarryTheCategoriesAndLandsOfTheirPlaces() throws {
        let cp = try Fixtures.park("cedar-point")
        let pois = cp.zones.filter { $0.kind == .poi }
        #expect(pois.count == 131)
        // Every category is one of the vocabulary's, none of them a ride or a show.
        for zone in pois {
            let category = try #require(zone.category.flatMap(PlaceCategory.init(rawValue:)), "\(zone.id): \(zone.category ?? "none")")
            #expect(PlaceCategory.poiCategories.contains(category))
            #expect(zone.position != nil)
        }
        func count(_ c: PlaceCategory) -> Int { pois.filter { $0.category == c.rawValue }.count }
        #expect(count(.restroom) == 15)
        #expect(count(.firstAid) == 2)
        #expect(count(.lockers) == 9)
        #expect(count(.guestServices) == 3)
        #expect(count(.entrance) == 3)
        let restroom = try #require(pois.first { $0.id == "cedar-point.restrooms-7" })
        #expect(restroom.land == "Millennium Midway")
        #expect(restroom.position == Coordinate(lat: 41.482261, lon: -82.687982))
        // A ride's place is its station point.
        #expect(cp.zones.first { $0.id == "cedar-point.millennium-force" }?.position == Self.millenniumForce)
    }

    struct BadCategory: Sendable, CustomTestStringConvertible {
        var category: Any & Sendable
        var reason: String
        var testDescription: String { "\(self.category)" }
    }

    @Test(arguments: [
        BadCategory(category: "atm", reason: #"category "atm" is not one of food, restroom, first-aid"#),
        BadCategory(category: "Restroom", reason: "is not one of"),
        BadCategory(category: "ride", reason: #"a ride or a show is a feature of kind "ride""#),
        BadCategory(category: "show", reason: #"a ride or a show is a feature of kind "ride""#),
        BadCategory(category: 3, reason: "category must be one of food, restroom"),
    ])
    func aPlaceOfAnUnknownCategoryRefusesTheFileNamingIt(_ bad: BadCategory) throws {
        let document = Fixtures.document(features: [
            Fixtures.feature("poi", "Fine", geometry: ["type": "Point", "coordinates": [0.004, 0.004]], extra: ["category": "food"]),
            Fixtures.feature("poi", "Odd", geometry: ["type": "Point", "coordinates": [0.005, 0.005]], extra: ["category": bad.category]),
        ])
        let rejection = try #require(throws: ImportRejection.self) { try ParkImporter().definition(from: document) }
        #expect(rejection.issues.count == 1)
        let issue = try #require(rejection.issues.first)
        #expect(issue.feature == 2)
        #expect(issue.pointer == "/features/2/properties/category")
        #expect(issue.reason.contains(bad.reason), "reason was: \(issue.reason)")
    }

    /// A file written before the vocabulary still loads: its gates are entrances, said in a warning.
    @Test func aGateIsReadAsAnEntranceWithAWarning() throws {
        let read = try ParkImporter().read(Fixtures.document(features: [
            Fixtures.feature("poi", "Main Gate", geometry: ["type": "Point", "coordinates": [0.005, 0.005]], extra: ["category": "gate"]),
        ]))
        #expect(read.definition.zones.first?.category == "entrance")
        #expect(read.warnings.map(\.pointer) == ["/features/1/properties/category"])
        #expect(read.warnings.first?.reason.contains(#"is now "entrance""#) == true)
    }

    @Test func aPlaceIsAtItsPointItsPositionOrItsAreasCentroid() throws {
        let square = Fixtures.square(minLon: 0.002, minLat: 0.002, size: 0.002)
        let read = try ParkImporter().read(Fixtures.document(features: [
            Fixtures.feature("poi", "Point", geometry: ["type": "Point", "coordinates": [0.005, 0.006]], extra: ["land": "Midway"]),
            Fixtures.feature("poi", "Two", geometry: ["type": "MultiPoint", "coordinates": [[0.007, 0.007], [0.008, 0.008]]]),
            Fixtures.feature("poi", "Area", geometry: ["type": "Polygon", "coordinates": [square]]),
            Fixtures.feature("poi", "Placed", geometry: ["type": "Polygon", "coordinates": [square]], extra: ["position": [0.0025, 0.0035]]),
            Fixtures.feature("land", "Land", geometry: ["type": "Polygon", "coordinates": [square]], extra: ["position": [0.0025, 0.0035]]),
        ]))
        let zones = Dictionary(uniqueKeysWithValues: read.definition.zones.map { ($0.name, $0) })
        #expect(zones["Point"]?.position == Coordinate(lat: 0.006, lon: 0.005))
        #expect(zones["Point"]?.land == "Midway")
        #expect(zones["Two"]?.position == Coordinate(lat: 0.007, lon: 0.007))
        #expect(zones["Area"]?.position == nil)
        #expect(zones["Placed"]?.position == Coordinate(lat: 0.0035, lon: 0.0025))
        // A land is no place: its position is an unknown property, said and ignored.
        #expect(zones["Land"]?.position == nil)
        #expect(read.warnings.map(\.pointer) == ["/features/5/properties/position"])

        let places = ParkPlaces([read.definition])
        let park = try #require(places.park("square"))
        let byID = Dictionary(uniqueKeysWithValues: places.places(ofParkAt: park).map { ($0.id, $0) })
        let centroid = try #require(byID["square.area"]?.position)
        #expect(abs(centroid.lat - 0.003) < 1e-12 && abs(centroid.lon - 0.003) < 1e-12)
        #expect(byID["square.placed"]?.position == Coordinate(lat: 0.0035, lon: 0.0025))
        #expect(byID["square.land"] == nil)
    }

    @Test func aPositionOutsideThePark() throws {
        let rejection = try #require(throws: ImportRejection.self) {
            try ParkImporter().definition(from: Fixtures.document(features: [
                Fixtures.feature("poi", "Far", geometry: ["type": "Point", "coordinates": [0.005, 0.005]], extra: ["position": [0.05, 0.05]]),
            ]))
        }
        #expect(rejection.issues.map(\.pointer) == ["/features/1/properties/position"])
        #expect(rejection.issues.first?.reason.contains("lies outside its park's boundary") == true)
    }

    // MARK: Queries

    @Test(arguments: [
        (nil, nil, PlaceQuery()),
        ("restroom", nil, PlaceQuery(categories: PlaceCategories([.restroom]))),
        ("food,first-aid", "3", PlaceQuery(categories: PlaceCategories([.food, .firstAid]), limit: 3)),
        ("food, food ,ride", "100", PlaceQuery(categories: PlaceCategories([.food, .ride]), limit: 100)),
        (nil, "1", PlaceQuery(limit: 1)),
    ] as [(String?, String?, PlaceQuery)])
    func queriesRead(_ category: String?, _ limit: String?, _ expected: PlaceQuery) {
        #expect(PlaceQuery.parse(category: category?[...], limit: limit?[...]) == .success(expected))
    }

    @Test(arguments: [
        ("toilet", nil, ["category"]),
        ("food,", nil, ["category"]),
        ("", nil, ["category"]),
        ("gate", nil, ["category"]),
        (String(repeating: "food,", count: 60), nil, ["category"]),
        (nil, "0", ["limit"]),
        (nil, "101", ["limit"]),
        (nil, "ten", ["limit"]),
        (nil, "", ["limit"]),
        ("toilet", "-1", ["category", "limit"]),
    ] as [(String?, String?, [String])])
    func badQueriesNameEveryBadParameter(_ category: String?, _ limit: String?, _ named: [String]) throws {
        guard case .failure(let refusal) = PlaceQuery.parse(category: category?[...], limit: limit?[...]) else {
            Issue.record("accepted")
            return
        }
        #expect(refusal.issues.map(\.parameter) == named)
    }

    // MARK: Answers

    static let shipped: ParkPlaces = {
        let parks = ["cedar-point", "kings-island", "six-flags-fiesta-texas"].map { try! Fixtures.park($0) }
        return ParkPlaces(parks)
    }()

    /// The nearest restroom from Millennium Force's station, against GeographicLib: numbers
    /// computed once with `Geodesic.WGS84.Inverse(41.481656, -82.688132, lat, lon)` (Python
    /// geographiclib 2.1) for each Cedar Point restroom in data/parks.
    @Test func theNearestRestroomFromMillenniumForceMatchesGeographicLib() throws {
        let places = Self.shipped
        let park = try #require(places.park("cedar-point"))
        let found = places.nearest(inParkAt: park, from: Self.millenniumForce, PlaceQuery(categories: PlaceCategories([.restroom]), limit: 3))
        let all = places.places(ofParkAt: park)
        #expect(found.map { all[$0.place].id } == ["cedar-point.restrooms-7", "cedar-point.restrooms-6", "cedar-point.restrooms-9"])
        let reference: [(distance: Double, azimuth: Double)] = [
            (68.35116758939472, 10.561244673871718), (218.51982765109747, 91.8631887029693), (276.6809813384328, -45.50265351930751 + 360),
        ]
        for (f, r) in zip(found, reference) {
            #expect(abs(try #require(f.distance) - r.distance) < 1e-6)
            #expect(abs(try #require(f.bearing) - r.azimuth) < 1e-6)
        }
    }

    /// Nearest first is the geodesic order, whatever the position and the categories: against a
    /// brute force over every place with `geod_inverse`, from random points in and around each park.
    @Test func nearestFirstIsTheGeodesicOrder() throws {
        var generator = SeededGenerator(seed: 49)
        let places = Self.shipped
        for (p, id) in places.parkIDs.enumerated() {
            let all = places.places(ofParkAt: p)
            let box = try #require(BoundingBox(all.lazy.map(\.position)))
            for round in 0..<200 {
                let origin = Coordinate(lat: Double.random(in: (box.minLat - 0.01)...(box.maxLat + 0.01), using: &generator),
                                        lon: Double.random(in: (box.minLon - 0.01)...(box.maxLon + 0.01), using: &generator))
                let categories = PlaceCategories(PlaceCategory.allCases.filter { _ in Bool.random(using: &generator) })
                let limit = [1, 2, 5, 10, 100][round % 5]
                let found = places.nearest(inParkAt: p, from: origin, PlaceQuery(categories: categories, limit: limit))
                let expected = all.indices
                    .filter { i in categories.rawValue == 0 || all[i].category.map { categories.contains($0.bit) } == true }
                    .map { (d: Geodesy.distance(origin, all[$0].position), i: $0) }
                    .sorted { ($0.d, $0.i) < ($1.d, $1.i) }
                    .prefix(limit)
                #expect(found.map(\.place) == expected.map(\.i), "\(id) from \(origin)")
                for f in found {
                    let bearing = try #require(f.bearing)
                    #expect(bearing >= 0 && bearing < 360)
                }
            }
        }
    }

    @Test func byNameListsTheAskedCategoriesAlphabetically() throws {
        let places = Self.shipped
        let park = try #require(places.park("cedar-point"))
        let all = places.places(ofParkAt: park)
        let found = places.byName(inParkAt: park, PlaceQuery(categories: PlaceCategories([.show]), limit: 100))
        #expect(!found.isEmpty)
        #expect(found.allSatisfy { $0.distance == nil && $0.bearing == nil && all[$0.place].category == .show })
        let names = found.map { all[$0.place].name }
        #expect(names == names.sorted { $0.compare($1, options: [.caseInsensitive, .diacriticInsensitive]) != .orderedDescending })
        #expect(places.byName(inParkAt: park, PlaceQuery(limit: 7)).count == 7)
    }

    @Test func ridesArePlacesOnceAndRemovedRidesAreNone() throws {
        let cp = try Fixtures.park("cedar-point")
        var definition = cp
        let closed = try #require(definition.rides.firstIndex { $0.id == "cedar-point.millennium-force" })
        definition.rides[closed].status = .removed
        let places = ParkPlaces([definition])
        let all = places.places(ofParkAt: 0)
        #expect(!all.contains { $0.id == "cedar-point.millennium-force" })
        #expect(Set(all.map(\.id)).count == all.count)
        let rides = ParkPlaces([cp]).places(ofParkAt: 0).filter { $0.category == .ride || $0.category == .show }
        #expect(rides.count == cp.rides.filter { $0.status != .removed && $0.status != .underConstruction }.count)
        #expect(rides.first { $0.id == "cedar-point.millennium-force" }?.land == "Millennium Midway")
    }
}
