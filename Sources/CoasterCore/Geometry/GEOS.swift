import CGEOS

/// A failure reported by GEOS, with the message its error handler captured.
public struct GEOSError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { "GEOS: \(self.message)" }
}

/// Collects the last message of a context's error handler.
private final class GEOSMessageBox {
    var last: String?
}

private let geosMessageHandler: GEOSMessageHandler_r = { message, userdata in
    guard let userdata, let message else { return }
    Unmanaged<GEOSMessageBox>.fromOpaque(userdata).takeUnretainedValue().last = String(cString: message)
}

/// One GEOS context (reentrant API) and the geometries made in it.
///
/// Not Sendable: GEOS contexts, geometries and prepared geometries (which build their index lazily
/// on first use) must be used by one thread at a time. Share them behind a lock, or give each
/// thread its own context.
public final class GEOSContext {
    let handle: GEOSContextHandle_t
    private let messages = GEOSMessageBox()

    public init() {
        // GEOS_init_r only fails when malloc does; there is nothing useful to do then.
        self.handle = GEOS_init_r()
        GEOSContext_setErrorMessageHandler_r(
            self.handle, geosMessageHandler, Unmanaged.passUnretained(self.messages).toOpaque())
    }

    deinit {
        GEOS_finish_r(self.handle)
    }

    /// The GEOS library version, for diagnostics.
    public static var version: String { String(cString: GEOSversion()) }

    func error(_ fallback: String) -> GEOSError {
        defer { self.messages.last = nil }
        return GEOSError(message: self.messages.last ?? fallback)
    }

    func clearError() {
        self.messages.last = nil
    }

    /// A point geometry at `c` (x = lon, y = lat).
    public func point(_ c: Coordinate) throws(GEOSError) -> GEOSGeometry {
        guard let raw = GEOSGeom_createPointFromXY_r(self.handle, c.lon, c.lat) else {
            throw self.error("could not create a point")
        }
        return GEOSGeometry(context: self, raw: raw)
    }

    /// A MULTIPOLYGON geometry from value data. Rings must be closed with at least four positions.
    public func geometry(_ multiPolygon: MultiPolygon) throws(GEOSError) -> GEOSGeometry {
        var parts: [OpaquePointer?] = []
        do {
            for polygon in multiPolygon.polygons {
                parts.append(try self.makePolygon(polygon))
            }
        } catch {
            for part in parts { GEOSGeom_destroy_r(self.handle, part) }
            throw error
        }
        let raw = parts.withUnsafeMutableBufferPointer {
            GEOSGeom_createCollection_r(self.handle, Int32(GEOS_MULTIPOLYGON.rawValue), $0.baseAddress, UInt32($0.count))
        }
        guard let raw else { throw self.error("could not create a multipolygon") }
        return GEOSGeometry(context: self, raw: raw)
    }

    /// A POLYGON geometry from value data.
    public func geometry(_ polygon: Polygon) throws(GEOSError) -> GEOSGeometry {
        GEOSGeometry(context: self, raw: try self.makePolygon(polygon))
    }

    private func makeRing(_ ring: [Coordinate]) throws(GEOSError) -> OpaquePointer {
        var buffer: [Double] = []
        buffer.reserveCapacity(ring.count * 2)
        for c in ring {
            buffer.append(c.lon)
            buffer.append(c.lat)
        }
        let sequence = buffer.withUnsafeBufferPointer {
            GEOSCoordSeq_copyFromBuffer_r(self.handle, $0.baseAddress, UInt32(ring.count), 0, 0)
        }
        guard let sequence else { throw self.error("could not create a coordinate sequence") }
        // The ring takes ownership of the sequence, on failure too.
        guard let ringGeometry = GEOSGeom_createLinearRing_r(self.handle, sequence) else {
            throw self.error("could not create a ring")
        }
        return ringGeometry
    }

    private func makePolygon(_ polygon: Polygon) throws(GEOSError) -> OpaquePointer {
        guard let exterior = polygon.rings.first else { throw GEOSError(message: "a polygon needs an exterior ring") }
        let shell = try self.makeRing(exterior)
        var holes: [OpaquePointer?] = []
        do {
            for ring in polygon.rings.dropFirst() {
                holes.append(try self.makeRing(ring))
            }
        } catch {
            GEOSGeom_destroy_r(self.handle, shell)
            for hole in holes { GEOSGeom_destroy_r(self.handle, hole) }
            throw error
        }
        let raw = holes.withUnsafeMutableBufferPointer {
            GEOSGeom_createPolygon_r(self.handle, shell, $0.baseAddress, UInt32($0.count))
        }
        guard let raw else { throw self.error("could not create a polygon") }
        return raw
    }
}

/// Why GEOS finds a geometry invalid, and where.
public struct GEOSInvalidity: Hashable, Sendable, CustomStringConvertible {
    /// GEOS's reason, e.g. "Self-intersection" or "Ring Self-intersection".
    public var reason: String
    /// The point GEOS names (x = lon, y = lat), e.g. where two edges cross; `nil` if it names none.
    public var location: Coordinate?

