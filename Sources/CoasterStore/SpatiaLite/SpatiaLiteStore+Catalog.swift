import CoasterCore
import Foundation
import GRDB

extension SpatiaLiteStore: CatalogStore {
    public func importCatalog(_ file: CatalogImport) async throws -> CatalogImportSummary {
        try await self.pool.write { db in
            var summary = CatalogImportSummary(added: 0, updated: 0, matchedFenced: 0, parks: 0)
            // The catalogue park each park of the file is: its own, or a fenced park of the same name.
            var parks: [ParkID: CatalogPark] = [:]
            var renamed = Set<ParkID>()
            for (id, name) in file.parks {
                let key = CatalogText.matchKey(name)
                if let park = try Self.catalogParkRow(id, db) {
                    if !park.fenced, park.name != name {
                        try Self.writeCatalogPark(CatalogPark(id: id, name: name, fenced: false), db)
                        renamed.insert(id)
                        summary.parks += 1
                    }
                    parks[id] = park.fenced ? park : CatalogPark(id: id, name: name, fenced: false)
                } else if let fenced = try Self.onlyCatalogPark(key: key, fenced: true, db) {
                    parks[id] = fenced
                } else {
                    let park = CatalogPark(id: id, name: name, fenced: false)
                    try Self.writeCatalogPark(park, db)
                    parks[id] = park
                    summary.parks += 1
                }
            }
            for entry in file.rides {
                guard let park = parks[entry.park] else { continue }   // CatalogImport.check refuses such a file
                let key = CatalogText.matchKey(entry.name)
                let old = try CatalogEntry.fetchOne(db.cachedStatement(sql: "SELECT * FROM catalog_rides WHERE id = ?"), arguments: [entry.id.rawValue])
                var fenced = old?.rideID == nil ? nil : old
                if park.fenced, let same = try CatalogEntry.fetchOne(db.cachedStatement(sql: """
                    SELECT * FROM catalog_rides WHERE park_id = ? AND name_key = ? AND ride_id IS NOT NULL ORDER BY rowid LIMIT 1
                    """), arguments: [park.id.rawValue, key]) {
                    fenced = same
                }
                if let fenced {
                    // The park file's ride: its figures stand, the catalogue fills those it lacks.
                    try Self.writeCatalogEntry(fenced.filled(from: entry), replacing: fenced, parkName: park.name, db)
                    summary.matchedFenced += 1
                    continue
                }
                let new = CatalogEntry(id: entry.id, park: park.id, rideID: nil, name: entry.name, type: entry.type, status: entry.status,
                                       land: nil, stats: entry.stats, position: entry.position)
                if let old {
                    var kept = new
                    kept.land = old.land
                    if try Self.writeCatalogEntry(kept, replacing: old, parkName: park.name, db) { summary.updated += 1 }
                } else {
                    try Self.writeCatalogEntry(new, replacing: nil, parkName: park.name, db)
                    summary.added += 1
                }
            }
            // A park renamed by this file changes its rides' details (their park's name).
            for id in renamed { try Self.refreshDetails(of: id, db) }
            return summary
        }
    }

