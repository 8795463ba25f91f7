import CoasterCore
import Foundation
import GRDB

extension SpatiaLiteStore {
    /// Writes parks and their zones and rides, replacing earlier imports of the same parks, in one
    /// transaction: all of them or none.
    ///
    /// Zones are replaced. Rides are upserted and those missing from the new file are unlisted,
    /// never deleted, because ride logs refer to them. The park and its rides take their
    /// catalogue entries in the same transaction (``catalogParkLoaded(_:_:)``).
    public func replaceParks(_ definitions: [ParkDefinition]) async throws -> [ParkReplacement] {
        let importedAt = self.now().timeIntervalSince1970
        return try await self.pool.write { db in
            try definitions.map { try Self.replacePark($0, importedAt: importedAt, db) }
        }
    }

    private static func replacePark(_ definition: ParkDefinition, importedAt: Double, _ db: Database) throws -> ParkReplacement {
        let park = definition.park
        let existed = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM parks WHERE id = ?)", arguments: [park.id.rawValue]) ?? false
        try db.execute(
            sql: """
                INSERT INTO parks (id, name, time_zone, attribution, imported_at, boundary)
                VALUES (?, ?, ?, ?, ?, GeomFromWKB(?, 4326))
                ON CONFLICT (id) DO UPDATE SET
                    name = excluded.name, time_zone = excluded.time_zone, attribution = excluded.attribution,
                    imported_at = excluded.imported_at, boundary = excluded.boundary
                """,
            arguments: [park.id.rawValue, park.name, park.timeZone, park.attribution, importedAt,
                        Data(WKB.encode(park.boundary))])
        try db.execute(sql: "DELETE FROM zones WHERE park_id = ?", arguments: [park.id.rawValue])
        let listedBefore = try Set(String.fetchAll(db, sql: "SELECT id FROM rides WHERE park_id = ? AND listed = 1", arguments: [park.id.rawValue]))
        try db.execute(sql: "UPDATE rides SET listed = 0 WHERE park_id = ?", arguments: [park.id.rawValue])
        let upsertRide = try db.cachedStatement(sql: """
            INSERT INTO rides (id, park_id, name, type, status, land, min_height_cm, max_height_cm, height_m, speed_kmh,
                               length_m, inversions, manufacturer, model, opened, material, stats_source, cycle_s, listed, position,
                               alone_height_cm, note)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?)
            ON CONFLICT (id) DO UPDATE SET
                name = excluded.name, type = excluded.type, status = excluded.status, land = excluded.land,
                min_height_cm = excluded.min_height_cm, max_height_cm = excluded.max_height_cm,
                alone_height_cm = excluded.alone_height_cm, note = excluded.note,
                height_m = excluded.height_m, speed_kmh = excluded.speed_kmh, length_m = excluded.length_m,
                inversions = excluded.inversions, manufacturer = excluded.manufacturer, model = excluded.model,
                opened = excluded.opened, material = excluded.material, stats_source = excluded.stats_source,
                cycle_s = excluded.cycle_s, listed = 1, position = excluded.position
            """)
        for (position, ride) in definition.rides.enumerated() {
            let s = ride.stats
            try upsertRide.execute(arguments: [
                ride.id.rawValue, park.id.rawValue, ride.name, ride.type.rawValue, ride.status.rawValue, ride.land,
                ride.minHeightCm, ride.maxHeightCm, s.heightM, s.speedKmh, s.lengthM, s.inversions, s.manufacturer,
                s.model, s.opened, s.material, s.source, ride.cycleSeconds, position, ride.aloneHeightCm, ride.note,
            ])
        }
        let insertZone = try db.cachedStatement(sql: """
            INSERT INTO zones (id, park_id, kind, name, ride_id, position, category, area, lat, lon, land)
            VALUES (?, ?, ?, ?, ?, ?, ?, GeomFromWKB(?, 4326), ?, ?, ?)
            """)
        for (position, zone) in definition.zones.enumerated() {
            try insertZone.execute(arguments: [
                zone.id.rawValue, park.id.rawValue, zone.kind.rawValue, zone.name, zone.ride?.rawValue, position, zone.category,
                Data(WKB.encode(zone.area)), zone.position?.lat, zone.position?.lon, zone.land,
            ])
        }
        try Self.catalogParkLoaded(definition, db)
        let listedNow = Set(definition.rides.map(\.id.rawValue))
        return ParkReplacement(
            park: park.id, replaced: existed, zones: definition.zones.count, rides: definition.rides.count,
            unlistedRides: listedBefore.subtracting(listedNow).count)
    }

    /// Every park, by name.
    public func parkSummaries() async throws -> [ParkSummary] {
        try await self.pool.read { db in
            try ParkSummaryRecord.fetchAll(db, sql: """
                SELECT p.id, p.name, p.time_zone, p.attribution, p.imported_at,
                       MbrMinX(p.boundary) AS min_x, MbrMinY(p.boundary) AS min_y,
                       MbrMaxX(p.boundary) AS max_x, MbrMaxY(p.boundary) AS max_y,
                       (SELECT count(*) FROM rides r WHERE r.park_id = p.id AND r.listed = 1) AS ride_count,
                       (SELECT count(*) FROM zones z WHERE z.park_id = p.id) AS zone_count
                FROM parks p ORDER BY p.name, p.id
                """).map(\.summary)
        }
    }

    /// Every park's last load: one short read that says whether a copy of the park list is still
    /// what the store holds (the list itself reads every park's geometry).
    public func parkLoads() async throws -> Set<ParkLoad> {
        try await self.pool.read { db in
            Set(try Row.fetchAll(db.cachedStatement(sql: "SELECT id, imported_at FROM parks")).map {
                ParkLoad(park: ParkID(rawValue: $0[0]), loadedAt: Date(timeIntervalSince1970: $0[1]))
            })
        }
    }

    /// One park with its zones and listed rides, or `nil` if there is no such park.
    public func park(_ id: ParkID) async throws -> ParkDefinition? {
        try await self.pool.read { db in try Self.definitions(db, park: id).first }
    }

    /// When the park was last loaded (each load of it sets this anew), or `nil` if there is no
    /// such park: what a copy of the park made since then can be checked against.
    public func parkLoadedAt(_ id: ParkID) async throws -> Date? {
        try await self.pool.read { db in try Self.loadedAt(id, db) }
    }

    /// Every park with its zones and listed rides: what the fence index is built from.
    public func allParks() async throws -> [ParkDefinition] {
        try await self.pool.read { db in try Self.definitions(db, park: nil) }
    }

    /// The listed rides of a park in file order, with the park's last load (a copy of them stands
    /// while it is the same), or `nil` if there is no such park.
    public func rides(in park: ParkID) async throws -> (rides: [Ride], loadedAt: Date)? {
        try await self.pool.read { db in
            guard let loadedAt = try Self.loadedAt(park, db) else { return nil }
            let rides = try RideRecord.fetchAll(
                db.cachedStatement(sql: "SELECT * FROM rides WHERE park_id = ? AND listed = 1 ORDER BY position"), arguments: [park.rawValue]
            ).map(\.ride)
            return (rides, loadedAt)
        }
    }

    /// When `park` was last loaded, or `nil` if there is no such park.
    static func loadedAt(_ park: ParkID, _ db: Database) throws -> Date? {
        try Double.fetchOne(db.cachedStatement(sql: "SELECT imported_at FROM parks WHERE id = ?"), arguments: [park.rawValue])
            .map(Date.init(timeIntervalSince1970:))
    }

    /// The parks whose boundary covers `position`, asked of SpatiaLite itself (R*Tree candidates,
    /// `ST_Covers` decides). The service answers from the in-memory index; this is the cross-check.
    public func parkIDs(covering position: Coordinate) async throws -> [ParkID] {
        try await self.pool.read { db in
            try String.fetchAll(db, sql: """
                SELECT p.id FROM idx_parks_boundary r JOIN parks p ON p.rowid = r.pkid
                WHERE r.xmin <= :lon AND r.xmax >= :lon AND r.ymin <= :lat AND r.ymax >= :lat
                  AND ST_Covers(p.boundary, MakePoint(:lon, :lat, 4326)) = 1
                ORDER BY p.id
                """, arguments: ["lon": position.lon, "lat": position.lat]).map(ParkID.init(rawValue:))
        }
    }

    private static func definitions(_ db: Database, park: ParkID?) throws -> [ParkDefinition] {
        let filter = park == nil ? "" : "WHERE park_id = :park"
        let arguments: StatementArguments = park.map { ["park": $0.rawValue] } ?? [:]
        let parks = try ParkRecord.fetchAll(db, sql: """
            SELECT id, name, time_zone, attribution, AsBinary(boundary) AS boundary FROM parks
            \(park == nil ? "" : "WHERE id = :park") ORDER BY name, id
            """, arguments: arguments)
        var zones: [String: [Zone]] = [:]
        for record in try ZoneRecord.fetchAll(db, sql: """
            SELECT id, park_id, kind, name, ride_id, category, AsBinary(area) AS area, lat, lon, land FROM zones \(filter)
            ORDER BY park_id, position
            """, arguments: arguments) {
            zones[record.parkID, default: []].append(try record.zone())
        }
        var rides: [String: [Ride]] = [:]
        for record in try RideRecord.fetchAll(db, sql: """
            SELECT * FROM rides \(filter.isEmpty ? "WHERE" : filter + " AND") listed = 1 ORDER BY park_id, position
            """, arguments: arguments) {
            rides[record.parkID, default: []].append(record.ride)
        }
        return try parks.map { record in
            ParkDefinition(park: try record.park(), zones: zones[record.id] ?? [], rides: rides[record.id] ?? [])
        }
    }
}

