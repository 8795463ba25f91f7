import CProj
import Foundation

/// Distances and circles on the WGS84 ellipsoid, in metres.
///
/// Distances come from PROJ's implementation of Karney's geodesic algorithms (`geodesic.h`), which
/// is what GeographicLib computes; nothing here is planar degrees.
public enum Geodesy {
    /// WGS84 semi-major axis, metres.
    public static let semiMajorAxis = 6_378_137.0
    /// WGS84 flattening.
    public static let flattening = 1 / 298.257_223_563

    private static let ellipsoid: geod_geodesic = {
        var g = geod_geodesic()
        geod_init(&g, semiMajorAxis, flattening)
        return g
    }()

    /// Geodesic distance between two positions, metres.
    public static func distance(_ a: Coordinate, _ b: Coordinate) -> Double {
        var s12 = 0.0
        var azi1 = 0.0
        var azi2 = 0.0
        withUnsafePointer(to: ellipsoid) { g in
            geod_inverse(g, a.lat, a.lon, b.lat, b.lon, &s12, &azi1, &azi2)
        }
        return s12
    }

    /// Geodesic distance (metres) from `a` to `b` and the initial azimuth of the geodesic at `a`
    /// (degrees clockwise from north, −180…180): GeographicLib's `Inverse`, `s12` and `azi1`.
    public static func inverse(_ a: Coordinate, _ b: Coordinate) -> (distance: Double, azimuth: Double) {
        var s12 = 0.0
        var azi1 = 0.0
        var azi2 = 0.0
        withUnsafePointer(to: ellipsoid) { g in
            geod_inverse(g, a.lat, a.lon, b.lat, b.lon, &s12, &azi1, &azi2)
        }
        return (s12, azi1)
    }

    /// Distance between two nearby positions on the ellipsoid's local plane: latitude and longitude
    /// differences scaled by the meridian and prime-vertical radii of curvature at the mean
    /// latitude. A few multiplications and a square root instead of Karney's series; `nil` when the
    /// positions are not near enough for ``localDistanceTolerance(_:)`` to hold (over
    /// ``localDistanceReach`` apart, across the antimeridian, or near a pole).
    ///
    /// `GeodesyTests.localDistanceStaysWithinItsTolerance` measures the error against ``distance(_:_:)``.
    /// Many distances from one position: ``LocalDistances``.
    @inline(__always)
    public static func localDistance(_ a: Coordinate, _ b: Coordinate) -> Double? {
        LocalDistances(from: a).to(b)
    }

    /// ``localDistance(_:_:)`` from one position to many: the sine and cosine of its latitude are
    /// worked out once, and each distance takes those of the mean latitude from them with the
    /// angle-sum formulas. Positions it answers for are under 0.1° apart, so the mean latitude is
    /// under 0.05° (9e-4 radians) away, where the first terms of the sine and cosine series are exact
    /// to double precision (the next term is under 1e-21): the same distance as two calls to the
    /// maths library per pair, without them (a nearby query computes one per friend).
    public struct LocalDistances: Sendable {
        public let center: Coordinate
        private let sinLatitude: Double
        private let cosLatitude: Double
        /// ``Geodesy/eccentricitySquared``, read once: a lazily made global is a check per read.
        private let e2: Double

        public init(from center: Coordinate) {
            self.center = center
            let phi = center.lat * .pi / 180
            self.sinLatitude = sin(phi)
            self.cosLatitude = cos(phi)
            self.e2 = eccentricitySquared
        }

        /// ``localDistance(_:_:)`` from the centre to `b`.
        @inline(__always)
        public func to(_ b: Coordinate) -> Double? {
            let a = self.center
            let dLat = b.lat - a.lat
            let dLon = b.lon - a.lon
            // ~0.1° is ~11 km of latitude: anything farther is not "local".
            guard abs(dLat) < 0.1, abs(dLon) < 0.1, abs(a.lat) < 80 else { return nil }
            // A nearby query works this out for every friend, and divisions are slow (each as long
            // as a dozen multiplications): the constant factors below are folded at compile time,
            // and one division is left.
            let radians = Double.pi / 180
            // sin and cos of the mean latitude, center.lat + h.
            let h = dLat * (0.5 * radians)
            let h2 = h * h
            let sinH = h * (1 - h2 * (1.0 / 6) * (1 - h2 * (1.0 / 20)))
            let cosH = 1 - h2 * 0.5 * (1 - h2 * (1.0 / 12))
            let s = self.sinLatitude * cosH + self.cosLatitude * sinH
            let c = self.cosLatitude * cosH - self.sinLatitude * sinH
            let w2 = 1 - self.e2 * s * s
            let inverseW = 1 / w2.squareRoot()
            let n = semiMajorAxis * inverseW
            let m = n * (1 - self.e2) * inverseW * inverseW
            let dy = dLat * radians * m
            let dx = dLon * radians * n * c
            let d = (dx * dx + dy * dy).squareRoot()
            return d <= localDistanceReach ? d : nil
        }

