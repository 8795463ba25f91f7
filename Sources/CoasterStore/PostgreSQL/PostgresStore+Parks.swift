import CoasterCore
import Foundation
import PostgresNIO

/// Parks, their fences and rides. Geometry travels as WKB both ways: `ST_GeomFromWKB(…, 4326)` in,
/// `ST_AsBinary(…, 'NDR')` out (little-endian, as SpatiaLite's `AsBinary`, whatever the server).
extension PostgresStore: ParkStore {
    /// Writes parks and their zones and rides, replacing earlier imports of the same parks, in one
    /// transaction: all of them or none.
    ///
    /// Zones are replaced. Rides are upserted and those missing from the new file are unlisted,
    /// never deleted, because ride logs refer to them. One import at a time
    /// (``PostgresLock/parkImport``): two nodes importing the same park at once would otherwise
    /// interleave its zones. Three statements a park: the park, its rides, its zones; then its
    /// part of the catalogue (``catalogPark(_:_:)``), a few more.
    public func replaceParks(_ definitions: [ParkDefinition]) async throws -> [ParkReplacement] {
        let importedAt = self.now().timeIntervalSince1970
        // Rides and parks are what boards read; told even when COMMIT failed, which may have committed.
        defer { self.waitBoards.invalidateAll() }
        return try await self.transaction { tx in
            try await tx.lock(.parkImport)
            var replacements: [ParkReplacement] = []
            for definition in definitions {
                replacements.append(try await Self.replacePark(definition, importedAt: importedAt, tx))
            }
            return replacements
        }
    }

