import CoasterCore
import Foundation
import PostgresNIO

/// The ride catalogue (docs: Catalogue).
///
/// Words are found by `search`, a generated `tsvector` of ``CatalogText``'s documents (the name
/// weighted A, the details B) under a GIN index; each term is a prefix lexeme of a `tsquery`
/// built by the store (`'term':*`, cast, never parsed), so no query text is ever syntax. A
/// misspelt word is found through pg_trgm's index on `name_doc`: the candidates are the rides
/// whose name holds one of the words' trigrams (``CatalogSearch/candidateTrigrams(_:)``, as
/// SQLite's trigram index finds them), and ``CatalogSearch/approximate(_:terms:limit:offset:)``
/// decides and orders, in Swift on both stores. The catalogue changes under
/// ``PostgresLock/parkImport``, shared with park imports: each reads what the catalogue holds,
/// decides in Swift, and writes it in one statement.
extension PostgresStore: CatalogStore {
    public func importCatalog(_ file: CatalogImport) async throws -> CatalogImportSummary {
        try await self.transaction { tx in
            try await tx.lock(.parkImport)
            return try await Self.importCatalog(file, tx)
        }
    }

    public func searchCatalog(_ query: CatalogQuery) async throws -> CatalogResults {
        let terms = CatalogText.terms(query.text ?? "")
        let limit = min(max(0, query.limit), CatalogLimits.largestPage)
        let offset = min(max(0, query.offset), CatalogLimits.deepestOffset)
        let filter = CatalogFilter(query)
        let withParks = !terms.isEmpty && !CatalogSearch.hasRideFilter(query)
        // Statements of their own, outside a transaction (two round trips fewer): the catalogue
        // changes only by imports, and a page that mixed two moments of one would still be right.
        return try await self.single { tx in
            var search = CatalogSearchSQL()
            let order: String
            if terms.isEmpty {
                let filtering = filter.conditions(&search)
                search.conditions = filtering
                order = Self.order(query.sort == .relevance ? .name : query.sort)
            } else {
                let words = search.bind(Self.prefixQuery(terms))
                let filtering = filter.conditions(&search)
                search.conditions = ["r.search @@ \(words)::tsquery"] + filtering
                order = query.sort == .relevance ? "\(Self.rank(words)) DESC, r.name_key, r.id" : Self.order(query.sort)
            }
            // The parks' candidates ride along with the page, in one round trip.
            let parkColumns = withParks ? ", " + Self.parkCandidates(terms, &search) : ""
            let page = try await tx.rows(PostgresQuery(unsafeSQL: """
                SELECT \(Self.catalogRideColumns)\(parkColumns) FROM catalog_rides r JOIN catalog_parks p ON p.id = r.park_id
                \(search.whereClause) ORDER BY \(order) LIMIT \(search.bind(limit)) OFFSET \(search.bind(offset))
                """, binds: search.bindings))
            var rides = try page.map { try Self.catalogRide($0) }
            var parks: [CatalogPark]?
            if withParks, let first = page.first { parks = try Self.parks(holding: terms, first.makeRandomAccess(), at: Self.catalogRideColumnCount) }
            var approximate = false
            let grams = CatalogSearch.candidateTrigrams(terms)
            if rides.isEmpty, !grams.isEmpty, try await Self.noRideHolds(terms, filter: filter, offset: offset, tx) {
                let alike = CatalogSearch.approximate(try await Self.typoCandidates(grams, filter: filter, tx), terms: terms,
                                                      limit: limit, offset: offset)
                rides = try await Self.catalogRides(alike.page, tx)
                approximate = alike.any
            }
            if withParks, parks == nil {
                var alone = CatalogSearchSQL()
                let row = try await tx.one(PostgresQuery(unsafeSQL: "SELECT " + Self.parkCandidates(terms, &alone), binds: alone.bindings))
                parks = try Self.parks(holding: terms, row.makeRandomAccess(), at: 0)
            }
            return CatalogResults(rides: rides, parks: parks ?? [], approximate: approximate)
        }
    }

    public func catalogRide(_ id: RideID) async throws -> CatalogRide? {
        try await self.single { tx in
            try await tx.first("""
                SELECT \(unescaped: Self.catalogRideColumns) FROM catalog_rides r JOIN catalog_parks p ON p.id = r.park_id
                WHERE r.id = \(id.rawValue) OR r.ride_id = \(id.rawValue) ORDER BY r.id = \(id.rawValue) DESC LIMIT 1
                """).map { try Self.catalogRide($0) }
        }
    }