    public func searchCatalog(_ query: CatalogQuery) async throws -> CatalogResults {
        let terms = query.text.map(CatalogText.terms) ?? []
        let limit = min(max(query.limit, 0), CatalogLimits.largestPage)
        let offset = min(max(query.offset, 0), CatalogLimits.deepestOffset)
        var filters: [String] = []
        var arguments: [String: (any DatabaseValueConvertible)?] = ["limit": limit, "offset": offset]
        if let park = query.park {
            filters.append("r.park_id = :park")
            arguments["park"] = park.rawValue
        }
        if let type = query.type {
            filters.append("r.type = :type")
            arguments["type"] = type.rawValue
        }
        if let manufacturer = query.manufacturer {
            let prefixes = CatalogSearch.manufacturerPrefixes(manufacturer)
            if prefixes.isEmpty {
                filters.append("0")
            } else {
                filters.append("(" + prefixes.indices.map { "substr(r.manufacturer_key || ' ', 1, length(:m\($0))) = :m\($0)" }
                    .joined(separator: " OR ") + ")")
                for (i, prefix) in prefixes.enumerated() { arguments["m\(i)"] = prefix }
            }
        }
        for (value, condition, name) in [(query.minHeightM, "r.height_m >= :minHeight", "minHeight"),
                                         (query.minSpeedKmh, "r.speed_kmh >= :minSpeed", "minSpeed")] {
            if let value {
                filters.append(condition)
                arguments[name] = value
            }
        }
        for (value, condition, name) in [(query.minInversions, "r.inversions >= :minInversions", "minInversions"),
                                         (query.openedFrom, "r.opened >= :openedFrom", "openedFrom"),
                                         (query.openedTo, "r.opened <= :openedTo", "openedTo")] {
            if let value {
                filters.append(condition)
                arguments[name] = value
            }
        }
        let filtered = filters.map { " AND " + $0 }.joined()
        let byName = "r.name_key, r.id"
        let order = switch query.sort {
        case .relevance: terms.isEmpty ? byName : "bm25(catalog_fts, 10.0, 1.0), " + byName
        case .name: byName
        case .height: "r.height_m DESC NULLS LAST, " + byName
        case .speed: "r.speed_kmh DESC NULLS LAST, " + byName
        }
        if terms.isEmpty {
            let sql = """
                SELECT r.*, p.name AS park_name, p.fenced AS park_fenced FROM catalog_rides r JOIN catalog_parks p ON p.id = r.park_id
                WHERE 1\(filtered) ORDER BY \(order) LIMIT :limit OFFSET :offset
                """
            let statementArguments = StatementArguments(arguments)
            return try await self.pool.read { db in
                let rides = try Row.fetchAll(db.cachedStatement(sql: sql), arguments: statementArguments).map { Self.catalogRide(from: $0) }
                return CatalogResults(rides: rides, parks: [], approximate: false)
            }
        }
        // Every word a quoted FTS5 string matched as a prefix: never syntax, whatever was typed.
        let match = terms.map { "\"\($0)\"*" }.joined(separator: " ")
        arguments["match"] = match
        // The page's rows first, then their entries: a common word matches most of the catalogue,
        // and every match is ranked, but only a page is read whole.
        let words = """
            SELECT r.rowid FROM catalog_fts JOIN catalog_rides r ON r.rowid = catalog_fts.rowid
            WHERE catalog_fts MATCH :match\(filtered) ORDER BY \(order) LIMIT :limit OFFSET :offset
            """
        let anyWords = """
            SELECT EXISTS (SELECT 1 FROM catalog_fts JOIN catalog_rides r ON r.rowid = catalog_fts.rowid WHERE catalog_fts MATCH :match\(filtered))
            """
        let grams = CatalogSearch.candidateTrigrams(terms)
        arguments["grams"] = grams.map { "\"\($0)\"" }.joined(separator: " OR ")
        arguments["candidates"] = CatalogSearch.typoCandidates
        let alike = """
            SELECT r.rowid, r.name_doc, r.name_key, r.id FROM catalog_trigrams JOIN catalog_rides r ON r.rowid = catalog_trigrams.rowid
            WHERE catalog_trigrams MATCH :grams\(filtered) ORDER BY bm25(catalog_trigrams) LIMIT :candidates
            """
        let withParks = !CatalogSearch.hasRideFilter(query)
        let statementArguments = StatementArguments(arguments)
        return try await self.pool.read { db in
            var page = try Int64.fetchAll(db.cachedStatement(sql: words), arguments: statementArguments)
            var approximate = false
            // An empty page past the last match is not a miss.
            let noWordMatch = { () throws -> Bool in
                if offset == 0 { return true }
                return try Bool.fetchOne(db.cachedStatement(sql: anyWords), arguments: statementArguments) != true
            }
            if page.isEmpty, !grams.isEmpty, try noWordMatch() {
                let candidates = try Row.fetchAll(db.cachedStatement(sql: alike), arguments: statementArguments).map {
                    CatalogSearch.Candidate<Int64>(key: $0[0], nameDocument: $0[1], nameKey: $0[2], id: $0[3])
                }
                (page, approximate) = CatalogSearch.approximate(candidates, terms: terms, limit: limit, offset: offset)
            }
            let rides = try Self.catalogRides(rowids: page, db)
            let parks = try withParks
                ? Row.fetchAll(db.cachedStatement(sql: Self.parksMatching), arguments: ["match": match]).map { Self.catalogPark(from: $0) } : []
            return CatalogResults(rides: rides, parks: parks, approximate: approximate)
        }
    }

