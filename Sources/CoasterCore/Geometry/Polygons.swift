/// A polygon as value data: the first ring is the exterior, the others are holes.
///
/// Rings are closed (first position equals last), as in GeoJSON and WKB.
public struct Polygon: Hashable, Sendable {
    public var rings: [[Coordinate]]

    public init(rings: [[Coordinate]]) {
        self.rings = rings
    }

    public var exterior: [Coordinate] { self.rings.first ?? [] }
    public var vertexCount: Int { self.rings.reduce(0) { $0 + $1.count } }
}

/// One or more polygons (SpatiaLite MULTIPOLYGON, SRID 4326). Every area in the store is one.
public struct MultiPolygon: Hashable, Sendable {
    public var polygons: [Polygon]

    public init(polygons: [Polygon]) {
        self.polygons = polygons
    }

    public var vertexCount: Int { self.polygons.reduce(0) { $0 + $1.vertexCount } }

    public var boundingBox: BoundingBox? {
        BoundingBox(self.polygons.lazy.flatMap(\.exterior))
    }
}