    public func catalogPark(_ id: ParkID) async throws -> CatalogPark? {
        try await self.single { tx in
            try await tx.first("SELECT id, name, fenced FROM catalog_parks WHERE id = \(id.rawValue)").map { row in
                let (id, name, fenced) = try row.decode((String, String, Bool).self)
                return CatalogPark(id: ParkID(rawValue: id), name: name, fenced: fenced)
            }
        }
    }

    public func catalogCounts() async throws -> (rides: Int, parks: Int) {
        let counts = try await self.single { tx in
            try await tx.one("SELECT (SELECT count(*) FROM catalog_rides), (SELECT count(*) FROM catalog_parks)").decode((Int, Int).self)
        }
        return (counts.0, counts.1)
    }
}

// MARK: - Searching

extension PostgresStore {
    /// Three columns (ids, names, fenced, by match key and id) of the catalogue's parks that may
    /// hold every term as a word prefix: a park's match key holds the words of its folded name
    /// but a leading "the" and a closing parenthesis, so these are the parks whose key holds each
    /// other term somewhere, and those with a parenthesis. ``parks(holding:_:at:)`` decides.
    private static func parkCandidates(_ terms: [String], _ sql: inout CatalogSearchSQL) -> String {
        let patterns = sql.bind(terms.filter { !"the".hasPrefix($0) }.map { "%" + Self.escapingLike($0) + "%" })
        let parks = "FROM catalog_parks WHERE name_key LIKE ALL(\(patterns)::text[]) OR strpos(name, '(') > 0"
        return ["id", "name", "fenced"].map { "(SELECT array_agg(\($0) ORDER BY name_key, id) \(parks))" }.joined(separator: ", ")
    }

    /// The parks among the candidates of ``parkCandidates(_:_:)`` (at `at` of `row`) whose name
    /// holds every term as a word prefix (``CatalogText/holds(_:in:)``), by match key, at most ten.
    private static func parks(holding terms: [String], _ row: PostgresRandomAccessRow, at: Int) throws -> [CatalogPark] {
        var c = ColumnReader(row, at: at)
        let ids = try c.next([String]?.self) ?? [], names = try c.next([String]?.self) ?? [], fenced = try c.next([Bool]?.self) ?? []
        var found: [CatalogPark] = []
        for (i, name) in names.enumerated() where found.count < 10 && CatalogText.holds(terms, in: CatalogText.fold(name)) {
            found.append(CatalogPark(id: ParkID(rawValue: ids[i]), name: name, fenced: fenced[i]))
        }
        return found
    }

    /// Whether no ride that passes the filter holds every term: after an empty page, which past
    /// the last match (`offset`) is no reason to guess at spelling.
    private static func noRideHolds(_ terms: [String], filter: CatalogFilter, offset: Int, _ tx: PostgresTransaction) async throws -> Bool {
        guard offset > 0 else { return true }
        var probe = CatalogSearchSQL()
        let words = probe.bind(Self.prefixQuery(terms))
        let filtering = filter.conditions(&probe)
        probe.conditions = ["r.search @@ \(words)::tsquery"] + filtering
        return try await tx.first(PostgresQuery(unsafeSQL: "SELECT 1 FROM catalog_rides r \(probe.whereClause) LIMIT 1", binds: probe.bindings)) == nil
    }

    /// The rides that pass the filter and whose name holds one of `grams` (as SQLite's trigram
    /// index finds them), those holding most of them first, at most
    /// ``CatalogSearch/typoCandidates``. One `LIKE '%abc%'` a gram, each a scan of pg_trgm's index
    /// (one `LIKE ANY` of them all would read the whole table).
    private static func typoCandidates(_ grams: [String], filter: CatalogFilter,
                                       _ tx: PostgresTransaction) async throws -> [CatalogSearch.Candidate<String>] {
        var search = CatalogSearchSQL()
        let patterns = search.bind(grams.map { "%" + Self.escapingLike($0) + "%" })
        search.conditions = filter.conditions(&search)
        return try await tx.rows(PostgresQuery(unsafeSQL: """
            SELECT r.id, r.name_doc, r.name_key
            FROM (SELECT c.id, count(*) AS shared FROM unnest(\(patterns)::text[]) AS g(pattern) JOIN catalog_rides c ON c.name_doc LIKE g.pattern
                  GROUP BY c.id) m
            JOIN catalog_rides r ON r.id = m.id \(search.whereClause)
            ORDER BY m.shared DESC, r.name_key, r.id LIMIT \(search.bind(CatalogSearch.typoCandidates))
            """, binds: search.bindings)).map { row in
            let (id, document, key) = try row.decode((String, String, String).self)
            return CatalogSearch.Candidate(key: id, nameDocument: document, nameKey: key, id: id)
        }
    }