    /// The entries of these rowids, in their order.
    private static func catalogRides(rowids: [Int64], _ db: Database) throws -> [CatalogRide] {
        guard !rowids.isEmpty else { return [] }
        var byRowid: [Int64: CatalogRide] = [:]
        for row in try Row.fetchAll(db.cachedStatement(sql: Self.catalogRidesByRowid), arguments: ["[" + rowids.map(String.init).joined(separator: ",") + "]"]) {
            byRowid[row["rowid"]] = Self.catalogRide(from: row)
        }
        return rowids.compactMap { byRowid[$0] }
    }

    /// Entries by a JSON array of rowids (a page of a search).
    static let catalogRidesByRowid = """
        SELECT r.rowid, r.*, p.name AS park_name, p.fenced AS park_fenced FROM catalog_rides r JOIN catalog_parks p ON p.id = r.park_id
        WHERE r.rowid IN (SELECT value FROM json_each(?))
        """

    /// Parks whose name holds every word as a prefix, by name: at most ten.
    static let parksMatching = """
        SELECT p.id, p.name, p.fenced FROM catalog_parks_fts JOIN catalog_parks p ON p.rowid = catalog_parks_fts.rowid
        WHERE catalog_parks_fts MATCH :match ORDER BY p.name_key, p.id LIMIT 10
        """

    public func catalogRide(_ id: RideID) async throws -> CatalogRide? {
        try await self.pool.read { db in try Self.catalogRide(id, db) }
    }

    public func catalogPark(_ id: ParkID) async throws -> CatalogPark? {
        try await self.pool.read { db in try Self.catalogParkRow(id, db) }
    }

    public func catalogCounts() async throws -> (rides: Int, parks: Int) {
        try await self.pool.read { db in
            let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT (SELECT count(*) FROM catalog_rides), (SELECT count(*) FROM catalog_parks)"))!
            return (row[0], row[1])
        }
    }
}

// MARK: The park import's hook and shared helpers

