import CoasterCore
import Foundation

/// A stored geometry as WKB (SpatiaLite's `AsBinary`, PostGIS's `ST_AsBinary(…, 'NDR')`), read
/// back as the MULTIPOLYGON every geometry column holds.
func storedArea(_ data: Data?, table: String, id: String) throws -> MultiPolygon {
    guard let data, let area = try? WKB.decodeMultiPolygon([UInt8](data)) else {
        throw CorruptGeometry(table: table, id: id)
    }
    return area
}

/// A stored geometry that does not decode: the database was written by something else or is damaged.
struct CorruptGeometry: Error, CustomStringConvertible {
    var table: String
    var id: String
    var description: String { "stored geometry of \(self.table) \(self.id) is not a readable MULTIPOLYGON" }
}