    public init(reason: String, location: Coordinate?) {
        self.reason = reason
        self.location = location
    }

    /// The reason with its place as GEOS's own reason text writes it, lon first: "Self-intersection[-82.68 41.48]".
    public var description: String {
        guard let location else { return self.reason }
        return "\(self.reason)[\(location.lon) \(location.lat)]"
    }
}

/// A geometry owned by one ``GEOSContext``. Not Sendable, for the same reason as its context.
public final class GEOSGeometry {
    public let context: GEOSContext
    let raw: OpaquePointer

    init(context: GEOSContext, raw: OpaquePointer) {
        self.context = context
        self.raw = raw
    }

    deinit {
        GEOSGeom_destroy_r(self.context.handle, self.raw)
    }

    private var handle: GEOSContextHandle_t { self.context.handle }

    /// `nil` when GEOS finds the geometry valid, else its reason ("Self-intersection[-82.68 41.48]").
    public func invalidityReason() throws(GEOSError) -> String? {
        self.context.clearError()
        switch GEOSisValid_r(self.handle, self.raw) {
        case 1: return nil
        case 0:
            guard let reason = GEOSisValidReason_r(self.handle, self.raw) else { return "invalid geometry" }
            defer { GEOSFree_r(self.handle, reason) }
            return String(cString: reason)
        default:
            throw self.context.error("validity check failed")
        }
    }

    /// `nil` when GEOS finds the geometry valid, else why and where (one validity check, where
    /// ``invalidityReason()`` needs two).
    public func invalidity() throws(GEOSError) -> GEOSInvalidity? {
        self.context.clearError()
        var reason: UnsafeMutablePointer<CChar>?
        var location: OpaquePointer?
        let valid = GEOSisValidDetail_r(self.handle, self.raw, 0, &reason, &location)
        // GEOS allocates both only for an invalid geometry; free whatever it gave on every path.
        defer {
            if let reason { GEOSFree_r(self.handle, reason) }
            if let location { GEOSGeom_destroy_r(self.handle, location) }
        }
        switch valid {
        case 1: return nil
        case 0:
            var at: Coordinate?
            if let location, GEOSisEmpty_r(self.handle, location) == 0 {
                var x = 0.0
                var y = 0.0
                if GEOSGeomGetX_r(self.handle, location, &x) == 1, GEOSGeomGetY_r(self.handle, location, &y) == 1,
                   x.isFinite, y.isFinite {
                    at = Coordinate(lat: y, lon: x)
                }
            }
            return GEOSInvalidity(reason: reason.map { String(cString: $0) } ?? "invalid geometry", location: at)
        default:
            throw self.context.error("validity check failed")
        }
    }

    /// Whether no point of `other` lies outside this geometry (boundary points count as inside).
    public func covers(_ other: GEOSGeometry) throws(GEOSError) -> Bool {
        try self.context.predicate(GEOSCovers_r(self.handle, self.raw, other.raw))
    }

    public func intersection(_ other: GEOSGeometry) throws(GEOSError) -> GEOSGeometry {
        guard let raw = GEOSIntersection_r(self.handle, self.raw, other.raw) else {
            throw self.context.error("intersection failed")
        }
        return GEOSGeometry(context: self.context, raw: raw)
    }

    public func difference(_ other: GEOSGeometry) throws(GEOSError) -> GEOSGeometry {
        guard let raw = GEOSDifference_r(self.handle, self.raw, other.raw) else {
            throw self.context.error("difference failed")
        }
        return GEOSGeometry(context: self.context, raw: raw)
    }

    /// Planar distance to `other`, in the units of the coordinates.
    public func distance(_ other: GEOSGeometry) throws(GEOSError) -> Double {
        var distance = 0.0
        guard GEOSDistance_r(self.handle, self.raw, other.raw, &distance) == 1 else { throw self.context.error("distance failed") }
        return distance
    }

    public func union(_ other: GEOSGeometry) throws(GEOSError) -> GEOSGeometry {
        guard let raw = GEOSUnion_r(self.handle, self.raw, other.raw) else {
            throw self.context.error("union failed")
        }
        return GEOSGeometry(context: self.context, raw: raw)
    }

    /// The boundary (rings as lines) of an area.
    public func boundary() throws(GEOSError) -> GEOSGeometry {
        guard let raw = GEOSBoundary_r(self.handle, self.raw) else { throw self.context.error("boundary failed") }
        return GEOSGeometry(context: self.context, raw: raw)
    }

    /// Planar area in square degrees: only useful to tell empty from not.
    public func area() throws(GEOSError) -> Double {
        var area = 0.0
        guard GEOSArea_r(self.handle, self.raw, &area) == 1 else { throw self.context.error("area failed") }
        return area
    }

    public var isEmpty: Bool { GEOSisEmpty_r(self.handle, self.raw) == 1 }