    /// The entries with these ids, in this order.
    private static func catalogRides(_ ids: [String], _ tx: PostgresTransaction) async throws -> [CatalogRide] {
        guard !ids.isEmpty else { return [] }
        var found: [RideID: CatalogRide] = [:]
        for row in try await tx.rows("""
            SELECT \(unescaped: Self.catalogRideColumns) FROM catalog_rides r JOIN catalog_parks p ON p.id = r.park_id WHERE r.id = ANY(\(ids)::text[])
            """) {
            let ride = try Self.catalogRide(row)
            found[ride.id] = ride
        }
        return ids.compactMap { found[RideID(rawValue: $0)] }
    }

    /// `text` matched literally by `LIKE`.
    private static func escapingLike(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_")
    }

    /// The relevance of a ride to the words bound at `words`: `ts_rank` with the name (A) ten
    /// times the details (B), the weights SQLite gives bm25's columns.
    private static func rank(_ words: String) -> String {
        "ts_rank('{0, 0, 0.1, 1}'::float4[], r.search, \(words)::tsquery)"
    }

    /// A `tsquery` in its text form that holds every term as a prefix: cast, not parsed, so each
    /// term is one lexeme whatever it holds (terms are folded words: no quote to escape).
    private static func prefixQuery(_ terms: [String]) -> String {
        terms.map { "'" + $0.replacingOccurrences(of: "'", with: "''").replacingOccurrences(of: "\\", with: "\\\\") + "':*" }
            .joined(separator: " & ")
    }

    /// The `ORDER BY` of a sort that is not by relevance.
    private static func order(_ sort: CatalogSort) -> String {
        switch sort {
        case .relevance, .name: "r.name_key, r.id"
        case .height: "r.height_m DESC NULLS LAST, r.name_key, r.id"
        case .speed: "r.speed_kmh DESC NULLS LAST, r.name_key, r.id"
        }
    }
}

/// A search's filters, as conditions on `catalog_rides r`.
private struct CatalogFilter: Sendable {
    var park: String?
    var type: String?
    /// Prefixes of `manufacturer_key` with a space after it, any of which matches
    /// (``CatalogSearch/manufacturerPrefixes(_:)``); none matches nothing.
    var manufacturers: [String]?
    var minHeightM: Double?
    var minSpeedKmh: Double?
    var minInversions: Int?
    var openedFrom: Int?
    var openedTo: Int?

    init(_ query: CatalogQuery) {
        self.park = query.park?.rawValue
        self.type = query.type?.rawValue
        self.manufacturers = query.manufacturer.map(CatalogSearch.manufacturerPrefixes)
        self.minHeightM = query.minHeightM
        self.minSpeedKmh = query.minSpeedKmh
        self.minInversions = query.minInversions
        self.openedFrom = query.openedFrom
        self.openedTo = query.openedTo
    }

    func conditions(_ sql: inout CatalogSearchSQL) -> [String] {
        var conditions: [String] = []
        if let park { conditions.append("r.park_id = \(sql.bind(park))") }
        if let type { conditions.append("r.type = \(sql.bind(type))") }
        if let manufacturers {
            conditions.append(manufacturers.isEmpty ? "false" : "(r.manufacturer_key || ' ') ^@ ANY(\(sql.bind(manufacturers))::text[])")
        }
        if let minHeightM { conditions.append("r.height_m >= \(sql.bind(minHeightM))") }
        if let minSpeedKmh { conditions.append("r.speed_kmh >= \(sql.bind(minSpeedKmh))") }
        if let minInversions { conditions.append("r.inversions >= \(sql.bind(minInversions))") }
        if let openedFrom { conditions.append("r.opened >= \(sql.bind(openedFrom))") }
        if let openedTo { conditions.append("r.opened <= \(sql.bind(openedTo))") }
        return conditions
    }
}