    private static func replacePark(_ definition: ParkDefinition, importedAt: Double, _ tx: PostgresTransaction) async throws -> ParkReplacement {
        let park = definition.park
        // Every part of one statement sees the database as it was before the statement: `before`
        // reads whether the park existed, `unlisted` returns the rides listed until now.
        let row = try await tx.one("""
            WITH before AS (SELECT EXISTS (SELECT 1 FROM parks WHERE id = \(park.id.rawValue)) AS existed),
            upsert AS (
                INSERT INTO parks (id, name, time_zone, attribution, imported_at, boundary)
                VALUES (\(park.id.rawValue), \(park.name), \(park.timeZone), \(park.attribution), \(importedAt),
                        ST_GeomFromWKB(\(Data(WKB.encode(park.boundary))), 4326))
                ON CONFLICT (id) DO UPDATE SET
                    name = excluded.name, time_zone = excluded.time_zone, attribution = excluded.attribution,
                    imported_at = excluded.imported_at, boundary = excluded.boundary
            ),
            zones_gone AS (DELETE FROM zones WHERE park_id = \(park.id.rawValue)),
            unlisted AS (UPDATE rides SET listed = false WHERE park_id = \(park.id.rawValue) AND listed RETURNING id)
            SELECT (SELECT existed FROM before), ARRAY(SELECT id FROM unlisted)
            """)
        let (existed, listedBefore) = try row.decode((Bool, [String]).self)

        let rides = definition.rides
        if !rides.isEmpty {
            // A ride already stored under another park keeps its park, as on SQLite.
            try await tx.run("""
                INSERT INTO rides (id, park_id, name, type, status, land, min_height_cm, max_height_cm, height_m, speed_kmh,
                                   length_m, inversions, manufacturer, model, opened, material, stats_source, cycle_s, listed, position,
                                   alone_height_cm, note)
                SELECT r.id, \(park.id.rawValue), r.name, r.type, r.status, r.land, r.min_height_cm, r.max_height_cm, r.height_m,
                       r.speed_kmh, r.length_m, r.inversions, r.manufacturer, r.model, r.opened, r.material, r.stats_source, r.cycle_s,
                       true, r.n - 1, r.alone_height_cm, r.note
                FROM unnest(\(rides.map(\.id.rawValue))::text[], \(rides.map(\.name))::text[], \(rides.map(\.type.rawValue))::text[],
                            \(rides.map(\.status.rawValue))::text[], \(NullableArray(rides.map(\.land)))::text[],
                            \(NullableArray(rides.map(\.minHeightCm)))::int[], \(NullableArray(rides.map(\.maxHeightCm)))::int[],
                            \(NullableArray(rides.map(\.stats.heightM)))::float8[], \(NullableArray(rides.map(\.stats.speedKmh)))::float8[],
                            \(NullableArray(rides.map(\.stats.lengthM)))::float8[], \(NullableArray(rides.map(\.stats.inversions)))::int[],
                            \(NullableArray(rides.map(\.stats.manufacturer)))::text[], \(NullableArray(rides.map(\.stats.model)))::text[],
                            \(NullableArray(rides.map(\.stats.opened)))::int[], \(NullableArray(rides.map(\.stats.material)))::text[],
                            \(NullableArray(rides.map(\.stats.source)))::text[], \(NullableArray(rides.map(\.cycleSeconds)))::int[],
                            \(NullableArray(rides.map(\.aloneHeightCm)))::int[], \(NullableArray(rides.map(\.note)))::text[])
                     WITH ORDINALITY AS r(id, name, type, status, land, min_height_cm, max_height_cm, height_m, speed_kmh, length_m,
                                          inversions, manufacturer, model, opened, material, stats_source, cycle_s, alone_height_cm,
                                          note, n)
                ON CONFLICT (id) DO UPDATE SET
                    name = excluded.name, type = excluded.type, status = excluded.status, land = excluded.land,
                    min_height_cm = excluded.min_height_cm, max_height_cm = excluded.max_height_cm,
                    alone_height_cm = excluded.alone_height_cm, note = excluded.note,
                    height_m = excluded.height_m, speed_kmh = excluded.speed_kmh, length_m = excluded.length_m,
                    inversions = excluded.inversions, manufacturer = excluded.manufacturer, model = excluded.model,
                    opened = excluded.opened, material = excluded.material, stats_source = excluded.stats_source,
                    cycle_s = excluded.cycle_s, listed = true, position = excluded.position
                """)
        }

        let zones = definition.zones
        if !zones.isEmpty {
            try await tx.run("""
                INSERT INTO zones (id, park_id, kind, name, ride_id, position, category, area, lat, lon, land)
                SELECT z.id, \(park.id.rawValue), z.kind, z.name, z.ride_id, z.n - 1, z.category, ST_GeomFromWKB(z.area, 4326),
                       z.lat, z.lon, z.land
                FROM unnest(\(zones.map(\.id.rawValue))::text[], \(zones.map(\.kind.rawValue))::text[], \(zones.map(\.name))::text[],
                            \(NullableArray(zones.map(\.ride?.rawValue)))::text[], \(NullableArray(zones.map(\.category)))::text[],
                            \(zones.map { ByteBuffer(bytes: WKB.encode($0.area)) })::bytea[],
                            \(NullableArray(zones.map(\.position?.lat)))::float8[], \(NullableArray(zones.map(\.position?.lon)))::float8[],
                            \(NullableArray(zones.map(\.land)))::text[])
                     WITH ORDINALITY AS z(id, kind, name, ride_id, category, area, lat, lon, land, n)
                """)
        }

        try await Self.catalogPark(definition, tx)

        let listedNow = Set(rides.map(\.id.rawValue))
        return ParkReplacement(
            park: park.id, replaced: existed, zones: zones.count, rides: rides.count,
            unlistedRides: Set(listedBefore).subtracting(listedNow).count)
    }