        /// ``to(_:)`` for four points at once, the same operations in the same order lane by lane
        /// (so the same bits), with the lanes ``to(_:)`` answers `nil` for marked false in `valid`.
        @inline(__always)
        func to(lat: SIMD4<Double>, lon: SIMD4<Double>) -> (d: SIMD4<Double>, valid: SIMDMask<SIMD4<Int64>>) {
            typealias V = SIMD4<Double>
            let a = self.center
            let radians = Double.pi / 180
            let one = V(repeating: 1)
            let dLat: V = lat - a.lat
            let dLon: V = lon - a.lon
            let h: V = dLat * (0.5 * radians)
            let h2: V = h * h
            let sinInner: V = one - h2 * (1.0 / 20)
            let sinH: V = h * (one - h2 * (1.0 / 6) * sinInner)
            let cosInner: V = one - h2 * (1.0 / 12)
            let cosH: V = one - h2 * 0.5 * cosInner
            let s: V = self.sinLatitude * cosH + self.cosLatitude * sinH
            let c: V = self.cosLatitude * cosH - self.sinLatitude * sinH
            let w2: V = one - self.e2 * s * s
            let inverseW: V = one / w2.squareRoot()
            let n: V = semiMajorAxis * inverseW
            let m: V = n * (1 - self.e2) * inverseW * inverseW
            let dy: V = dLat * radians * m
            let dx: V = dLon * radians * n * c
            let d2: V = dx * dx + dy * dy
            let d: V = d2.squareRoot()
            // |x| < 0.1, as the scalar guard (false for NaN either way).
            let near = (dLat .< 0.1) .& (dLat .> -0.1) .& (dLon .< 0.1) .& (dLon .> -0.1)
            var valid = near .& (d .<= localDistanceReach)
            if !(Swift.abs(a.lat) < 80) { valid = SIMDMask(repeating: false) }
            return (d, valid)
        }
    }

    /// The farthest apart ``localDistance(_:_:)`` answers for, metres.
    public static let localDistanceReach = 6_000.0

    /// How far (metres) ``localDistance(_:_:)`` may be from the geodesic distance for positions
    /// `d` metres apart. The plane's error grows with the square of the distance; over 200,000
    /// random pairs it was at most 0.004 mm at 500 m, 0.63 mm at 3 km and 1.8 mm at 6 km, about
    /// half this bound at worst (GeodesyTests draws new pairs on every run).
    public static func localDistanceTolerance(_ d: Double) -> Double {
        1e-6 + 1.5e-10 * d * d
    }

    /// The same for four distances, lane by lane the same bits.
    @inline(__always)
    static func localDistanceTolerance(_ d: SIMD4<Double>) -> SIMD4<Double> {
        1e-6 + 1.5e-10 * d * d
    }

    static let eccentricitySquared = flattening * (2 - flattening)

    /// The position `distance` metres from `start` along the geodesic with initial `azimuth`
    /// (degrees clockwise from north).
    public static func destination(from start: Coordinate, azimuth: Double, distance: Double) -> Coordinate {
        var lat = 0.0
        var lon = 0.0
        var azi2 = 0.0
        withUnsafePointer(to: ellipsoid) { g in
            geod_direct(g, start.lat, start.lon, azimuth, distance, &lat, &lon, &azi2)
        }
        return Coordinate(lat: lat, lon: normalizedLongitude(lon))
    }

    /// A closed ring of `segments` geodesic destinations around `center` at `radius` metres.
    /// Exact on the ellipsoid; used where a circle becomes stored geometry (buffered ride points).
    public static func geodesicCircle(center: Coordinate, radius: Double, segments: Int = 32) -> [Coordinate] {
        var ring = (0..<segments).map { i in
            destination(from: center, azimuth: 360 * Double(i) / Double(segments), distance: radius)
        }
        ring.append(ring[0])
        return ring
    }

