/// Well-known binary (OGC simple features, 2D) for the geometries the store keeps.
///
/// The store hands SpatiaLite WKB (`GeomFromWKB(?, 4326)`) and reads it back with `AsBinary`.
/// Positions are written x = lon, y = lat.
public enum WKB {
    public enum DecodingError: Error, Equatable, Sendable {
        case truncated
        case unsupportedType(UInt32)
        case badByteOrder(UInt8)
        case tooLarge
    }

    /// Little-endian WKB of a MULTIPOLYGON.
    public static func encode(_ multiPolygon: MultiPolygon) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(9 + multiPolygon.vertexCount * 16 + multiPolygon.polygons.count * 13)
        out.append(1)
        append(UInt32(6), to: &out)
        append(UInt32(multiPolygon.polygons.count), to: &out)
        for polygon in multiPolygon.polygons {
            out.append(1)
            append(UInt32(3), to: &out)
            append(UInt32(polygon.rings.count), to: &out)
            for ring in polygon.rings {
                append(UInt32(ring.count), to: &out)
                for c in ring {
                    append(c.lon.bitPattern, to: &out)
                    append(c.lat.bitPattern, to: &out)
                }
            }
        }
        return out
    }

    /// Reads a POLYGON or MULTIPOLYGON (either byte order) as a MultiPolygon.
    public static func decodeMultiPolygon(_ bytes: [UInt8]) throws(DecodingError) -> MultiPolygon {
        var reader = Reader(bytes: bytes)
        let (type, little) = try reader.header()
        switch type {
        case 3:
            return MultiPolygon(polygons: [try reader.polygonBody(little: little)])
        case 6:
            let count = try reader.count(little: little, minimumBytesEach: 9)
            var polygons: [Polygon] = []
            polygons.reserveCapacity(count)
            for _ in 0..<count {
                let (inner, innerLittle) = try reader.header()
                guard inner == 3 else { throw .unsupportedType(inner) }
                polygons.append(try reader.polygonBody(little: innerLittle))
            }
            return MultiPolygon(polygons: polygons)
        default:
            throw .unsupportedType(type)
        }
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to out: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { out.append(contentsOf: $0) }
    }

    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        mutating func byte() throws(DecodingError) -> UInt8 {
            guard self.offset < self.bytes.count else { throw .truncated }
            defer { self.offset += 1 }
            return self.bytes[self.offset]
        }

        mutating func uint32(little: Bool) throws(DecodingError) -> UInt32 {
            guard self.offset + 4 <= self.bytes.count else { throw .truncated }
            var value: UInt32 = 0
            for i in 0..<4 {
                let b = UInt32(self.bytes[self.offset + (little ? i : 3 - i)])
                value |= b << (8 * UInt32(i))
            }
            self.offset += 4
            return value
        }

        mutating func double(little: Bool) throws(DecodingError) -> Double {
            guard self.offset + 8 <= self.bytes.count else { throw .truncated }
            var value: UInt64 = 0
            for i in 0..<8 {
                let b = UInt64(self.bytes[self.offset + (little ? i : 7 - i)])
                value |= b << (8 * UInt64(i))
            }
            self.offset += 8
            return Double(bitPattern: value)
        }

        mutating func header() throws(DecodingError) -> (UInt32, Bool) {
            let order = try self.byte()
            guard order <= 1 else { throw .badByteOrder(order) }
            let little = order == 1
            return (try self.uint32(little: little), little)
        }

        /// A count that the remaining bytes can actually hold, so garbage cannot ask for gigabytes.
        mutating func count(little: Bool, minimumBytesEach: Int) throws(DecodingError) -> Int {
            let n = Int(try self.uint32(little: little))
            guard n <= (self.bytes.count - self.offset) / minimumBytesEach else { throw .tooLarge }
            return n
        }

        mutating func polygonBody(little: Bool) throws(DecodingError) -> Polygon {
            let ringCount = try self.count(little: little, minimumBytesEach: 4)
            var rings: [[Coordinate]] = []
            rings.reserveCapacity(ringCount)
            for _ in 0..<ringCount {
                let n = try self.count(little: little, minimumBytesEach: 16)
                var ring: [Coordinate] = []
                ring.reserveCapacity(n)
                for _ in 0..<n {
                    let x = try self.double(little: little)
                    let y = try self.double(little: little)
                    ring.append(Coordinate(lat: y, lon: x))
                }
                rings.append(ring)
            }
            return Polygon(rings: rings)
        }
    }
}