/// A statement put together from parts, each value bound as the next `$n`.
private struct CatalogSearchSQL {
    var bindings = PostgresBindings()
    var conditions: [String] = []

    /// Binds `value` and returns its placeholder.
    mutating func bind<Value: PostgresDynamicTypeEncodable>(_ value: Value) -> String {
        self.bindings.append(value)
        return "$\(self.bindings.count)"
    }

    var whereClause: String { self.conditions.isEmpty ? "" : "WHERE " + self.conditions.joined(separator: " AND ") }
}

// MARK: - Entries as rows

extension PostgresStore {
    /// The columns ``catalogRide(_:from:)`` reads, of `catalog_rides r` joined to its park `p`.
    static let catalogRideColumns = """
        r.id, r.park_id, p.name, p.fenced, r.name, r.type, r.status, r.land, r.height_m, r.speed_kmh, r.length_m, r.inversions, \
        r.manufacturer, r.model, r.opened, r.material, r.stats_source, r.lat, r.lon, r.ride_id, r.lists
        """

    /// How many columns ``catalogRideColumns`` names: a query's own columns follow them.
    static let catalogRideColumnCount = 21

    /// A catalogue ride from ``catalogRideColumns`` at `from` on (`nil` when its id is NULL: an
    /// outer join that found none).
    static func catalogRide(_ row: PostgresRow, from: Int = 0) throws -> CatalogRide {
        guard let ride = try Self.catalogRide(row.makeRandomAccess(), from: from) else {
            throw PostgresStoreFault("a catalogue ride's columns were NULL")
        }
        return ride
    }

    static func catalogRide(_ row: PostgresRandomAccessRow, from: Int) throws -> CatalogRide? {
        var c = ColumnReader(row, at: from)
        guard let id = try c.next(String?.self) else { return nil }
        let park = CatalogPark(id: ParkID(rawValue: try c.next()), name: try c.next(), fenced: try c.next())
        let name: String = try c.next()
        let type = RideType(rawValue: try c.next()) ?? .other
        let status = try c.next(String?.self).flatMap(RideStatus.init(rawValue:))
        let land: String? = try c.next()
        let stats = RideStats(heightM: try c.next(), speedKmh: try c.next(), lengthM: try c.next(), inversions: try c.next(),
                              manufacturer: try c.next(), model: try c.next(), opened: try c.next(), material: try c.next(),
                              source: try c.next())
        let lat: Double? = try c.next(), lon: Double? = try c.next()
        let fenced = try c.next(String?.self).map(RideID.init(rawValue:))
        let lists: Int = try c.next()
        return CatalogRide(id: RideID(rawValue: id), park: park, name: name, type: type, status: status, land: land, stats: stats,
                           position: lat.flatMap { lat in lon.map { Coordinate(lat: lat, lon: $0) } }, fenced: fenced, lists: lists)
    }
}

/// Reads a row's columns one after another.
struct ColumnReader {
    private let row: PostgresRandomAccessRow
    private var index: Int

    init(_ row: PostgresRandomAccessRow, at index: Int = 0) {
        self.row = row
        self.index = index
    }

    mutating func next<T: PostgresDecodable>(_ type: T.Type = T.self) throws -> T {
        defer { self.index += 1 }
        return try self.row[self.index].decode(T.self)
    }
}

/// A catalogue entry as the store writes it; its match keys and documents follow from it.
struct CatalogEntryRow: Hashable, Sendable {
    var id: String
    var park: String
    /// The fenced ride it is, if any.
    var ride: String?
    var name: String
    var type: RideType
    var status: RideStatus?
    var land: String?
    var stats: RideStats
    var position: Coordinate?

    /// The columns ``init(_:)`` reads, of `catalog_rides r`.
    static let columns = """
        r.id, r.park_id, r.ride_id, r.name, r.type, r.status, r.land, r.height_m, r.speed_kmh, r.length_m, r.inversions, \
        r.manufacturer, r.model, r.opened, r.material, r.stats_source, r.lat, r.lon
        """

    init(id: String, park: String, ride: String?, name: String, type: RideType, status: RideStatus?, land: String?, stats: RideStats,
         position: Coordinate?) {
        self.id = id
        self.park = park
        self.ride = ride
        self.name = name
        self.type = type
        self.status = status
        self.land = land
        self.stats = stats
        self.position = position
    }

