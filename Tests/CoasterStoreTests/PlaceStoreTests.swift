import CoasterCore
@testable import CoasterStore
import CoasterTestSupport
import Foundation
import GRDB
import Testing

/// Where places are and what they are, through the store: written with a park, read back alike
/// on both stores; and in a database written before places had a point.
@Suite("Places in the store")
struct PlaceStoreTests {
    @Test func aParksPlacesComeBackWithTheirPointsLandsAndCategories() async throws {
        let t = try await TemporaryStore()
        defer { t.remove() }
        let definition = try Parks.definition("cedar-point")
        _ = try await t.store.replaceParks([definition])
        let read = try #require(try await t.store.park("cedar-point"))
        #expect(read.zones == definition.zones)
        let restroom = try #require(read.zones.first { $0.id == "cedar-point.restrooms-7" })
        #expect(restroom.position == Coordinate(lat: 41.482261, lon: -82.687982))
        #expect(restroom.land == "Millennium Midway")
        #expect(restroom.category == "restroom")
        // Every ride and poi has its point; lands have none.
        #expect(read.zones.allSatisfy { ($0.kind == .ride || $0.kind == .poi) == ($0.position != nil) })
        #expect(ParkPlaces(try await t.store.allParks()).count == ParkPlaces([definition]).count)
    }

    /// A database written before places: its gates are entrances after the migration, and its
    /// places, which have no point stored, stand at their zones' centroids.
    @Test(.enabled(if: TestDatabase.isSQLite)) func aDatabaseFromBeforePlacesKeepsItsPlaces() async throws {
        let migrations = Migrations.migrator.migrations
        let before = try #require(migrations.firstIndex(of: "2026-11-30 places").map { migrations[$0 - 1] })
        let file = try OldStore(upTo: before)
        defer { file.remove() }
        let park = "MULTIPOLYGON(((0 0, 0.01 0, 0.01 0.01, 0 0.01, 0 0)))"
        let gate = Geodesy.geodesicCircle(center: Coordinate(lat: 0.005, lon: 0.002), radius: 25)
        let wkt = "MULTIPOLYGON(((" + gate.map { "\($0.lon) \($0.lat)" }.joined(separator: ", ") + ")))"
        try await file.pool.write { db in
            try db.execute(sql: "INSERT INTO parks (id, name, time_zone, imported_at, boundary) VALUES ('square', 'Square', 'UTC', 0, GeomFromText(?, 4326))",
                           arguments: [park])
            try db.execute(sql: """
                INSERT INTO zones (id, park_id, kind, name, position, category, area)
                VALUES ('square.gate', 'square', 'poi', 'Gate', 0, 'gate', GeomFromText(?, 4326))
                """, arguments: [wkt])
        }
        try file.pool.close()
        let store = try SpatiaLiteStore(path: file.path)
        defer { try? store.close() }
        let zones = try await store.pool.read { db in try Row.fetchAll(db, sql: "SELECT category, lat, lon, land FROM zones") }
        #expect(zones.count == 1)
        #expect(zones.first?["category"] as String? == "entrance")
        #expect(zones.first?["lat"] as Double? == nil)
        let parks = try await store.allParks()
        #expect(parks.first?.zones.first?.position == nil)
        let places = ParkPlaces(parks)
        let place = try #require(places.places(ofParkAt: 0).first)
        #expect(place.category == .entrance)
        #expect(Geodesy.distance(place.position, Coordinate(lat: 0.005, lon: 0.002)) < 0.01)
    }
}