extension SpatiaLiteStore {
    /// Gives a loaded park and its rides their catalogue entries, in the park import's
    /// transaction (``CatalogStore``): the park's entry is marked fenced (the one catalogue park
    /// of the same name and another id, if there is exactly one, gives it its rides and its place
    /// in lists, and goes); each ride takes the entry linked to it, else the entry of its own id,
    /// else one of the park's unlinked entries of the same match key, else a new one. Rides the
    /// file no longer lists keep their entries: lists hold them.
    static func catalogParkLoaded(_ definition: ParkDefinition, _ db: Database) throws {
        let park = CatalogPark(id: definition.park.id, name: definition.park.name, fenced: true)
        var renamed = false
        let before = try Self.catalogParkRow(park.id, db)
        if before != park {
            try Self.writeCatalogPark(park, db)
            renamed = before?.name != park.name
        }
        if let other = try Self.onlyCatalogPark(key: CatalogText.matchKey(park.name), fenced: false, db), other.id != park.id {
            try Self.mergeCatalogPark(other.id, into: park.id, db)
            renamed = true
        }
        for ride in definition.rides {
            let key = CatalogText.matchKey(ride.name)
            let linked = try CatalogEntry.fetchOne(db.cachedStatement(sql: "SELECT * FROM catalog_rides WHERE ride_id = ?"), arguments: [ride.id.rawValue])
            let unlinked = { () throws -> CatalogEntry? in
                try CatalogEntry.fetchOne(db.cachedStatement(sql: "SELECT * FROM catalog_rides WHERE id = ? AND ride_id IS NULL"),
                                          arguments: [ride.id.rawValue])
                    ?? CatalogEntry.fetchOne(db.cachedStatement(sql: """
                        SELECT * FROM catalog_rides WHERE park_id = ? AND name_key = ? AND ride_id IS NULL ORDER BY rowid LIMIT 1
                        """), arguments: [park.id.rawValue, key])
            }
            if let old = try linked ?? unlinked() {
                try Self.writeCatalogEntry(old.refreshed(by: ride), replacing: old, parkName: park.name, db)
            } else {
                // The ride's own id, unless an entry linked to another ride took it.
                var id = ride.id
                var n = 2
                while try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM catalog_rides WHERE id = ?)"), arguments: [id.rawValue]) == true {
                    id = RideID(rawValue: "\(ride.id.rawValue)-\(n)")
                    n += 1
                }
                let entry = CatalogEntry(id: id, park: park.id, rideID: ride.id, name: ride.name, type: ride.type, status: ride.status,
                                         land: ride.land, stats: ride.stats, position: nil)
                try Self.writeCatalogEntry(entry, replacing: nil, parkName: park.name, db)
            }
        }
        if renamed { try Self.refreshDetails(of: park.id, db) }
    }

    /// Moves a catalogue park's rides and list items to the fenced park that is the same park, and
    /// removes it. A list holding both keeps the fenced park's item.
    private static func mergeCatalogPark(_ old: ParkID, into new: ParkID, _ db: Database) throws {
        try db.execute(sql: "UPDATE catalog_rides SET park_id = ? WHERE park_id = ?", arguments: [new.rawValue, old.rawValue])
        for row in try Row.fetchAll(db.cachedStatement(sql: """
            SELECT o.id, o.list_id, o.position FROM list_items o JOIN list_items n ON n.list_id = o.list_id AND n.kind = 'park' AND n.target_id = ?
            WHERE o.kind = 'park' AND o.target_id = ?
            """), arguments: [new.rawValue, old.rawValue]) {
            try Self.deleteItem(row["id"], list: row["list_id"], position: row["position"], db)
        }
        try db.execute(sql: "UPDATE list_items SET target_id = ? WHERE kind = 'park' AND target_id = ?", arguments: [new.rawValue, old.rawValue])
        // Posts tagged with both keep one tag of the park.
        try db.execute(sql: "UPDATE OR IGNORE post_tags SET value = ? WHERE kind IN ('park', 'about') AND value = ?", arguments: [new.rawValue, old.rawValue])
        try db.execute(sql: "DELETE FROM post_tags WHERE kind IN ('park', 'about') AND value = ?", arguments: [old.rawValue])
        // Home parks follow the park (`users_by_home_park`).
        try db.execute(sql: "UPDATE users SET home_park = ? WHERE home_park = ?", arguments: [new.rawValue, old.rawValue])
        try db.execute(sql: "DELETE FROM catalog_parks_fts WHERE rowid = (SELECT rowid FROM catalog_parks WHERE id = ?)", arguments: [old.rawValue])
        try db.execute(sql: "DELETE FROM catalog_parks WHERE id = ?", arguments: [old.rawValue])
    }

    /// Rewrites the details of a park's entries that name it differently than it is now named.
    private static func refreshDetails(of park: ParkID, _ db: Database) throws {
        guard let name = try Self.catalogParkRow(park, db)?.name else { return }
        for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM catalog_rides WHERE park_id = ?"), arguments: [park.rawValue]) {
            let entry = CatalogEntry(row: row)
            let detail = entry.detailDocument(parkName: name)
            if detail != row["detail_doc"] as String {
                try db.execute(sql: "UPDATE catalog_rides SET detail_doc = ? WHERE id = ?", arguments: [detail, entry.id.rawValue])
            }
        }
    }

    /// The catalogue's park with this id, or `nil`.
    static func catalogParkRow(_ id: ParkID, _ db: Database) throws -> CatalogPark? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT id, name, fenced FROM catalog_parks WHERE id = ?"), arguments: [id.rawValue])
            .map { Self.catalogPark(from: $0) }
    }

    /// The one park of this match key and fencing, or `nil` when there is none or more than one
    /// (two parks called "Adventureland" are not the same park).
    private static func onlyCatalogPark(key: String, fenced: Bool, _ db: Database) throws -> CatalogPark? {
        let parks = try Row.fetchAll(db.cachedStatement(sql: "SELECT id, name, fenced FROM catalog_parks WHERE name_key = ? AND fenced = ? LIMIT 2"),
                                     arguments: [key, fenced]).map { Self.catalogPark(from: $0) }
        return parks.count == 1 ? parks[0] : nil
    }

    /// Inserts or updates a catalogue park and its name's index entry.
    private static func writeCatalogPark(_ park: CatalogPark, _ db: Database) throws {
        try db.cachedStatement(sql: """
            INSERT INTO catalog_parks (id, name, name_key, fenced) VALUES (?, ?, ?, ?)
            ON CONFLICT (id) DO UPDATE SET name = excluded.name, name_key = excluded.name_key, fenced = excluded.fenced
            """).execute(arguments: [park.id.rawValue, park.name, CatalogText.matchKey(park.name), park.fenced])
        let rowid = try Int64.fetchOne(db.cachedStatement(sql: "SELECT rowid FROM catalog_parks WHERE id = ?"), arguments: [park.id.rawValue])!
        try db.cachedStatement(sql: "DELETE FROM catalog_parks_fts WHERE rowid = ?").execute(arguments: [rowid])
        try db.cachedStatement(sql: "INSERT INTO catalog_parks_fts (rowid, name_doc) VALUES (?, ?)")
            .execute(arguments: [rowid, CatalogText.nameDocument(park.name)])
    }

    /// Writes an entry (with its documents) unless it is what is stored; whether it wrote.
    @discardableResult
    private static func writeCatalogEntry(_ entry: CatalogEntry, replacing old: CatalogEntry?, parkName: String, _ db: Database) throws -> Bool {
        guard entry != old else { return false }
        let s = entry.stats
        let values: [(any DatabaseValueConvertible)?] = [
            entry.park.rawValue, entry.rideID?.rawValue, entry.name, CatalogText.matchKey(entry.name), entry.type.rawValue, entry.status?.rawValue,
            entry.land, s.heightM, s.speedKmh, s.lengthM, s.inversions, s.manufacturer, s.manufacturer.map(CatalogText.fold), s.model, s.opened,
            s.material, s.source, entry.position?.lat, entry.position?.lon, CatalogText.nameDocument(entry.name),
            entry.detailDocument(parkName: parkName), entry.id.rawValue,
        ]
        if old == nil {
            try db.cachedStatement(sql: """
                INSERT INTO catalog_rides (park_id, ride_id, name, name_key, type, status, land, height_m, speed_kmh, length_m, inversions,
                                           manufacturer, manufacturer_key, model, opened, material, stats_source, lat, lon, name_doc, detail_doc, id)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """).execute(arguments: StatementArguments(values))
        } else {
            try db.cachedStatement(sql: """
                UPDATE catalog_rides SET park_id = ?, ride_id = ?, name = ?, name_key = ?, type = ?, status = ?, land = ?, height_m = ?,
                    speed_kmh = ?, length_m = ?, inversions = ?, manufacturer = ?, manufacturer_key = ?, model = ?, opened = ?, material = ?,
                    stats_source = ?, lat = ?, lon = ?, name_doc = ?, detail_doc = ?
                WHERE id = ?
                """).execute(arguments: StatementArguments(values))
        }
        return true
    }

    /// The entry with this id, or whose fenced ride has it.
    static func catalogRide(_ id: RideID, _ db: Database) throws -> CatalogRide? {
        try Row.fetchOne(db.cachedStatement(sql: Self.catalogRideByID), arguments: [id.rawValue]).map { Self.catalogRide(from: $0) }
            ?? Row.fetchOne(db.cachedStatement(sql: Self.catalogRideByFencedRide), arguments: [id.rawValue]).map { Self.catalogRide(from: $0) }
    }

    static let catalogRideByID = """
        SELECT r.*, p.name AS park_name, p.fenced AS park_fenced FROM catalog_rides r JOIN catalog_parks p ON p.id = r.park_id WHERE r.id = ?
        """
    static let catalogRideByFencedRide = """
        SELECT r.*, p.name AS park_name, p.fenced AS park_fenced FROM catalog_rides r JOIN catalog_parks p ON p.id = r.park_id WHERE r.ride_id = ?
        """

    /// The columns of `catalog_rides` under `alias`, each named `prefix` + its own name: for
    /// queries that read an entry beside rows with columns of the same names.
    static func catalogRideColumns(_ alias: String, as prefix: String) -> String {
        ["id", "park_id", "ride_id", "name", "type", "status", "land", "height_m", "speed_kmh", "length_m", "inversions", "manufacturer", "model",
         "opened", "material", "stats_source", "lat", "lon", "lists"].map { "\(alias).\($0) AS \(prefix)\($0)" }.joined(separator: ", ")
    }

    /// An entry from a row of `catalog_rides` columns (each `prefix` + its name) with its park's
    /// `park_name` and `park_fenced`.
    static func catalogRide(from row: Row, prefix: String = "") -> CatalogRide {
        let lat: Double? = row[prefix + "lat"], lon: Double? = row[prefix + "lon"]
        let parkID = ParkID(rawValue: row[prefix + "park_id"])
        return CatalogRide(
            id: RideID(rawValue: row[prefix + "id"]), park: CatalogPark(id: parkID, name: row[prefix + "park_name"], fenced: row[prefix + "park_fenced"]),
            name: row[prefix + "name"], type: RideType(rawValue: row[prefix + "type"]) ?? .other,
            status: (row[prefix + "status"] as String?).flatMap(RideStatus.init(rawValue:)), land: row[prefix + "land"],
            stats: RideStats(heightM: row[prefix + "height_m"], speedKmh: row[prefix + "speed_kmh"], lengthM: row[prefix + "length_m"],
                             inversions: row[prefix + "inversions"], manufacturer: row[prefix + "manufacturer"], model: row[prefix + "model"],
                             opened: row[prefix + "opened"], material: row[prefix + "material"], source: row[prefix + "stats_source"]),
            position: lat.flatMap { lat in lon.map { Coordinate(lat: lat, lon: $0) } },
            fenced: (row[prefix + "ride_id"] as String?).map(RideID.init(rawValue:)), lists: row[prefix + "lists"])
    }

    static func catalogPark(from row: Row) -> CatalogPark {
        CatalogPark(id: ParkID(rawValue: row["id"]), name: row["name"], fenced: row["fenced"])
    }
}