    init(_ row: PostgresRow) throws {
        var c = ColumnReader(row.makeRandomAccess())
        self.id = try c.next()
        self.park = try c.next()
        self.ride = try c.next()
        self.name = try c.next()
        self.type = RideType(rawValue: try c.next()) ?? .other
        self.status = try c.next(String?.self).flatMap(RideStatus.init(rawValue:))
        self.land = try c.next()
        self.stats = RideStats(heightM: try c.next(), speedKmh: try c.next(), lengthM: try c.next(), inversions: try c.next(),
                               manufacturer: try c.next(), model: try c.next(), opened: try c.next(), material: try c.next(),
                               source: try c.next())
        let lat: Double? = try c.next(), lon: Double? = try c.next()
        self.position = lat.flatMap { lat in lon.map { Coordinate(lat: lat, lon: $0) } }
    }

    /// The figures of `self`, each one it lacks taken from `other`.
    func filling(from other: RideStats, position: Coordinate?) -> CatalogEntryRow {
        var filled = self
        filled.stats = self.stats.filled(from: other)
        filled.position = self.position ?? position
        return filled
    }
}

// MARK: - Writing the catalogue

extension PostgresStore {
    /// Writes entries (new or changed) in one statement, their match keys and documents made
    /// here; `parkNames` names each entry's park. The list count is the triggers', never written.
    static func writeCatalogEntries(_ rows: [CatalogEntryRow], parkNames: [String: String], _ tx: PostgresTransaction) async throws {
        guard !rows.isEmpty else { return }
        let detail = rows.map {
            CatalogText.detailDocument(park: parkNames[$0.park] ?? $0.park, land: $0.land, type: $0.type, stats: $0.stats)
        }
        try await tx.run("""
            INSERT INTO catalog_rides (id, park_id, ride_id, name, name_key, type, status, land, height_m, speed_kmh, length_m, inversions,
                                       manufacturer, manufacturer_key, model, opened, material, stats_source, lat, lon, name_doc, detail_doc)
            SELECT e.id, e.park_id, e.ride_id, e.name, e.name_key, e.type, e.status, e.land, e.height_m, e.speed_kmh, e.length_m, e.inversions,
                   e.manufacturer, e.manufacturer_key, e.model, e.opened, e.material, e.stats_source, e.lat, e.lon, e.name_doc, e.detail_doc
            FROM unnest(\(rows.map(\.id))::text[], \(rows.map(\.park))::text[], \(NullableArray(rows.map(\.ride)))::text[],
                        \(rows.map(\.name))::text[], \(rows.map { CatalogText.matchKey($0.name) })::text[], \(rows.map(\.type.rawValue))::text[],
                        \(NullableArray(rows.map(\.status?.rawValue)))::text[], \(NullableArray(rows.map(\.land)))::text[],
                        \(NullableArray(rows.map(\.stats.heightM)))::float8[], \(NullableArray(rows.map(\.stats.speedKmh)))::float8[],
                        \(NullableArray(rows.map(\.stats.lengthM)))::float8[], \(NullableArray(rows.map(\.stats.inversions)))::int[],
                        \(NullableArray(rows.map(\.stats.manufacturer)))::text[],
                        \(NullableArray(rows.map { $0.stats.manufacturer.map(CatalogText.fold) }))::text[],
                        \(NullableArray(rows.map(\.stats.model)))::text[], \(NullableArray(rows.map(\.stats.opened)))::int[],
                        \(NullableArray(rows.map(\.stats.material)))::text[], \(NullableArray(rows.map(\.stats.source)))::text[],
                        \(NullableArray(rows.map(\.position?.lat)))::float8[], \(NullableArray(rows.map(\.position?.lon)))::float8[],
                        \(rows.map { CatalogText.nameDocument($0.name) })::text[], \(detail)::text[])
                 WITH ORDINALITY AS e(id, park_id, ride_id, name, name_key, type, status, land, height_m, speed_kmh, length_m, inversions,
                                      manufacturer, manufacturer_key, model, opened, material, stats_source, lat, lon, name_doc, detail_doc, n)
            ORDER BY e.n
            ON CONFLICT (id) DO UPDATE SET
                park_id = excluded.park_id, ride_id = excluded.ride_id, name = excluded.name, name_key = excluded.name_key,
                type = excluded.type, status = excluded.status, land = excluded.land, height_m = excluded.height_m,
                speed_kmh = excluded.speed_kmh, length_m = excluded.length_m, inversions = excluded.inversions,
                manufacturer = excluded.manufacturer, manufacturer_key = excluded.manufacturer_key, model = excluded.model,
                opened = excluded.opened, material = excluded.material, stats_source = excluded.stats_source, lat = excluded.lat,
                lon = excluded.lon, name_doc = excluded.name_doc, detail_doc = excluded.detail_doc
            """)
    }

