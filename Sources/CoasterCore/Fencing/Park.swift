import Foundation

/// A string identifier with its own type, so a park id is never passed where a ride id belongs.
public protocol StringIdentifier: RawRepresentable, Hashable, Sendable, Codable, Comparable,
    CustomStringConvertible, ExpressibleByStringLiteral where RawValue == String
{
    init(rawValue: String)
}

extension StringIdentifier {
    public init(stringLiteral value: String) { self.init(rawValue: value) }
    public var description: String { self.rawValue }
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(self.rawValue)
    }
}

/// A park's slug, e.g. `cedar-point`.
public struct ParkID: StringIdentifier {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
}

/// A zone's id, `<park>.<slug>` (e.g. `cedar-point.frontier-town`): zone slugs are unique per park.
/// A ride's own zone has the ride's id.
public struct ZoneID: StringIdentifier {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(park: ParkID, slug: String) { self.rawValue = "\(park.rawValue).\(slug)" }
}

/// A ride's id, `<park>.<slug>` (e.g. `cedar-point.millennium-force`).
public struct RideID: StringIdentifier {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(park: ParkID, slug: String) { self.rawValue = "\(park.rawValue).\(slug)" }

    /// The park part of the id.
    public var park: ParkID { ParkID(rawValue: String(self.rawValue.prefix { $0 != "." })) }
}

public enum Slug {
    /// A catalogue or fenced ride's id as the wire gives it: `<park>.<slug>`, each part a slug.
    public static func isRideID(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 2 && Self.isValid(String(parts[0])) && Self.isValid(String(parts[1]))
    }

    /// Slugs are 1–64 characters of `a-z`, `0-9` and single inner hyphens.
    public static func isValid(_ text: String) -> Bool {
        guard (1...64).contains(text.utf8.count) else { return false }
        var previousHyphen = true
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                previousHyphen = false
            case UInt8(ascii: "-"):
                if previousHyphen { return false }
                previousHyphen = true
            default:
                return false
            }
        }
        return !previousHyphen
    }

    /// A slug made from a display name ("Maverick (2007)" → "maverick-2007"); `nil` if nothing is left.
    public static func make(from name: String) -> String? {
        let folded = name.folding(options: [.diacriticInsensitive, .caseInsensitive], locale: nil)
            .replacingOccurrences(of: "&", with: " and ")
            .replacingOccurrences(of: "'", with: "")
            .replacingOccurrences(of: "’", with: "")
        var out = ""
        var pendingHyphen = false
        for scalar in folded.unicodeScalars {
            let isAlnum = (scalar >= "a" && scalar <= "z") || (scalar >= "0" && scalar <= "9")
            if isAlnum {
                if pendingHyphen && !out.isEmpty { out.append("-") }
                pendingHyphen = false
                out.unicodeScalars.append(scalar)
            } else {
                pendingHyphen = true
            }
        }
        while out.utf8.count > 64 {
            out = String(out.dropLast())
            while out.hasSuffix("-") { out.removeLast() }
        }
        return out.isEmpty ? nil : out
    }
}

/// What a zone is for. `ride` zones are a ride's footprint; `queue` zones its queue line.
public enum ZoneKind: String, Sendable, Codable, CaseIterable, NamedCases {
    case ride, queue, land, poi
}

/// The kinds of attraction the app tells apart.
public enum RideType: String, Sendable, Codable, CaseIterable, NamedCases {
    case coaster, flat, water, dark, show, family, kiddie, transport, ride, other
}

/// Whether a ride runs, as loaded from a park file.
public enum RideStatus: String, Sendable, Codable, CaseIterable, NamedCases {
    case operating, closed, removed
    case underConstruction = "under-construction"
}

/// Published statistics of a ride; every figure is optional. Units are SI.
public struct RideStats: Hashable, Sendable, Codable {
    /// Height in metres.
    public var heightM: Double?
    /// Top speed in km/h.
    public var speedKmh: Double?
    /// Track length in metres.
    public var lengthM: Double?
    public var inversions: Int?
    public var manufacturer: String?
    public var model: String?
    /// Year opened.
    public var opened: Int?
    /// Track material (`steel`, `wood`…).
    public var material: String?
    /// Where the figures come from (e.g. `wikipedia`).
    public var source: String?

    public init(
        heightM: Double? = nil, speedKmh: Double? = nil, lengthM: Double? = nil, inversions: Int? = nil,
        manufacturer: String? = nil, model: String? = nil, opened: Int? = nil, material: String? = nil,
        source: String? = nil
    ) {
        self.heightM = heightM
        self.speedKmh = speedKmh
        self.lengthM = lengthM
        self.inversions = inversions
        self.manufacturer = manufacturer
        self.model = model
        self.opened = opened
        self.material = material
        self.source = source
    }

