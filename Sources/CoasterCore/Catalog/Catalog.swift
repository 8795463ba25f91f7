import Foundation

/// A park the catalogue knows: one with a geofence (its id is the park's), or one only named by
/// the catalogue data, which nobody can visit in the service until an admin loads it.
public struct CatalogPark: Hashable, Sendable {
    public var id: ParkID
    public var name: String
    /// Whether the park is loaded with its geofences, so that its rides can be logged.
    public var fenced: Bool

    public init(id: ParkID, name: String, fenced: Bool) {
        self.id = id
        self.name = name
        self.fenced = fenced
    }
}

/// A ride of the catalogue (docs: Catalogue). Its id is `<park>.<slug>`, like a fenced ride's:
/// the id of the fenced ride it came from, or the one the catalogue data gave it. A park file
/// loaded later that fences the same ride (same park, same ``CatalogText/matchKey(_:)``) links
/// the entry to it, so lists that hold the entry keep pointing at it.
public struct CatalogRide: Hashable, Sendable {
    public var id: RideID
    public var park: CatalogPark
    public var name: String
    public var type: RideType
    /// `nil` when the source does not say.
    public var status: RideStatus?
    public var land: String?
    public var stats: RideStats
    /// Where the source puts it, for entries without a fence.
    public var position: Coordinate?
    /// The fenced ride a rider logs, once its park is loaded with it; `nil` for a catalogue entry
    /// nobody can log yet.
    public var fenced: RideID?
    /// How many lists hold it (all lists: a count names nobody).
    public var lists: Int

    public init(id: RideID, park: CatalogPark, name: String, type: RideType, status: RideStatus?, land: String?, stats: RideStats,
                position: Coordinate?, fenced: RideID?, lists: Int) {
        self.id = id
        self.park = park
        self.name = name
        self.type = type
        self.status = status
        self.land = land
        self.stats = stats
        self.position = position
        self.fenced = fenced
        self.lists = lists
    }
}

/// The order of a catalogue search.
public enum CatalogSort: String, Sendable, CaseIterable, NamedCases {
    /// Best match first (bm25 on SQLite, `ts_rank` on PostgreSQL; by name without words).
    case relevance
    case name
    /// Tallest first; rides without a height last.
    case height
    /// Fastest first; rides without a speed last.
    case speed
}

/// A catalogue search: words and filters, all optional, all applied together.
public struct CatalogQuery: Hashable, Sendable {
    /// The words as the user typed them; ``CatalogText/terms(_:)`` reads them. `nil`: every ride.
    public var text: String?
    public var park: ParkID?
    public var type: RideType?
    /// Matched against the manufacturer's ``CatalogText/matchKey(_:)`` as a prefix, so "b&m",
    /// "B & M" and "bolliger" all find Bolliger & Mabillard.
    public var manufacturer: String?
    public var minHeightM: Double?
    public var minSpeedKmh: Double?
    /// At least this many inversions.
    public var minInversions: Int?
    public var openedFrom: Int?
    public var openedTo: Int?
    public var sort: CatalogSort
    public var limit: Int
    public var offset: Int

    public init(text: String? = nil, park: ParkID? = nil, type: RideType? = nil, manufacturer: String? = nil, minHeightM: Double? = nil,
                minSpeedKmh: Double? = nil, minInversions: Int? = nil, openedFrom: Int? = nil, openedTo: Int? = nil,
                sort: CatalogSort = .relevance, limit: Int = 20, offset: Int = 0) {
        self.text = text
        self.park = park
        self.type = type
        self.manufacturer = manufacturer
        self.minHeightM = minHeightM
        self.minSpeedKmh = minSpeedKmh
        self.minInversions = minInversions
        self.openedFrom = openedFrom
        self.openedTo = openedTo
        self.sort = sort
        self.limit = limit
        self.offset = offset
    }
}

/// One page of a catalogue search.
public struct CatalogResults: Hashable, Sendable {
    public var rides: [CatalogRide]
    /// Parks whose name holds every word (only with words and no ride filter), at most ten.
    public var parks: [CatalogPark]
    /// True when no ride held every word and the rides are those whose names are spelt alike
    /// (``CatalogText/similarity(_:_:)`` at least ``CatalogText/typoThreshold``).
    public var approximate: Bool

    public init(rides: [CatalogRide], parks: [CatalogPark], approximate: Bool) {
        self.rides = rides
        self.parks = parks
        self.approximate = approximate
    }
}