    /// The migration's part in Swift: the parks and rides loaded before the catalogue existed
    /// are its first entries, each under its own id and linked to itself.
    static func catalogFromLoadedParks(_ tx: PostgresTransaction) async throws {
        var names: [String: String] = [:]
        for row in try await tx.rows("SELECT id, name FROM parks ORDER BY id") {
            let (id, name) = try row.decode((String, String).self)
            names[id] = name
        }
        guard !names.isEmpty else { return }
        let parks = names.keys.sorted()
        try await tx.run("""
            INSERT INTO catalog_parks (id, name, name_key, fenced)
            SELECT p.id, p.name, p.name_key, true FROM unnest(\(parks)::text[], \(parks.map { names[$0]! })::text[],
                                                               \(parks.map { CatalogText.matchKey(names[$0]!) })::text[]) AS p(id, name, name_key)
            """)
        let rides = try await tx.rows("""
            SELECT r.id, r.park_id, r.id, r.name, r.type, r.status, r.land, r.height_m, r.speed_kmh, r.length_m, r.inversions,
                   r.manufacturer, r.model, r.opened, r.material, r.stats_source, NULL::float8, NULL::float8
            FROM rides r ORDER BY r.id
            """).map(CatalogEntryRow.init)
        try await Self.writeCatalogEntries(rides, parkNames: names, tx)
    }

    /// A loaded park's part of the catalogue (``CatalogStore``), after its rides are written, in
    /// the import's transaction: the park's entry, fenced (the one catalogue park of the same
    /// match key and another id, if there is exactly one, gives it its rides and its place in
    /// lists, and goes); each ride takes the entry linked to it, else the unlinked entry of its own
    /// id, else one of the park's unlinked entries of the same match key (the first by id), else a
    /// new one. Rides the file no longer lists keep their entries: lists hold them.
    static func catalogPark(_ definition: ParkDefinition, _ tx: PostgresTransaction) async throws {
        let park = definition.park
        let key = CatalogText.matchKey(park.name)
        // Two catalogue parks of one name are not known to be the same park: neither is merged.
        let alike = try await tx.rows("""
            WITH upsert AS (
                INSERT INTO catalog_parks (id, name, name_key, fenced) VALUES (\(park.id.rawValue), \(park.name), \(key), true)
                ON CONFLICT (id) DO UPDATE SET name = excluded.name, name_key = excluded.name_key, fenced = true
            )
            SELECT id FROM catalog_parks WHERE name_key = \(key) AND NOT fenced ORDER BY id LIMIT 2
            """).map { try $0.decode(String.self) }
        if alike.count == 1, alike[0] != park.id.rawValue { try await Self.mergeCatalogPark(alike[0], into: park.id.rawValue, tx) }

        let rideIDs = definition.rides.map(\.id.rawValue)
        let stored = try await tx.rows("""
            SELECT \(unescaped: CatalogEntryRow.columns) FROM catalog_rides r
            WHERE r.park_id = \(park.id.rawValue) OR r.ride_id = ANY(\(rideIDs)::text[]) OR r.id = ANY(\(rideIDs)::text[])
            ORDER BY r.id
            """).map(CatalogEntryRow.init)
        var byRide: [String: CatalogEntryRow] = [:]
        var byID: [String: CatalogEntryRow] = [:]
        var unlinked: [String: [CatalogEntryRow]] = [:]
        for entry in stored {
            byID[entry.id] = entry
            if let ride = entry.ride { byRide[ride] = entry }
            else if entry.park == park.id.rawValue { unlinked[CatalogText.matchKey(entry.name), default: []].append(entry) }
        }
        var written: [String: CatalogEntryRow] = [:]
        func isFree(_ entry: CatalogEntryRow) -> Bool { entry.ride == nil && written[entry.id] == nil }
        for ride in definition.rides {
            let id = ride.id.rawValue
            var entry = byRide[id] ?? byID[id].flatMap { isFree($0) ? $0 : nil }
            if entry == nil { entry = unlinked[CatalogText.matchKey(ride.name)]?.first(where: isFree) }
            let entryID: String
            if let entry {
                entryID = entry.id
            } else if byID[id] == nil && written[id] == nil {
                entryID = id
            } else {
                // The ride's own id, unless an entry linked to another ride took it.
                entryID = try await Self.freeEntryID(after: id, taken: Set(written.keys), tx)
            }
            let refreshed = CatalogEntryRow(id: entryID, park: park.id.rawValue, ride: id, name: ride.name, type: ride.type,
                                            status: ride.status, land: ride.land ?? entry?.land, stats: ride.stats, position: nil)
            written[entryID] = refreshed.filling(from: entry?.stats ?? RideStats(), position: entry?.position)
        }
        // The park's other entries (unlisted rides, catalogue entries): their documents name the park.
        for entry in stored where entry.park == park.id.rawValue && written[entry.id] == nil { written[entry.id] = entry }
        try await Self.writeCatalogEntries(written.keys.sorted().map { written[$0]! }, parkNames: [park.id.rawValue: park.name], tx)
    }