    public var isEmpty: Bool { self == RideStats() }

    /// These figures, each one missing taken from `other`: how a catalogue entry and a park
    /// file's ride of the same coaster make one record (neither source has every figure).
    public func filled(from other: RideStats) -> RideStats {
        RideStats(heightM: self.heightM ?? other.heightM, speedKmh: self.speedKmh ?? other.speedKmh, lengthM: self.lengthM ?? other.lengthM,
                  inversions: self.inversions ?? other.inversions, manufacturer: self.manufacturer ?? other.manufacturer,
                  model: self.model ?? other.model, opened: self.opened ?? other.opened, material: self.material ?? other.material,
                  source: self.source ?? other.source)
    }
}

/// A park: its boundary is the geofence that check-ins are validated against.
public struct Park: Hashable, Sendable {
    public var id: ParkID
    public var name: String
    /// IANA time zone identifier, e.g. `America/New_York`.
    public var timeZone: String
    /// Attribution the data's licence requires, shown with the park.
    public var attribution: String?
    /// Boundary, SRID 4326.
    public var boundary: MultiPolygon

    public init(id: ParkID, name: String, timeZone: String, attribution: String?, boundary: MultiPolygon) {
        self.id = id
        self.name = name
        self.timeZone = timeZone
        self.attribution = attribution
        self.boundary = boundary
    }
}

/// An area inside a park.
public struct Zone: Hashable, Sendable {
    public var id: ZoneID
    public var park: ParkID
    public var kind: ZoneKind
    public var name: String
    /// The ride this zone belongs to (ride and queue zones).
    public var ride: RideID?
    /// What a place is (``PlaceCategory``'s raw value, `food`, `restroom`…), for `poi` zones only.
    public var category: String?
    /// Area, SRID 4326, inside the park's boundary.
    public var area: MultiPolygon
    /// Where the place is, for ride and poi zones: the point the park file gave (a MultiPoint's
    /// first, a ride's station), or its `position`; `nil` for one drawn as an area without one,
    /// whose place is then its area's centroid (``ParkPlaces``). SRID 4326.
    public var position: Coordinate?
    /// The land a poi is filed under, when the park file says (a ride's is ``Ride/land``).
    public var land: String?

    public init(id: ZoneID, park: ParkID, kind: ZoneKind, name: String, ride: RideID?, category: String? = nil, area: MultiPolygon,
                position: Coordinate? = nil, land: String? = nil) {
        self.id = id
        self.park = park
        self.kind = kind
        self.name = name
        self.ride = ride
        self.category = category
        self.area = area
        self.position = position
        self.land = land
    }
}

/// An attraction of a park.
public struct Ride: Hashable, Sendable {
    public var id: RideID
    public var park: ParkID
    public var name: String
    public var type: RideType
    public var status: RideStatus
    /// Name of the land it stands in, when known.
    public var land: String?
    /// Minimum rider height, centimetres.
    public var minHeightCm: Int?
    /// Minimum height to ride without an adult, centimetres.
    public var aloneHeightCm: Int?
    /// Maximum rider height, centimetres.
    public var maxHeightCm: Int?
    /// Seconds from one boarding to the next possible one (park file `cycle_s`).
    public var cycleSeconds: Int?
    /// A remark the park file carries, e.g. why a ride is closed.
    public var note: String?
    public var stats: RideStats

    public init(
        id: RideID, park: ParkID, name: String, type: RideType, status: RideStatus, land: String? = nil,
        minHeightCm: Int? = nil, aloneHeightCm: Int? = nil, maxHeightCm: Int? = nil, cycleSeconds: Int? = nil,
        note: String? = nil, stats: RideStats = RideStats()
    ) {
        self.cycleSeconds = cycleSeconds
        self.aloneHeightCm = aloneHeightCm
        self.note = note
        self.id = id
        self.park = park
        self.name = name
        self.type = type
        self.status = status
        self.land = land
        self.minHeightCm = minHeightCm
        self.maxHeightCm = maxHeightCm
        self.stats = stats
    }
}

/// Everything one park file defines, validated: what an import writes, whole or not at all.
public struct ParkDefinition: Hashable, Sendable {
    public var park: Park
    public var zones: [Zone]
    public var rides: [Ride]

    public init(park: Park, zones: [Zone], rides: [Ride]) {
        self.park = park
        self.zones = zones
        self.rides = rides
    }
}