/// What an entry of `catalog_rides` says, besides what follows from it (keys and documents) and
/// how many lists hold it: compared with what is stored, so that an import writes only changes.
private struct CatalogEntry: Equatable, FetchableRecord {
    var id: RideID
    var park: ParkID
    var rideID: RideID?
    var name: String
    var type: RideType
    var status: RideStatus?
    var land: String?
    var stats: RideStats
    var position: Coordinate?

    init(id: RideID, park: ParkID, rideID: RideID?, name: String, type: RideType, status: RideStatus?, land: String?, stats: RideStats,
         position: Coordinate?) {
        self.id = id
        self.park = park
        self.rideID = rideID
        self.name = name
        self.type = type
        self.status = status
        self.land = land
        self.stats = stats
        self.position = position
    }

    init(row: Row) {
        let lat: Double? = row["lat"], lon: Double? = row["lon"]
        self.init(id: RideID(rawValue: row["id"]), park: ParkID(rawValue: row["park_id"]), rideID: (row["ride_id"] as String?).map(RideID.init(rawValue:)),
                  name: row["name"], type: RideType(rawValue: row["type"]) ?? .other, status: (row["status"] as String?).flatMap(RideStatus.init(rawValue:)),
                  land: row["land"],
                  stats: RideStats(heightM: row["height_m"], speedKmh: row["speed_kmh"], lengthM: row["length_m"], inversions: row["inversions"],
                                   manufacturer: row["manufacturer"], model: row["model"], opened: row["opened"], material: row["material"],
                                   source: row["stats_source"]),
                  position: lat.flatMap { lat in lon.map { Coordinate(lat: lat, lon: $0) } })
    }

    func detailDocument(parkName: String) -> String {
        CatalogText.detailDocument(park: parkName, land: self.land, type: self.type, stats: self.stats)
    }

    /// This entry as a park file's ride says it is: its name, type, status, land and figures, a
    /// figure the file lacks kept from the entry.
    func refreshed(by ride: Ride) -> CatalogEntry {
        var entry = self
        entry.park = ride.park
        entry.rideID = ride.id
        entry.name = ride.name
        entry.type = ride.type
        entry.status = ride.status
        entry.land = ride.land ?? self.land
        entry.stats = ride.stats.filled(from: self.stats)
        return entry
    }

    /// This fenced ride's entry with the figures it lacks taken from a catalogue file's entry.
    func filled(from entry: CatalogImport.Entry) -> CatalogEntry {
        var filled = self
        filled.stats = self.stats.filled(from: entry.stats)
        filled.status = self.status ?? entry.status
        filled.position = self.position ?? entry.position
        return filled
    }
}