    /// `id` followed by `-2`, `-3`…: the first no entry has, nor any of `taken`.
    private static func freeEntryID(after id: String, taken: Set<String>, _ tx: PostgresTransaction) async throws -> String {
        let used = taken.union(try await tx.rows("""
            SELECT id FROM catalog_rides WHERE id = \(id) OR starts_with(id, \(id + "-"))
            """).map { try $0.decode(String.self) })
        var n = 2
        while used.contains("\(id)-\(n)") { n += 1 }
        return "\(id)-\(n)"
    }

    /// A catalogue park named like a park just loaded becomes it: its rides move to it, and the
    /// list items and post tags that held it hold it (a list that held both keeps the loaded
    /// park's item, and the items after the other move up; a post keeps one tag).
    private static func mergeCatalogPark(_ merged: String, into park: String, _ tx: PostgresTransaction) async throws {
        try await tx.run("UPDATE catalog_rides SET park_id = \(park) WHERE park_id = \(merged)")
        let emptied = try await tx.rows("""
            DELETE FROM list_items o USING list_items n
            WHERE o.kind = 'park' AND o.target_id = \(merged) AND n.list_id = o.list_id AND n.kind = 'park' AND n.target_id = \(park)
            RETURNING o.list_id, o.position
            """).map { try $0.decode((Int64, Int).self) }
        if !emptied.isEmpty {
            try await tx.run("""
                UPDATE list_items i SET position = i.position - 1
                FROM unnest(\(emptied.map(\.0))::bigint[], \(emptied.map(\.1))::int[]) AS e(list_id, position)
                WHERE i.list_id = e.list_id AND i.position > e.position
                """)
        }
        try await tx.run("UPDATE list_items SET target_id = \(park) WHERE kind = 'park' AND target_id = \(merged)")
        // Posts tagged with both keep one tag of the park.
        try await tx.run("""
            UPDATE post_tags o SET value = \(park)
            WHERE o.kind IN ('park', 'about') AND o.value = \(merged)
                AND NOT EXISTS (SELECT 1 FROM post_tags n WHERE n.post_id = o.post_id AND n.kind = o.kind AND n.value = \(park))
            """)
        try await tx.run("DELETE FROM post_tags WHERE kind IN ('park', 'about') AND value = \(merged)")
        // Home parks follow the park (`users_by_home_park`).
        try await tx.run("UPDATE users SET home_park = \(park) WHERE home_park = \(merged)")
        try await tx.run("DELETE FROM catalog_parks WHERE id = \(merged)")
    }