/// The bounds of a catalogue search, checked before a store is asked.
public struct CatalogLimits: Hashable, Sendable {
    public static let query = TextLimits(atMost: 200)
    public static let largestPage = 50
    public static let deepestOffset = 1_000
    /// Words of a query after ``CatalogText/terms(_:)``; more are ignored, so a query of
    /// thousands of words costs what eight do.
    public static let mostTerms = 8
}

/// How catalogue text is compared: one normal form for the stored documents and the queries, the
/// same on both stores, so that the same words find the same rides (docs: Catalogue).
public enum CatalogText {
    /// A word of at least this many characters may be matched by spelling alone.
    public static let typoThreshold = 0.3

    /// Abbreviations riders use for manufacturers, by the manufacturer's ``matchKey(_:)``
    /// prefix: the document of a ride by them carries the abbreviation as a word too.
    public static let aliases: [(manufacturer: String, alias: String)] = [
        ("bolliger mabillard", "bm"), ("rocky mountain construction", "rmc"), ("great coasters international", "gci"),
        ("s s ", "ss"), ("premier rides", "premier"), ("philadelphia toboggan", "ptc"), ("custom coasters international", "cci"),
        ("the gravity group", "gravity"), ("mack rides", "mack"), ("anton schwarzkopf", "schwarzkopf"),
    ]

    /// Lower case, diacritics folded, `&` and every other mark a space, spaces collapsed:
    /// "Bolliger & Mabillard" → "bolliger mabillard", "Fēnix" → "fenix". Also what matches a
    /// catalogue entry to a fenced ride of the same park (with ``matchKey(_:)``).
    public static func fold(_ text: String) -> String {
        let folded = text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: Locale(identifier: "en_US_POSIX"))
        var out = ""
        out.reserveCapacity(folded.utf8.count)
        var space = true
        for scalar in folded.unicodeScalars {
            if CharacterSet.alphanumerics.contains(scalar) {
                out.unicodeScalars.append(scalar)
                space = false
            } else if scalar == "'" || scalar == "’" {
                continue   // "Apollo's" is one word, as riders type it
            } else if !space {
                out.append(" ")
                space = true
            }
        }
        if out.hasSuffix(" ") { out.removeLast() }
        return out
    }

    /// The key two names of one ride share: folded, a Wikipedia-style disambiguator in
    /// parentheses dropped, a leading "the" dropped. "Raptor (Cedar Point)" and "Raptor" match.
    public static func matchKey(_ name: String) -> String {
        var name = name
        if let open = name.lastIndex(of: "("), name.hasSuffix(")"), open > name.startIndex { name = String(name[..<open]) }
        var key = self.fold(name)
        if key.hasPrefix("the ") { key.removeFirst(4) }
        return key
    }

    /// The searched words of a query: folded, with a manufacturer's abbreviation typed with its
    /// ampersand ("b&m", "s&s") kept one word; at most ``CatalogLimits/mostTerms``, each at most
    /// 64 characters. Never syntax: the stores quote every term.
    public static func terms(_ query: String) -> [String] {
        let joined = query.replacingOccurrences(of: #"(?i)\b([a-z])\s*&\s*([a-z])\b"#, with: "$1$2", options: .regularExpression)
        var seen = Set<String>()
        return self.fold(joined).split(separator: " ").map { String($0.prefix(64)) }
            .filter { seen.insert($0).inserted }.prefix(CatalogLimits.mostTerms).map { $0 }
    }

    /// The text a store indexes for a ride's name (weighted above the rest).
    public static func nameDocument(_ name: String) -> String { self.fold(name) }

    /// The text a store indexes besides the name: park, land, manufacturer with its
    /// abbreviation, model, type and material.
    public static func detailDocument(park: String, land: String?, type: RideType, stats: RideStats) -> String {
        var words = [self.fold(park)]
        if let land { words.append(self.fold(land)) }
        if let manufacturer = stats.manufacturer {
            let key = self.fold(manufacturer)
            words.append(key)
            for (prefix, alias) in self.aliases where (key + " ").hasPrefix(prefix) { words.append(alias) }
        }
        if let model = stats.model { words.append(self.fold(model)) }
        words.append(type.rawValue)
        if let material = stats.material { words.append(self.fold(material)) }
        return words.filter { !$0.isEmpty }.joined(separator: " ")
    }

    /// Whether a folded text holds every term as a word prefix: what both stores' word search
    /// means, and how parks are matched.
    public static func holds(_ terms: [String], in folded: String) -> Bool {
        let words = folded.split(separator: " ")
        return terms.allSatisfy { term in words.contains { $0.hasPrefix(term) } }
    }

    /// The trigrams of a folded word, padded as PostgreSQL's pg_trgm pads them (two spaces
    /// before, one after), so that the first letters weigh.
    public static func trigrams(_ word: Substring) -> Set<String> {
        let padded = Array("  " + word + " ")
        guard padded.count >= 3 else { return [] }
        var grams = Set<String>()
        for i in 0...(padded.count - 3) { grams.insert(String(padded[i..<(i + 3)])) }
        return grams
    }

    /// How alike a query is spelt to a name, 0…1: for each term, the best trigram overlap
    /// (shared / all) with a word of the name, averaged over the terms. "millenium" against
    /// "Millennium Force" is 0.67; against "Magnum XL-200", 0.
    public static func similarity(_ terms: [String], _ name: String) -> Double {
        self.similarity(terms.map { self.trigrams(Substring($0)) }, folded: self.fold(name))
    }

    /// The same, for terms given as their trigrams and a name already folded (a store's name
    /// document): a misspelt query weighs up to hundreds of names, each folded once when stored.
    public static func similarity(_ terms: [Set<String>], folded name: String) -> Double {
        guard !terms.isEmpty else { return 0 }
        let words = name.split(separator: " ").map { self.trigrams($0) }
        var total = 0.0
        for grams in terms {
            var best = 0.0
            for word in words {
                let union = grams.union(word).count
                if union > 0 { best = max(best, Double(grams.intersection(word).count) / Double(union)) }
            }
            total += best
        }
        return total / Double(terms.count)
    }
}

