import Foundation

/// What a place in a park is: the categories `GET /v1/parks/{parkId}/places` answers by.
public enum PlaceCategory: String, Sendable, Codable, CaseIterable, NamedCases {
    case food, restroom
    case firstAid = "first-aid"
    case lockers
    case guestServices = "guest-services"
    case shop, parking, entrance, show, ride
    /// A sight or meeting point: a statue, a tower, a picnic grove.
    case landmark
    /// A service point whose source does not say which (OpenStreetMap's plain "Services").
    case service

    /// What a park file's `poi` may be: every category but ``ride`` and ``show``, which are the
    /// park's ride features (a ride of type `show` is a show) and are answered from them, so that
    /// no attraction is listed twice.
    public static let poiCategories: [PlaceCategory] = allCases.filter { $0 != .ride && $0 != .show }

    /// Categories park files used before this vocabulary, read as these (with a warning): a
    /// renamed category is still the same thing, and refusing files that were valid would only
    /// make an admin edit them.
    public static let formerNames: [String: PlaceCategory] = ["gate": .entrance]

    /// A ride's place category: `show` for a show, `ride` for every other attraction.
    public init(_ type: RideType) {
        self = type == .show ? .show : .ride
    }

    /// A stored category as read back: a former name as its new one; `nil` for one this
    /// vocabulary does not know (a database written before it validated categories).
    public init?(stored: String) {
        guard let category = PlaceCategory(rawValue: stored) ?? Self.formerNames[stored] else { return nil }
        self = category
    }

    /// The categories, each with its own bit.
    public var bit: PlaceCategories { PlaceCategories(rawValue: 1 << UInt16(Self.allCases.firstIndex(of: self)!)) }

    /// The raw values in declaration order, as problems list them.
    public static var listed: String { allCases.map(\.rawValue).joined(separator: ", ") }
}

/// A set of ``PlaceCategory`` values, one bit each; empty means every place, of any category or none.
public struct PlaceCategories: OptionSet, Hashable, Sendable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public init(_ categories: some Sequence<PlaceCategory>) {
        self.init(rawValue: categories.reduce(0) { $0 | $1.bit.rawValue })
    }

    /// Whether a place of `category` (a ``PlaceCategory/bit``, 0 for none) is asked for.
    @inline(__always)
    func admits(_ bits: UInt16) -> Bool { self.rawValue == 0 || self.rawValue & bits != 0 }
}

/// What a places question asks: which categories and how many places at most.
public struct PlaceQuery: Hashable, Sendable {
    /// Places an answer holds unless `limit` says otherwise.
    public static let defaultLimit = 10
    /// What `limit` may be.
    public static let limits = 1...100
    /// The longest `category` value read: every category once, commas between, is 104 bytes.
    public static let maximumCategoryLength = 256

    /// Asked-for categories; empty for every place.
    public var categories: PlaceCategories
    public var limit: Int

    public init(categories: PlaceCategories = [], limit: Int = PlaceQuery.defaultLimit) {
        self.categories = categories
        self.limit = limit
    }

    /// One bad query parameter: its name and why.
    public struct Issue: Error, Hashable, Sendable {
        public var parameter: String
        public var reason: String
    }

    /// A query refused, with every bad parameter.
    public struct Refusal: Error, Hashable, Sendable {
        public var issues: [Issue]
    }

    /// Reads the `category` (one category or a comma list; absent for all) and `limit` (1…100,
    /// default 10) query parameters, as the request gave them; every bad one is an issue.
    public static func parse(category: Substring?, limit: Substring?) -> Result<PlaceQuery, Refusal> {
        var issues: [Issue] = []
        var query = PlaceQuery()
        if let category {
            switch Self.readCategories(category) {
            case .success(let set): query.categories = set
            case .failure(let issue): issues.append(issue)
            }
        }
        if let limit {
            if let n = Int(limit), Self.limits.contains(n) {
                query.limit = n
            } else {
                issues.append(Issue(parameter: "limit", reason: "a whole number in \(Self.limits.lowerBound)…\(Self.limits.upperBound), not \"\(limit.prefix(32))\""))
            }
        }
        return issues.isEmpty ? .success(query) : .failure(Refusal(issues: issues))
    }

    /// The categories of a `category` value, or why it is not one.
    static func readCategories(_ text: Substring) -> Result<PlaceCategories, Issue> {
        func refused(_ reason: String) -> Result<PlaceCategories, Issue> { .failure(Issue(parameter: "category", reason: reason)) }
        guard text.utf8.count <= Self.maximumCategoryLength else {
            return refused("a category or a comma list of them, at most \(Self.maximumCategoryLength) characters")
        }
        var set = PlaceCategories()
        for piece in text.split(separator: ",", omittingEmptySubsequences: false) {
            let name = piece.trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty else { return refused("an empty category in \"\(text.prefix(64))\"; one of \(PlaceCategory.listed), or several with commas") }
            guard let category = PlaceCategory(rawValue: name) else {
                return refused("\"\(name.prefix(32))\" is not one of \(PlaceCategory.listed)")
            }
            set.insert(category.bit)
        }
        return .success(set)
    }
}

