import CoasterCore
import Foundation
import GRDB

/// A park's density map (``DensityStore``): three statements in one read (the park, where the
/// day's reading stops, the cells).
extension SpatiaLiteStore: DensityStore {
    public func density(of park: ParkID, on day: CalendarDay, before: Date, rules: DensityRules) async throws -> ParkDensity? {
        try await self.pool.read { db in
            guard let row = try Row.fetchOne(db.cachedStatement(sql: Self.densityPark), arguments: [park.rawValue]) else { return nil }
            let bounds = BoundingBox(minLon: row["min_x"], minLat: row["min_y"], maxLon: row["max_x"], maxLat: row["max_y"])
            let plan = try DensityPlan(park: park, day: day, timeZone: row["time_zone"], bounds: bounds, before: before, rules: rules)
            let cutoff = try Double.fetchOne(db.cachedStatement(sql: Self.densityCutoff),
                                             arguments: ["from": plan.from, "to": plan.end, "read": rules.maximumFixesRead])
            let until = cutoff ?? plan.end
            let rows = try Row.fetchAll(db.cachedStatement(sql: Self.densityCells), arguments: [
                "park": park.rawValue, "from": plan.from, "until": until,
                "south": plan.box.minLat, "north": plan.box.maxLat, "west": plan.box.minLon, "east": plan.box.maxLon,
                "before": rules.checkinFixBefore, "after": rules.checkinFixAfter,
                "dlat": plan.grid.latitudeStep, "dlon": plan.grid.longitudeStep,
                "k": rules.minimumPeople, "limit": rules.maximumCells + 1,
            ]).map { row in
                (row: row["row"] as Int64, column: row["col"] as Int64, fixes: row["fixes"] as Int64, checkins: row["checkins"] as Int64,
                 people: row["people"] as Int64)
            }
            return plan.answer(rows: rows, readUntil: until)
        }
    }

    /// The park's time zone and the box of its boundary.
    static let densityPark = """
        SELECT time_zone, MbrMinX(boundary) AS min_x, MbrMinY(boundary) AS min_y, MbrMaxX(boundary) AS max_x, MbrMaxY(boundary) AS max_y
        FROM parks WHERE id = ?
        """

    /// The recorded time of the fix past which a day is not read (``DensityRules/maximumFixesRead``),
    /// or nothing when the day has no more fixes: a walk of `fixes_by_time` alone.
    static let densityCutoff = """
        SELECT recorded_at FROM fixes WHERE recorded_at >= :from AND recorded_at < :to ORDER BY recorded_at LIMIT 1 OFFSET :read
        """

    /// The day's fixes in the plan's box of whole cells (a range of `fixes_by_time`) and its
    /// check-ins (a range of `visits_checkins`, each placed at its fix by
    /// `sqlite_autoindex_fixes_1`), counted by cell (truncation is floor: rows and columns are
    /// positive); the cells that touch the boundary (its prepared geometry, which SpatiaLite keeps
    /// between rows); of those, the ones with enough people, the busiest first.
    static let densityCells = """
        WITH points(user_id, lat, lon, checkin) AS (
            SELECT user_id, lat, lon, 0 FROM fixes
            WHERE recorded_at >= :from AND recorded_at < :until
              AND lat BETWEEN :south AND :north AND lon BETWEEN :west AND :east
            UNION ALL
            SELECT v.user_id, f.lat, f.lon, 1 FROM visits v JOIN fixes f ON f.id = (
                SELECT id FROM fixes WHERE user_id = v.user_id AND recorded_at BETWEEN v.entered_at - :before AND v.entered_at + :after
                ORDER BY recorded_at DESC LIMIT 1)
            WHERE v.park_id = :park AND v.how = 'explicit' AND v.entered_at >= :from AND v.entered_at < :until
              AND f.lat BETWEEN :south AND :north AND f.lon BETWEEN :west AND :east
        ),
        cells(row, col, fixes, checkins, people) AS MATERIALIZED (
            SELECT CAST((lat + 90) / :dlat AS INTEGER), CAST((lon + 180) / :dlon AS INTEGER),
                   sum(1 - checkin), sum(checkin), count(DISTINCT user_id)
            FROM points GROUP BY 1, 2
        )
        SELECT c.row, c.col, c.fixes, c.checkins, c.people FROM cells c JOIN parks p ON p.id = :park
        WHERE c.people >= :k
          AND ST_Intersects(p.boundary, BuildMbr(c.col * :dlon - 180, c.row * :dlat - 90,
                                                 (c.col + 1) * :dlon - 180, (c.row + 1) * :dlat - 90, 4326)) = 1
        ORDER BY c.people DESC, c.fixes DESC, c.row, c.col LIMIT :limit
        """
}
