import CoasterCore
import Foundation

/// Real GPS data (Tests/Fixtures), read without XML or GeoJSON libraries.
enum Traces {
    struct Point {
        var position: Coordinate
        var time: Date
    }

    /// The 118 Google Maps Timeline fixes of one visitor in Disneyland Resort, by time.
    static func disneyland() throws -> [Point] {
        let url = Fixtures.thirdParty.appendingPathComponent("disneyland-anaheim-gps-points/disney-park-visits.geojson")
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any]
        let features = json?["features"] as? [[String: Any]] ?? []
        return features.compactMap { f -> Point? in
            guard let c = (f["geometry"] as? [String: Any])?["coordinates"] as? [Double],
                  let t = (f["properties"] as? [String: Any])?["start_time"] as? String,
                  let date = try? Date(t, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
            else { return nil }
            return Point(position: Coordinate(lat: c[1], lon: c[0]), time: date)
        }.sorted { $0.time < $1.time }
    }

    /// The timed track points of a GPX file from gps-walk-traces-gpxpy.
    static func gpx(_ name: String) throws -> [Point] {
        let text = try String(contentsOf: Fixtures.thirdParty.appendingPathComponent("gps-walk-traces-gpxpy/\(name)"), encoding: .utf8)
        var points: [Point] = []
        var rest = text[...]
        while let start = rest.range(of: "<trkpt ") {
            guard let end = rest.range(of: "</trkpt>", range: start.upperBound..<rest.endIndex) else { break }
            let element = rest[start.lowerBound..<end.upperBound]
            rest = rest[end.upperBound...]
            guard let lat = attribute("lat", element), let lon = attribute("lon", element),
                  let t0 = element.range(of: "<time>"), let t1 = element.range(of: "</time>"),
                  let time = try? Date(String(element[t0.upperBound..<t1.lowerBound]), strategy: .iso8601)
            else { continue }
            points.append(Point(position: Coordinate(lat: lat, lon: lon), time: time))
        }
        return points
    }

    private static func attribute(_ name: String, _ element: Substring) -> Double? {
        guard let r = element.range(of: "\(name)=\"") else { return nil }
        let value = element[r.upperBound...].prefix { $0 != "\"" }
        return Double(value)
    }

    /// Moves a track rigidly so that its centroid lands on `center` (offsets kept in metres).
    static func translated(_ points: [Point], to center: Coordinate) -> [Point] {
        let n = Double(points.count)
        let origin = Coordinate(lat: points.map(\.position.lat).reduce(0, +) / n, lon: points.map(\.position.lon).reduce(0, +) / n)
        let from = Geodesy.degreesPerMetre(at: origin.lat)
        let to = Geodesy.degreesPerMetre(at: center.lat)
        return points.map { p in
            let east = (p.position.lon - origin.lon) / from.lon
            let north = (p.position.lat - origin.lat) / from.lat
            return Point(position: Coordinate(lat: center.lat + north * to.lat, lon: center.lon + east * to.lon), time: p.time)
        }
    }
}