    /// Every park, by name.
    public func parkSummaries() async throws -> [ParkSummary] {
        try await self.single { tx in
            try await tx.rows("""
                SELECT p.id, p.name, p.time_zone, p.attribution, p.imported_at,
                       ST_XMin(p.boundary), ST_YMin(p.boundary), ST_XMax(p.boundary), ST_YMax(p.boundary),
                       (SELECT count(*) FROM rides r WHERE r.park_id = p.id AND r.listed),
                       (SELECT count(*) FROM zones z WHERE z.park_id = p.id)
                FROM parks p ORDER BY p.name, p.id
                """).map { row in
                let (id, name, timeZone, attribution, importedAt, minX, minY, maxX, maxY, rides, zones) =
                    try row.decode((String, String, String, String?, Double, Double, Double, Double, Double, Int, Int).self)
                return ParkSummary(
                    id: ParkID(rawValue: id), name: name, timeZone: timeZone, attribution: attribution,
                    bounds: BoundingBox(minLon: minX, minLat: minY, maxLon: maxX, maxLat: maxY),
                    rideCount: rides, zoneCount: zones, importedAt: Date(timeIntervalSince1970: importedAt))
            }
        }
    }

    /// Every park's last load: one short read that says whether a copy of the park list is still
    /// what the store holds (the list itself reads every park's geometry).
    public func parkLoads() async throws -> Set<ParkLoad> {
        try await self.single { tx in
            Set(try await tx.rows("SELECT id, imported_at FROM parks").map { row in
                let (id, loadedAt) = try row.decode((String, Double).self)
                return ParkLoad(park: ParkID(rawValue: id), loadedAt: Date(timeIntervalSince1970: loadedAt))
            })
        }
    }

    /// One park with its zones and listed rides, or `nil` if there is no such park.
    public func park(_ id: ParkID) async throws -> ParkDefinition? {
        try await self.read { tx in try await Self.definitions(park: id, tx).first }
    }

    /// When the park was last loaded (each load of it sets this anew), or `nil` if there is no
    /// such park: what a copy of the park made since then can be checked against.
    public func parkLoadedAt(_ id: ParkID) async throws -> Date? {
        try await self.single { tx in try await Self.loadedAt(id, tx) }
    }

    /// Every park with its zones and listed rides: what the fence index is built from.
    public func allParks() async throws -> [ParkDefinition] {
        try await self.read { tx in try await Self.definitions(park: nil, tx) }
    }

    /// The listed rides of a park in file order, with the park's last load (a copy of them stands
    /// while it is the same), or `nil` if there is no such park.
    public func rides(in park: ParkID) async throws -> (rides: [Ride], loadedAt: Date)? {
        let found = try await self.read { tx -> RidesOfPark? in
            guard let loadedAt = try await Self.loadedAt(park, tx) else { return nil }
            let rides = try await tx.rows("""
                SELECT \(unescaped: Self.rideColumns("r")) FROM rides r WHERE r.park_id = \(park.rawValue) AND r.listed ORDER BY r.position
                """).map(Self.ride)
            return RidesOfPark(rides: rides, loadedAt: loadedAt)
        }
        return found.map { ($0.rides, $0.loadedAt) }
    }

    /// When `park` was last loaded, or `nil` if there is no such park.
    static func loadedAt(_ park: ParkID, _ tx: PostgresTransaction) async throws -> Date? {
        try await tx.first("SELECT imported_at FROM parks WHERE id = \(park.rawValue)")
            .map { Date(timeIntervalSince1970: try $0.decode(Double.self)) }
    }

    /// The parks whose boundary covers `position`, asked of PostGIS itself (`ST_Covers` uses the
    /// GiST index on the boundaries for its candidates, then decides). The service answers from
    /// the in-memory index; this is the cross-check.
    public func parkIDs(covering position: Coordinate) async throws -> [ParkID] {
        try await self.single { tx in
            try await tx.rows("""
                SELECT id FROM parks WHERE ST_Covers(boundary, ST_Point(\(position.lon), \(position.lat), 4326)) ORDER BY id
                """).map { ParkID(rawValue: try $0.decode(String.self)) }
        }
    }