    /// A closed polygon ring that *contains* the circle of `radius` metres around `center`.
    ///
    /// Cheap enough for every request: an ellipse in degrees from the ellipsoid's radii of curvature
    /// at the centre (error of order (r/R)², under a millimetre at 5 km), with the radius scaled by
    /// 1/cos(π/n) so that the polygon circumscribes the circle rather than cutting inside it.
    public static func circumscribedCircle(center: Coordinate, radius: Double, segments: Int = 32) -> [Coordinate] {
        let (dLat, dLon) = degreesPerMetre(at: center.lat)
        let r = radius / cos(Double.pi / Double(segments))
        var ring: [Coordinate] = []
        ring.reserveCapacity(segments + 1)
        for i in 0..<segments {
            let theta = 2 * Double.pi * Double(i) / Double(segments)
            ring.append(Coordinate(lat: center.lat + r * cos(theta) * dLat, lon: center.lon + r * sin(theta) * dLon))
        }
        ring.append(ring[0])
        return ring
    }

    /// Degrees of latitude and of longitude per metre at a latitude (meridional and
    /// prime-vertical radii of curvature). Near the poles the longitude figure is capped.
    public static func degreesPerMetre(at latitude: Double) -> (lat: Double, lon: Double) {
        let e2 = flattening * (2 - flattening)
        let phi = max(-89.9, min(89.9, latitude)) * Double.pi / 180
        let s = sin(phi)
        let w = (1 - e2 * s * s).squareRoot()
        let meridional = semiMajorAxis * (1 - e2) / (w * w * w)
        let primeVertical = semiMajorAxis / w
        let radToDeg = 180 / Double.pi
        return (radToDeg / meridional, radToDeg / (primeVertical * cos(phi)))
    }

    /// A box in degrees holding every point within `radius` metres of `center`.
    public static func boundingBox(center: Coordinate, radius: Double) -> BoundingBox {
        let (dLat, dLon) = degreesPerMetre(at: center.lat)
        // 1% margin covers the ellipse approximation and the circumscribed polygon.
        let r = radius * 1.01
        return BoundingBox(
            minLon: center.lon - r * dLon, minLat: center.lat - r * dLat,
            maxLon: center.lon + r * dLon, maxLat: center.lat + r * dLat)
    }

    /// A local plane around `origin`: metres east (x) and north (y), from the radii of curvature at
    /// the origin. Within a few kilometres (a park) distances agree with the ellipsoid to well under
    /// 0.1 %, which is what geometric checks in metres need.
    public struct LocalPlane: Sendable {
        public let origin: Coordinate
        private let metresPerDegreeLat: Double
        private let metresPerDegreeLon: Double

        public init(origin: Coordinate) {
            self.origin = origin
            let (dLat, dLon) = Geodesy.degreesPerMetre(at: origin.lat)
            self.metresPerDegreeLat = 1 / dLat
            self.metresPerDegreeLon = 1 / dLon
        }

        /// (east, north) in metres.
        public func project(_ c: Coordinate) -> (x: Double, y: Double) {
            ((c.lon - self.origin.lon) * self.metresPerDegreeLon, (c.lat - self.origin.lat) * self.metresPerDegreeLat)
        }

        /// The position at (east, north) metres from the origin: the inverse of ``project(_:)-(Coordinate)``.
        public func unproject(x: Double, y: Double) -> Coordinate {
            Coordinate(lat: self.origin.lat + y / self.metresPerDegreeLat, lon: self.origin.lon + x / self.metresPerDegreeLon)
        }

        /// `area` with (east, north) metres in the lon/lat slots: GEOS only sees numbers, so its
        /// distances and areas over the result are metres.
        public func project(_ area: MultiPolygon) -> MultiPolygon {
            MultiPolygon(polygons: area.polygons.map { p in
                Polygon(rings: p.rings.map { ring in ring.map { c in
                    let (x, y) = self.project(c)
                    return Coordinate(lat: y, lon: x)
                } })
            })
        }
    }

    /// Longitude folded into −180…180.
    public static func normalizedLongitude(_ lon: Double) -> Double {
        var x = lon.truncatingRemainder(dividingBy: 360)
        if x > 180 { x -= 360 }
        if x < -180 { x += 360 }
        return x
    }
}