/// The catalogue file (`data/catalog/coasters.json`, data/catalog/README.md): parks and rides
/// from outside the park files, imported by `coasterlife catalog import`.
public struct CatalogFile: Decodable, Sendable {
    public struct Park: Decodable, Sendable {
        public var id: String
        public var name: String
    }

    public struct Entry: Decodable, Sendable {
        public var id: String
        public var park: String
        public var name: String
        public var type: String?
        public var status: String?
        public var material: String?
        public var manufacturer: String?
        public var model: String?
        public var opened: Int?
        public var heightM: Double?
        public var speedKmh: Double?
        public var lengthM: Double?
        public var inversions: Int?
        public var lat: Double?
        public var lon: Double?

        enum CodingKeys: String, CodingKey {
            case id, park, name, type, status, material, manufacturer, model, opened, inversions, lat, lon
            case heightM = "height_m", speedKmh = "speed_kmh", lengthM = "length_m"
        }
    }

    public var attribution: String?
    public var parks: [Park]
    public var rides: [Entry]
}

/// A catalogue file checked and made into what a store writes.
public struct CatalogImport: Sendable {
    public struct Entry: Hashable, Sendable {
        public var id: RideID
        public var park: ParkID
        public var name: String
        public var type: RideType
        public var status: RideStatus?
        public var stats: RideStats
        public var position: Coordinate?

        public init(id: RideID, park: ParkID, name: String, type: RideType, status: RideStatus?, stats: RideStats, position: Coordinate?) {
            self.id = id
            self.park = park
            self.name = name
            self.type = type
            self.status = status
            self.stats = stats
            self.position = position
        }
    }

    public init(attribution: String?, parks: [(id: ParkID, name: String)], rides: [Entry]) {
        self.attribution = attribution
        self.parks = parks
        self.rides = rides
    }

    public var attribution: String?
    public var parks: [(id: ParkID, name: String)]
    public var rides: [Entry]

    /// The most entries one file may hold.
    public static let largestFile = 200_000