    /// Parks with their zones and listed rides: one park, or (`park` nil) all of them by name.
    private static func definitions(park: ParkID?, _ tx: PostgresTransaction) async throws -> [ParkDefinition] {
        let filter = park?.rawValue
        let parks = try await tx.rows("""
            SELECT id, name, time_zone, attribution, ST_AsBinary(boundary, 'NDR') FROM parks
            WHERE \(filter)::text IS NULL OR id = \(filter) ORDER BY name, id
            """)
        var zones: [String: [Zone]] = [:]
        for row in try await tx.rows("""
            SELECT id, park_id, kind, name, ride_id, category, ST_AsBinary(area, 'NDR'), lat, lon, land FROM zones
            WHERE \(filter)::text IS NULL OR park_id = \(filter) ORDER BY park_id, position
            """) {
            let (id, parkID, kind, name, ride, category, area, lat, lon, land) =
                try row.decode((String, String, String, String, String?, String?, Data?, Double?, Double?, String?).self)
            zones[parkID, default: []].append(Zone(
                id: ZoneID(rawValue: id), park: ParkID(rawValue: parkID), kind: ZoneKind(rawValue: kind) ?? .poi, name: name,
                ride: ride.map(RideID.init(rawValue:)), category: category, area: try storedArea(area, table: "zones", id: id),
                position: lat.flatMap { lat in lon.map { Coordinate(lat: lat, lon: $0) } }, land: land))
        }
        var rides: [ParkID: [Ride]] = [:]
        for row in try await tx.rows("""
            SELECT \(unescaped: Self.rideColumns("r")) FROM rides r
            WHERE (\(filter)::text IS NULL OR r.park_id = \(filter)) AND r.listed ORDER BY r.park_id, r.position
            """) {
            let ride = try Self.ride(row)
            rides[ride.park, default: []].append(ride)
        }
        return try parks.map { row in
            let (id, name, timeZone, attribution, boundary) = try row.decode((String, String, String, String?, Data?).self)
            let park = Park(id: ParkID(rawValue: id), name: name, timeZone: timeZone, attribution: attribution,
                            boundary: try storedArea(boundary, table: "parks", id: id))
            return ParkDefinition(park: park, zones: zones[id] ?? [], rides: rides[park.id] ?? [])
        }
    }

    // MARK: Rides as rows

    /// The columns of a `rides` row that ``ride(_:)`` reads, in its order, of the table named
    /// `alias` in the query: `SELECT \(unescaped: Self.rideColumns("r")), … FROM rides r`.
    static func rideColumns(_ alias: String) -> String {
        ["id", "park_id", "name", "type", "status", "land", "min_height_cm", "alone_height_cm", "max_height_cm", "cycle_s", "note",
         "height_m", "speed_kmh", "length_m", "inversions", "manufacturer", "model", "opened", "material", "stats_source"]
            .map { "\(alias).\($0)" }.joined(separator: ", ")
    }

    /// How many columns ``rideColumns(_:)`` names: a query's own columns follow them.
    static let rideColumnCount = 20

    /// A ride from the first ``rideColumnCount`` columns of `row` (``rideColumns(_:)``). An unknown
    /// type or status reads as `other` or `operating`, as on SQLite.
    static func ride(_ row: PostgresRow) throws -> Ride {
        let (id, park, name, type, status, land, minHeight, aloneHeight, maxHeight, cycle, note,
             height, speed, length, inversions, manufacturer, model, opened, material, source) = try row.decode((
                String, String, String, String, String, String?, Int?, Int?, Int?, Int?, String?,
                Double?, Double?, Double?, Int?, String?, String?, Int?, String?, String?).self)
        return Ride(
            id: RideID(rawValue: id), park: ParkID(rawValue: park), name: name, type: RideType(rawValue: type) ?? .other,
            status: RideStatus(rawValue: status) ?? .operating, land: land, minHeightCm: minHeight, aloneHeightCm: aloneHeight,
            maxHeightCm: maxHeight, cycleSeconds: cycle, note: note,
            stats: RideStats(heightM: height, speedKmh: speed, lengthM: length, inversions: inversions, manufacturer: manufacturer,
                             model: model, opened: opened, material: material, source: source))
    }
}

/// A park's listed rides and its last load, as one Sendable value out of a read.
private struct RidesOfPark: Sendable {
    var rides: [Ride]
    var loadedAt: Date
}