    /// The polygonal parts of this geometry as value data (points and lines are dropped).
    public func polygons() throws(GEOSError) -> MultiPolygon {
        var out: [Polygon] = []
        try self.collectPolygons(self.raw, into: &out)
        return MultiPolygon(polygons: out)
    }

    private func collectPolygons(_ geometry: OpaquePointer, into out: inout [Polygon]) throws(GEOSError) {
        let type = GEOSGeomTypeId_r(self.handle, geometry)
        switch type {
        case Int32(GEOS_POLYGON.rawValue):
            if GEOSisEmpty_r(self.handle, geometry) == 1 { return }
            guard let shell = GEOSGetExteriorRing_r(self.handle, geometry) else {
                throw self.context.error("polygon without exterior ring")
            }
            var rings = [try self.coordinates(shell)]
            let holes = GEOSGetNumInteriorRings_r(self.handle, geometry)
            if holes > 0 {
                for i in 0..<holes {
                    guard let hole = GEOSGetInteriorRingN_r(self.handle, geometry, i) else {
                        throw self.context.error("missing interior ring")
                    }
                    rings.append(try self.coordinates(hole))
                }
            }
            out.append(Polygon(rings: rings))
        case Int32(GEOS_MULTIPOLYGON.rawValue), Int32(GEOS_GEOMETRYCOLLECTION.rawValue):
            let n = GEOSGetNumGeometries_r(self.handle, geometry)
            if n > 0 {
                for i in 0..<n {
                    guard let part = GEOSGetGeometryN_r(self.handle, geometry, i) else {
                        throw self.context.error("missing part")
                    }
                    try self.collectPolygons(part, into: &out)
                }
            }
        default:
            return
        }
    }

    private func coordinates(_ ring: OpaquePointer) throws(GEOSError) -> [Coordinate] {
        guard let sequence = GEOSGeom_getCoordSeq_r(self.handle, ring) else {
            throw self.context.error("ring without coordinates")
        }
        var size: UInt32 = 0
        guard GEOSCoordSeq_getSize_r(self.handle, sequence, &size) != 0 else { throw self.context.error("size failed") }
        var buffer = [Double](repeating: 0, count: Int(size) * 2)
        let ok = buffer.withUnsafeMutableBufferPointer {
            GEOSCoordSeq_copyToBuffer_r(self.handle, sequence, $0.baseAddress, 0, 0)
        }
        guard ok != 0 else { throw self.context.error("copy failed") }
        return (0..<Int(size)).map { Coordinate(lat: buffer[2 * $0 + 1], lon: buffer[2 * $0]) }
    }

    /// A prepared form of this geometry for fast repeated predicates.
    public func prepared() throws(GEOSError) -> GEOSPreparedGeometry {
        guard let prepared = GEOSPrepare_r(self.handle, self.raw) else {
            throw self.context.error("prepare failed")
        }
        return GEOSPreparedGeometry(base: self, raw: prepared)
    }
}

/// A prepared geometry: an index over its edges, built lazily on first use (so it mutates:
/// one thread at a time). Keeps its base geometry alive, as GEOS requires.
public final class GEOSPreparedGeometry {
    public let base: GEOSGeometry
    let raw: OpaquePointer

    init(base: GEOSGeometry, raw: OpaquePointer) {
        self.base = base
        self.raw = raw
    }

    deinit {
        GEOSPreparedGeom_destroy_r(self.base.context.handle, self.raw)
    }

    private var context: GEOSContext { self.base.context }

    /// No point of `other` outside this geometry; boundary counts as inside.
    public func covers(_ other: GEOSGeometry) throws(GEOSError) -> Bool {
        try self.context.predicate(GEOSPreparedCovers_r(self.context.handle, self.raw, other.raw))
    }

    /// `other` lies in this geometry's interior, touching the boundary at most from inside.
    public func contains(_ other: GEOSGeometry) throws(GEOSError) -> Bool {
        try self.context.predicate(GEOSPreparedContains_r(self.context.handle, self.raw, other.raw))
    }

    public func intersects(_ other: GEOSGeometry) throws(GEOSError) -> Bool {
        try self.context.predicate(GEOSPreparedIntersects_r(self.context.handle, self.raw, other.raw))
    }

    /// Planar distance to `other`, in the units of the coordinates (degrees for stored areas).
    public func distance(to other: GEOSGeometry) throws(GEOSError) -> Double {
        var distance = 0.0
        guard GEOSPreparedDistance_r(self.context.handle, self.raw, other.raw, &distance) == 1 else {
            throw self.context.error("prepared distance failed")
        }
        return distance
    }
}

extension GEOSContext {
    /// GEOS predicates answer 1 (true), 0 (false) or 2 (exception): never let 2 pass as true.
    func predicate(_ result: CChar) throws(GEOSError) -> Bool {
        switch result {
        case 1: return true
        case 0: return false
        default: throw self.error("predicate failed")
        }
    }
}
