import CoasterCore
import Foundation
import PostgresNIO

/// A park's density map (``DensityStore``): three statements on one snapshot, as the SpatiaLite
/// store's (``SpatiaLiteStore/densityCells``).
extension PostgresStore: DensityStore {
    public func density(of park: ParkID, on day: CalendarDay, before: Date, rules: DensityRules) async throws -> ParkDensity? {
        try await self.read { tx in
            guard let row = try await tx.first("""
                SELECT time_zone, ST_XMin(boundary), ST_YMin(boundary), ST_XMax(boundary), ST_YMax(boundary) FROM parks WHERE id = \(park.rawValue)
                """) else { return nil }
            let (timeZone, minX, minY, maxX, maxY) = try row.decode((String, Double, Double, Double, Double).self)
            let bounds = BoundingBox(minLon: minX, minLat: minY, maxLon: maxX, maxLat: maxY)
            let plan = try DensityPlan(park: park, day: day, timeZone: timeZone, bounds: bounds, before: before, rules: rules)
            let (from, end) = (plan.from, plan.end)
            let cutoff = try await tx.first("""
                SELECT recorded_at FROM fixes WHERE recorded_at >= \(from) AND recorded_at < \(end)
                ORDER BY recorded_at LIMIT 1 OFFSET \(rules.maximumFixesRead)
                """).map { try $0.decode(Double.self) }
            let until = cutoff ?? end
            let (south, north, west, east) = (plan.box.minLat, plan.box.maxLat, plan.box.minLon, plan.box.maxLon)
            let (dlat, dlon) = (plan.grid.latitudeStep, plan.grid.longitudeStep)
            let (before, after) = (rules.checkinFixBefore, rules.checkinFixAfter)
            let k = Int64(rules.minimumPeople)
            let rows = try await tx.rows("""
                WITH points AS (
                    SELECT user_id, lat, lon, 0 AS checkin FROM fixes
                    WHERE recorded_at >= \(from) AND recorded_at < \(until)
                      AND lat BETWEEN \(south) AND \(north) AND lon BETWEEN \(west) AND \(east)
                    UNION ALL
                    SELECT v.user_id, f.lat, f.lon, 1 FROM visits v CROSS JOIN LATERAL (
                        SELECT lat, lon FROM fixes
                        WHERE user_id = v.user_id AND recorded_at BETWEEN v.entered_at - \(before) AND v.entered_at + \(after)
                        ORDER BY recorded_at DESC LIMIT 1) f
                    WHERE v.park_id = \(park.rawValue) AND v.how = 'explicit' AND v.entered_at >= \(from) AND v.entered_at < \(until)
                      AND f.lat BETWEEN \(south) AND \(north) AND f.lon BETWEEN \(west) AND \(east)
                ),
                cells AS MATERIALIZED (
                    SELECT floor((lat + 90) / \(dlat))::bigint AS row, floor((lon + 180) / \(dlon))::bigint AS col,
                           count(*) FILTER (WHERE checkin = 0) AS fixes, count(*) FILTER (WHERE checkin = 1) AS checkins,
                           count(DISTINCT user_id) AS people
                    FROM points GROUP BY 1, 2
                )
                SELECT c.row, c.col, c.fixes, c.checkins, c.people FROM cells c JOIN parks p ON p.id = \(park.rawValue)
                WHERE c.people >= \(k)
                  AND ST_Intersects(p.boundary, ST_MakeEnvelope(c.col * \(dlon) - 180, c.row * \(dlat) - 90,
                                                                (c.col + 1) * \(dlon) - 180, (c.row + 1) * \(dlat) - 90, 4326))
                ORDER BY c.people DESC, c.fixes DESC, c.row, c.col LIMIT \(Int64(rules.maximumCells + 1))
                """).map { row in
                let (r, c, fixes, checkins, people) = try row.decode((Int64, Int64, Int64, Int64, Int64).self)
                return (row: r, column: c, fixes: fixes, checkins: checkins, people: people)
            }
            return plan.answer(rows: rows, readUntil: until)
        }
    }
}
