/// A WGS84 position (SRID 4326) in degrees.
///
/// Swift code names the fields; wherever a pair crosses an API as an array (GeoJSON, WKB, GEOS)
/// the order is **lon, lat**.
public struct Coordinate: Hashable, Sendable, Codable, CustomStringConvertible {
    /// Latitude in degrees, −90…90.
    public var lat: Double
    /// Longitude in degrees, −180…180.
    public var lon: Double

    public init(lat: Double, lon: Double) {
        self.lat = lat
        self.lon = lon
    }

    /// Whether both values are finite and inside the WGS84 ranges (−90…90, −180…180).
    public var isValid: Bool {
        self.lat.isFinite && self.lon.isFinite && (-90...90).contains(self.lat) && (-180...180).contains(self.lon)
    }

    public var description: String { "(\(self.lat), \(self.lon))" }
}

/// Why a coordinate was refused; `field` names which half was wrong.
public enum CoordinateProblem: Error, Equatable, Sendable, CustomStringConvertible {
    case notFinite(field: String)
    case outOfRange(field: String, value: Double)

    public var field: String {
        switch self {
        case .notFinite(let field), .outOfRange(let field, _): field
        }
    }

    public var description: String {
        switch self {
        case .notFinite(let field): "\(field) must be a finite number"
        case .outOfRange(let field, let value):
            field == "lat"
                ? "lat \(value) is outside −90…90" : "lon \(value) is outside −180…180"
        }
    }
}

extension Coordinate {
    /// Checks a coordinate, naming the first half that is wrong (latitude first).
    public static func validated(lat: Double, lon: Double) throws(CoordinateProblem) -> Coordinate {
        guard lat.isFinite else { throw .notFinite(field: "lat") }
        guard lon.isFinite else { throw .notFinite(field: "lon") }
        guard (-90...90).contains(lat) else { throw .outOfRange(field: "lat", value: lat) }
        guard (-180...180).contains(lon) else { throw .outOfRange(field: "lon", value: lon) }
        return Coordinate(lat: lat, lon: lon)
    }
}

/// An axis-aligned box in degrees (lon = x, lat = y).
public struct BoundingBox: Hashable, Sendable {
    public var minLon: Double
    public var minLat: Double
    public var maxLon: Double
    public var maxLat: Double

    public init(minLon: Double, minLat: Double, maxLon: Double, maxLat: Double) {
        self.minLon = minLon
        self.minLat = minLat
        self.maxLon = maxLon
        self.maxLat = maxLat
    }

    /// The smallest box holding every coordinate; `nil` for none.
    public init?(_ coordinates: some Sequence<Coordinate>) {
        var iterator = coordinates.makeIterator()
        guard let first = iterator.next() else { return nil }
        var box = BoundingBox(minLon: first.lon, minLat: first.lat, maxLon: first.lon, maxLat: first.lat)
        while let c = iterator.next() { box.extend(c) }
        self = box
    }

    public mutating func extend(_ c: Coordinate) {
        self.minLon = Swift.min(self.minLon, c.lon)
        self.maxLon = Swift.max(self.maxLon, c.lon)
        self.minLat = Swift.min(self.minLat, c.lat)
        self.maxLat = Swift.max(self.maxLat, c.lat)
    }

    public func union(_ other: BoundingBox) -> BoundingBox {
        BoundingBox(
            minLon: Swift.min(self.minLon, other.minLon), minLat: Swift.min(self.minLat, other.minLat),
            maxLon: Swift.max(self.maxLon, other.maxLon), maxLat: Swift.max(self.maxLat, other.maxLat))
    }

    public func contains(_ c: Coordinate) -> Bool {
        c.lon >= self.minLon && c.lon <= self.maxLon && c.lat >= self.minLat && c.lat <= self.maxLat
    }

    public func intersects(_ other: BoundingBox) -> Bool {
        other.minLon <= self.maxLon && other.maxLon >= self.minLon && other.minLat <= self.maxLat
            && other.maxLat >= self.minLat
    }

    public var center: Coordinate {
        Coordinate(lat: (self.minLat + self.maxLat) / 2, lon: (self.minLon + self.maxLon) / 2)
    }
}