/// A place an answer names: by its position among its park's places (``ParkPlaces/places(ofParkAt:)``),
/// with the distance and initial bearing from the caller when they were measured.
public struct PlaceFound: Hashable, Sendable {
    public var place: Int
    /// Geodesic distance on WGS84, metres.
    public var distance: Double?
    /// Initial azimuth of the geodesic from the caller to the place, degrees clockwise from north, 0 ≤ b < 360.
    public var bearing: Double?
}

/// Every park's places in memory, for `GET /v1/parks/{parkId}/places`: the poi zones with their
/// categories and the rides (each a `ride` or a `show`), each at one point. Built from what the
/// store holds, with the fence index (``Fences``), and as immutable: shared freely.
///
/// A place's point is its zone's ``Zone/position`` (the point the park file gave), or for a zone
/// drawn as an area without one, the centroid of its area. Removed rides and rides under
/// construction are not places; nor are rides without a footprint (no point).
public final class ParkPlaces: Sendable {
    public struct Place: Hashable, Sendable {
        /// The zone's id (a ride's is the ride's id, `cedar-point.millennium-force`).
        public var id: String
        public var name: String
        /// `nil` for a poi whose stored category this vocabulary does not know, or that has none.
        public var category: PlaceCategory?
        public var land: String?
        /// SRID 4326.
        public var position: Coordinate
    }

    /// One park's places, in id order, with the fields the nearest-first scan reads side by side.
    private struct ParkEntry: Sendable {
        var places: [Place]
        var lat: [Double]
        var lon: [Double]
        /// Each place's ``PlaceCategory/bit``, 0 for none.
        var bits: [UInt16]
        /// Positions in `places`, by name (case- and accent-blind), then id.
        var byName: [Int]
    }

    public let parkIDs: [ParkID]
    private let parkByID: [ParkID: Int]
    private let entries: [ParkEntry]

    public static let empty = ParkPlaces([])

    public init(_ definitions: [ParkDefinition]) {
        var ids: [ParkID] = [], byID: [ParkID: Int] = [:], entries: [ParkEntry] = []
        for definition in definitions where byID[definition.park.id] == nil {
            byID[definition.park.id] = ids.count
            ids.append(definition.park.id)
            entries.append(Self.entry(definition))
        }
        self.parkIDs = ids
        self.parkByID = byID
        self.entries = entries
    }