    /// Checks a decoded file: ids are `<park>.<slug>` of a park the file lists, names fit, figures
    /// are finite and plausible. Throws every problem, by JSON pointer.
    public static func check(_ file: CatalogFile) throws(CatalogFileProblems) -> CatalogImport {
        var problems: [CatalogFileProblems.Problem] = []
        guard file.rides.count + file.parks.count <= self.largestFile else {
            throw CatalogFileProblems(problems: [.init(pointer: "/rides", reason: "at most \(self.largestFile) parks and rides")])
        }
        let name = TextLimits(atMost: 200, atLeast: 1)
        var parks: [(ParkID, String)] = []
        var parkIDs = Set<String>()
        for (i, park) in file.parks.enumerated() {
            if !Slug.isValid(park.id) { problems.append(.init(pointer: "/parks/\(i)/id", reason: "a slug: a-z, 0-9 and -, at most 64 characters")) }
            if name.violation(park.name) != nil { problems.append(.init(pointer: "/parks/\(i)/name", reason: "a name of 1 to 200 characters")) }
            if !parkIDs.insert(park.id).inserted { problems.append(.init(pointer: "/parks/\(i)/id", reason: "each park once")) }
            parks.append((ParkID(rawValue: park.id), park.name))
        }
        var rides: [Entry] = []
        var rideIDs = Set<String>()
        for (i, ride) in file.rides.enumerated() {
            let at = "/rides/\(i)"
            let parts = ride.id.split(separator: ".", omittingEmptySubsequences: false)
            if parts.count != 2 || String(parts[0]) != ride.park || !Slug.isValid(String(parts[1])) {
                problems.append(.init(pointer: at + "/id", reason: "<park>.<slug> of the ride's park"))
            }
            if !parkIDs.contains(ride.park) { problems.append(.init(pointer: at + "/park", reason: "a park the file lists")) }
            if !rideIDs.insert(ride.id).inserted { problems.append(.init(pointer: at + "/id", reason: "each ride once")) }
            if name.violation(ride.name) != nil { problems.append(.init(pointer: at + "/name", reason: "a name of 1 to 200 characters")) }
            let type = ride.type.map { RideType(rawValue: $0) } ?? .coaster
            if type == nil { problems.append(.init(pointer: at + "/type", reason: "one of \(RideType.allCases.map(\.rawValue).joined(separator: ", "))")) }
            let status = ride.status.flatMap { RideStatus(rawValue: $0) }
            if ride.status != nil, status == nil { problems.append(.init(pointer: at + "/status", reason: "one of \(RideStatus.allCases.map(\.rawValue).joined(separator: ", "))")) }
            func figure(_ value: Double?, _ key: String, _ range: ClosedRange<Double>) -> Double? {
                guard let value else { return nil }
                guard value.isFinite, range.contains(value) else {
                    problems.append(.init(pointer: at + "/" + key, reason: "a number from \(range.lowerBound) to \(range.upperBound)"))
                    return nil
                }
                return value
            }
            let stats = RideStats(
                heightM: figure(ride.heightM, "height_m", 0...500), speedKmh: figure(ride.speedKmh, "speed_kmh", 0...400),
                lengthM: figure(ride.lengthM, "length_m", 0...20_000),
                inversions: figure(ride.inversions.map(Double.init), "inversions", 0...100).map { Int($0) },
                manufacturer: ride.manufacturer.map { String($0.prefix(200)) }, model: ride.model.map { String($0.prefix(200)) },
                opened: figure(ride.opened.map(Double.init), "opened", 1_800...3_000).map { Int($0) },
                material: ride.material.map { String($0.prefix(40)) }, source: "wikipedia")
            var position: Coordinate?
            if let lat = ride.lat, let lon = ride.lon {
                if lat.isFinite, lon.isFinite, abs(lat) <= 90, abs(lon) <= 180 { position = Coordinate(lat: lat, lon: lon) }
                else { problems.append(.init(pointer: at + "/lat", reason: "a WGS84 position")) }
            }
            rides.append(Entry(id: RideID(rawValue: ride.id), park: ParkID(rawValue: ride.park), name: ride.name, type: type ?? .coaster,
                               status: status, stats: stats, position: position))
        }
        guard problems.isEmpty else { throw CatalogFileProblems(problems: problems) }
        return CatalogImport(attribution: file.attribution, parks: parks, rides: rides)
    }
}

/// Why a catalogue file is refused: every problem, each where it is.
public struct CatalogFileProblems: Error, Hashable, Sendable {
    public struct Problem: Hashable, Sendable {
        public var pointer: String
        public var reason: String

        public init(pointer: String, reason: String) {
            self.pointer = pointer
            self.reason = reason
        }
    }

    public var problems: [Problem]
}

/// What a catalogue import did.
public struct CatalogImportSummary: Hashable, Sendable {
    /// Entries written for rides no park file fences.
    public var added: Int
    public var updated: Int
    /// Entries of the file that are rides a park file fences (same park and
    /// ``CatalogText/matchKey(_:)``): the fenced ride's entry stays, its missing figures filled.
    public var matchedFenced: Int
    public var parks: Int

    public init(added: Int, updated: Int, matchedFenced: Int, parks: Int) {
        self.added = added
        self.updated = updated
        self.matchedFenced = matchedFenced
        self.parks = parks
    }
}