    /// ``importCatalog(_:)`` in its transaction: what the catalogue holds of the file's parks and
    /// entries read in two statements, decided here as the SpatiaLite store decides it entry by
    /// entry, and written in one.
    private static func importCatalog(_ file: CatalogImport, _ tx: PostgresTransaction) async throws -> CatalogImportSummary {
        var parks: [String: CatalogPark] = [:]
        var fencedByKey: [String: [String]] = [:]
        for row in try await tx.rows("SELECT id, name, name_key, fenced FROM catalog_parks ORDER BY id") {
            let (id, name, key, fenced) = try row.decode((String, String, String, Bool).self)
            parks[id] = CatalogPark(id: ParkID(rawValue: id), name: name, fenced: fenced)
            if fenced { fencedByKey[key, default: []].append(id) }
        }
        var summary = CatalogImportSummary(added: 0, updated: 0, matchedFenced: 0, parks: 0)
        // The catalogue park each park of the file is: its own, or the one fenced park of the same
        // name (two are not known to be the same park); a fenced park keeps the park file's name.
        var parkOf: [String: CatalogPark] = [:]
        var parkRows: [CatalogPark] = []
        var renamed = Set<String>()
        for (id, name) in file.parks {
            if let park = parks[id.rawValue] {
                if !park.fenced, park.name != name {
                    let park = CatalogPark(id: id, name: name, fenced: false)
                    parkRows.append(park)
                    parks[id.rawValue] = park
                    renamed.insert(id.rawValue)
                }
                parkOf[id.rawValue] = parks[id.rawValue]
            } else if let fenced = fencedByKey[CatalogText.matchKey(name)], fenced.count == 1 {
                parkOf[id.rawValue] = parks[fenced[0]]
            } else {
                let park = CatalogPark(id: id, name: name, fenced: false)
                parkRows.append(park)
                parks[id.rawValue] = park
                parkOf[id.rawValue] = park
            }
        }
        summary.parks = parkRows.count
        if !parkRows.isEmpty {
            try await tx.run("""
                INSERT INTO catalog_parks (id, name, name_key, fenced)
                SELECT p.id, p.name, p.name_key, false
                FROM unnest(\(parkRows.map(\.id.rawValue))::text[], \(parkRows.map(\.name))::text[],
                            \(parkRows.map { CatalogText.matchKey($0.name) })::text[]) WITH ORDINALITY AS p(id, name, name_key, n)
                ORDER BY p.n
                ON CONFLICT (id) DO UPDATE SET name = excluded.name, name_key = excluded.name_key
                """)
        }

        let targetParks = Array(Set(parkOf.values.map(\.id.rawValue))).sorted()
        let stored = try await tx.rows("""
            SELECT \(unescaped: CatalogEntryRow.columns) FROM catalog_rides r
            WHERE r.park_id = ANY(\(targetParks)::text[]) OR r.id = ANY(\(file.rides.map(\.id.rawValue))::text[])
            ORDER BY r.id
            """).map(CatalogEntryRow.init)
        var current: [String: CatalogEntryRow] = [:]
        var fencedEntries: [String: String] = [:]   // park + "\n" + match key → the first such entry's id
        for entry in stored {
            current[entry.id] = entry
            if entry.ride != nil {
                let slot = entry.park + "\n" + CatalogText.matchKey(entry.name)
                if fencedEntries[slot] == nil { fencedEntries[slot] = entry.id }
            }
        }
        var changed = Set<String>()
        for entry in file.rides {
            guard let park = parkOf[entry.park.rawValue] else { continue }   // CatalogImport.check refuses such a file
            let old = current[entry.id.rawValue]
            var fenced = old?.ride == nil ? nil : old
            if park.fenced, let same = fencedEntries[park.id.rawValue + "\n" + CatalogText.matchKey(entry.name)] { fenced = current[same] }
            if let fenced {
                // The park file's ride: its figures stand, the catalogue fills those it lacks.
                var filled = fenced.filling(from: entry.stats, position: entry.position)
                filled.status = fenced.status ?? entry.status
                if filled != fenced {
                    current[filled.id] = filled
                    changed.insert(filled.id)
                }
                summary.matchedFenced += 1
                continue
            }
            let new = CatalogEntryRow(id: entry.id.rawValue, park: park.id.rawValue, ride: nil, name: entry.name, type: entry.type,
                                      status: entry.status, land: old?.land, stats: entry.stats, position: entry.position)
            if let old {
                guard new != old else { continue }
                summary.updated += 1
            } else {
                summary.added += 1
            }
            current[new.id] = new
            changed.insert(new.id)
        }
        // A park renamed by this file changes its rides' details (their park's name).
        for entry in stored where renamed.contains(entry.park) { changed.insert(entry.id) }
        try await Self.writeCatalogEntries(changed.sorted().map { current[$0]! }, parkNames: parks.mapValues(\.name), tx)
        return summary
    }
}
