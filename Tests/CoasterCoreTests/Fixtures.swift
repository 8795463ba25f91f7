import CoasterCore
import Foundation

/// Files of the repository, found from this source file's path.
enum Fixtures {
    static let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let parksDirectory = repoRoot.appendingPathComponent("data/parks")
    /// Third-party datasets copied into the repository (Tests/Fixtures/README.md).
    static let thirdParty = repoRoot.appendingPathComponent("Tests/Fixtures")

    static func data(_ relative: String) throws -> Data {
        try Data(contentsOf: repoRoot.appendingPathComponent(relative))
    }

    static func park(_ name: String) throws -> ParkDefinition {
        try ParkImporter().definition(from: try data("data/parks/\(name).geojson"))
    }

    /// A small valid park file: a 1 km square near the equator with the given extra features.
    static func document(park: [String: Any] = [:], features: [[String: Any]] = []) -> Data {
        var properties: [String: Any] = ["kind": "park", "id": "square", "name": "Square Park", "timezone": "UTC"]
        properties.merge(park) { _, new in new }
        let parkFeature: [String: Any] = [
            "type": "Feature", "properties": properties,
            "geometry": ["type": "Polygon", "coordinates": [square(minLon: 0, minLat: 0, size: 0.01)]],
        ]
        let document: [String: Any] = ["type": "FeatureCollection", "features": [parkFeature] + features]
        return try! JSONSerialization.data(withJSONObject: document)
    }

    /// A closed square ring as GeoJSON positions.
    static func square(minLon: Double, minLat: Double, size: Double) -> [[Double]] {
        [[minLon, minLat], [minLon + size, minLat], [minLon + size, minLat + size], [minLon, minLat + size], [minLon, minLat]]
    }

    static func feature(_ kind: String, _ name: String, id: String? = nil, geometry: Any?, extra: [String: Any] = [:]) -> [String: Any] {
        var properties: [String: Any] = ["kind": kind, "name": name]
        if let id { properties["id"] = id }
        properties.merge(extra) { _, new in new }
        return ["type": "Feature", "properties": properties, "geometry": geometry ?? NSNull()]
    }
}