    private static func entry(_ definition: ParkDefinition) -> ParkEntry {
        let rides = Dictionary(definition.rides.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        var places: [Place] = []
        var seen: Set<String> = []
        for zone in definition.zones where seen.insert(zone.id.rawValue).inserted {
            let position = zone.position ?? zone.area.centroid
            guard let position, position.isValid else { continue }
            switch zone.kind {
            case .poi:
                places.append(Place(id: zone.id.rawValue, name: zone.name, category: zone.category.flatMap(PlaceCategory.init(stored:)),
                                    land: zone.land, position: position))
            case .ride:
                guard let id = zone.ride, let ride = rides[id], ride.status == .operating || ride.status == .closed,
                      id.rawValue == zone.id.rawValue
                else { continue }
                places.append(Place(id: id.rawValue, name: ride.name, category: PlaceCategory(ride.type), land: ride.land, position: position))
            case .land, .queue:
                continue
            }
        }
        places.sort { $0.id < $1.id }
        let byName = places.indices.sorted { a, b in
            switch places[a].name.compare(places[b].name, options: [.caseInsensitive, .diacriticInsensitive]) {
            case .orderedAscending: true
            case .orderedDescending: false
            case .orderedSame: places[a].id < places[b].id
            }
        }
        return ParkEntry(places: places, lat: places.map(\.position.lat), lon: places.map(\.position.lon),
                         bits: places.map { $0.category?.bit.rawValue ?? 0 }, byName: byName)
    }

    /// The park's position in ``parkIDs``, or `nil` if there is no such park.
    public func park(_ id: ParkID) -> Int? { self.parkByID[id] }

    /// The places of the park at `position` in ``parkIDs``, in id order.
    public func places(ofParkAt position: Int) -> [Place] { self.entries[position].places }

    /// Every place of every park.
    public var count: Int { self.entries.reduce(0) { $0 + $1.places.count } }

    /// The park's places that `query` asks for, by name, at most `query.limit`; no distances.
    public func byName(inParkAt park: Int, _ query: PlaceQuery) -> [PlaceFound] {
        let entry = self.entries[park]
        var found: [PlaceFound] = []
        found.reserveCapacity(min(query.limit, entry.places.count))
        for i in entry.byName where query.categories.admits(entry.bits[i]) {
            found.append(PlaceFound(place: i, distance: nil, bearing: nil))
            if found.count == query.limit { break }
        }
        return found
    }

    /// The park's places that `query` asks for, nearest to `origin` first (then by id), at most
    /// `query.limit`, each with its geodesic distance and initial bearing from `origin`.
    ///
    /// Candidates are ranked by the local plane's distance (``Geodesy/LocalDistances``, a few
    /// multiplications a place); the geodesic (PROJ's `geod_inverse`, a microsecond each) is
    /// worked out only for those kept and for any other within the plane's tolerance of the last
    /// kept, then they are ordered by it: the same places, in the same order, as ranking every
    /// place by its geodesic distance.
    public func nearest(inParkAt park: Int, from origin: Coordinate, _ query: PlaceQuery) -> [PlaceFound] {
        let entry = self.entries[park]
        let limit = query.limit
        guard limit > 0, origin.isValid else { return [] }
        let local = Geodesy.LocalDistances(from: origin)
        func distance(_ i: Int) -> Double {
            let point = Coordinate(lat: entry.lat[i], lon: entry.lon[i])
            return local.to(point) ?? Geodesy.distance(origin, point)
        }
        // The best so far, nearest first: insertion into a list of at most `limit`.
        var kept: [(d: Double, i: Int)] = []
        kept.reserveCapacity(min(limit, entry.places.count) + 1)
        for i in entry.places.indices where query.categories.admits(entry.bits[i]) {
            let d = distance(i)
            if kept.count == limit, let last = kept.last, (last.d, last.i) < (d, i) { continue }
            var at = kept.count
            while at > 0, (d, i) < (kept[at - 1].d, kept[at - 1].i) { at -= 1 }
            kept.insert((d, i), at: at)
            if kept.count > limit { kept.removeLast() }
        }
        var measured = kept.map(\.i)
        if kept.count == limit, let last = kept.last {
            // A place the plane put just behind the last kept may be ahead of it on the ellipsoid.
            let reach = last.d + 2 * Geodesy.localDistanceTolerance(last.d)
            for i in entry.places.indices where query.categories.admits(entry.bits[i]) && distance(i) <= reach && !measured.contains(i) {
                measured.append(i)
            }
        }
        var found = measured.map { i -> PlaceFound in
            let (d, azimuth) = Geodesy.inverse(origin, Coordinate(lat: entry.lat[i], lon: entry.lon[i]))
            return PlaceFound(place: i, distance: d, bearing: azimuth < 0 ? azimuth + 360 : azimuth)
        }
        found.sort { ($0.distance!, $0.place) < ($1.distance!, $1.place) }
        if found.count > limit { found.removeLast(found.count - limit) }
        return found
    }
}

extension MultiPolygon {
    /// The area-weighted centroid of the polygons (holes subtracted) in degrees, planar, or the
    /// mean of the exterior vertices when the area is nil; `nil` without vertices. For a place
    /// drawn as a small area: within a park, degrees are near enough to a plane.
    var centroid: Coordinate? {
        guard let origin = self.polygons.first?.rings.first?.first else { return nil }
        var area = 0.0, x = 0.0, y = 0.0
        var sumX = 0.0, sumY = 0.0, vertices = 0
        for polygon in self.polygons {
            for (r, ring) in polygon.rings.enumerated() where ring.count >= 2 {
                // Offsets from one vertex: products of whole degrees would lose the small area.
                var a = 0.0, cx = 0.0, cy = 0.0
                for k in 0..<(ring.count - 1) {
                    let x0 = ring[k].lon - origin.lon, y0 = ring[k].lat - origin.lat
                    let x1 = ring[k + 1].lon - origin.lon, y1 = ring[k + 1].lat - origin.lat
                    let cross = x0 * y1 - x1 * y0
                    a += cross
                    cx += (x0 + x1) * cross
                    cy += (y0 + y1) * cross
                }
                // Rings wind either way in a park file: an exterior adds its area, a hole takes it away.
                let sign: Double = (a < 0) == (r == 0) ? -1 : 1
                area += sign * a
                x += sign * cx
                y += sign * cy
            }
            for vertex in polygon.exterior.dropLast() {
                sumX += vertex.lon - origin.lon
                sumY += vertex.lat - origin.lat
                vertices += 1
            }
        }
        if area > 1e-18 {
            return Coordinate(lat: origin.lat + y / (3 * area), lon: origin.lon + x / (3 * area))
        }
        guard vertices > 0 else { return nil }
        return Coordinate(lat: origin.lat + sumY / Double(vertices), lon: origin.lon + sumX / Double(vertices))
    }
}