// MARK: Records (internal: rows in, CoasterCore values out)

private struct ParkSummaryRecord: FetchableRecord {
    var summary: ParkSummary
    init(row: Row) {
        self.summary = ParkSummary(
            id: ParkID(rawValue: row["id"]), name: row["name"], timeZone: row["time_zone"], attribution: row["attribution"],
            bounds: BoundingBox(minLon: row["min_x"], minLat: row["min_y"], maxLon: row["max_x"], maxLat: row["max_y"]),
            rideCount: row["ride_count"], zoneCount: row["zone_count"],
            importedAt: Date(timeIntervalSince1970: row["imported_at"]))
    }
}

private struct ParkRecord: FetchableRecord {
    var id: String
    var name: String
    var timeZone: String
    var attribution: String?
    var boundary: Data?
    init(row: Row) {
        self.id = row["id"]
        self.name = row["name"]
        self.timeZone = row["time_zone"]
        self.attribution = row["attribution"]
        self.boundary = row["boundary"]
    }
    func park() throws -> Park {
        Park(id: ParkID(rawValue: self.id), name: self.name, timeZone: self.timeZone, attribution: self.attribution,
             boundary: try storedArea(self.boundary, table: "parks", id: self.id))
    }
}

private struct ZoneRecord: FetchableRecord {
    var id: String
    var parkID: String
    var kind: String
    var name: String
    var rideID: String?
    var category: String?
    var area: Data?
    var position: Coordinate?
    var land: String?
    init(row: Row) {
        self.id = row["id"]
        self.parkID = row["park_id"]
        self.kind = row["kind"]
        self.name = row["name"]
        self.rideID = row["ride_id"]
        self.category = row["category"]
        self.area = row["area"]
        let lat: Double? = row["lat"], lon: Double? = row["lon"]
        self.position = lat.flatMap { lat in lon.map { Coordinate(lat: lat, lon: $0) } }
        self.land = row["land"]
    }
    func zone() throws -> Zone {
        Zone(id: ZoneID(rawValue: self.id), park: ParkID(rawValue: self.parkID), kind: ZoneKind(rawValue: self.kind) ?? .poi,
             name: self.name, ride: self.rideID.map(RideID.init(rawValue:)), category: self.category,
             area: try storedArea(self.area, table: "zones", id: self.id), position: self.position, land: self.land)
    }
}

struct RideRecord: FetchableRecord {
    var parkID: String
    var ride: Ride
    init(row: Row) {
        self.parkID = row["park_id"]
        self.ride = Ride(
            id: RideID(rawValue: row["id"]), park: ParkID(rawValue: row["park_id"]), name: row["name"],
            type: RideType(rawValue: row["type"]) ?? .other, status: RideStatus(rawValue: row["status"]) ?? .operating,
            land: row["land"], minHeightCm: row["min_height_cm"], aloneHeightCm: row["alone_height_cm"],
            maxHeightCm: row["max_height_cm"], cycleSeconds: row["cycle_s"], note: row["note"],
            stats: RideStats(
                heightM: row["height_m"], speedKmh: row["speed_kmh"], lengthM: row["length_m"], inversions: row["inversions"],
                manufacturer: row["manufacturer"], model: row["model"], opened: row["opened"], material: row["material"],
                source: row["stats_source"]))
    }
}
