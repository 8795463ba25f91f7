import CoasterCore
import Foundation

/// What both stores' density reads share: the plan of one read from the park's row, and the
/// answer from the grouped rows.
struct DensityPlan {
    let park: ParkID
    let day: CalendarDay
    let timeZone: String
    let interval: DateInterval
    let grid: DensityGrid
    /// The park's box widened to whole cells of the grid, and one cell more each side (so that
    /// no rounding at a cell's edge cuts it): the points read, so that every cell touching the
    /// park is counted whole.
    let box: BoundingBox
    /// The privacy rule's end of the past (seconds since 1970): nothing from it on is read.
    let before: Double
    let rules: DensityRules

    /// The plan for a park with this time zone and boundary box. A time zone this system does
    /// not know throws: an import checks it, so only a database written by something else has one.
    init(park: ParkID, day: CalendarDay, timeZone: String, bounds: BoundingBox, before: Date, rules: DensityRules) throws {
        guard let zone = TimeZone(identifier: timeZone) else { throw UnknownTimeZone(park: park, timeZone: timeZone) }
        self.park = park
        self.day = day
        self.timeZone = timeZone
        self.interval = day.interval(in: zone)
        let grid = rules.grid(around: bounds)
        self.grid = grid
        let (south, west) = grid.cell(containing: Coordinate(lat: bounds.minLat, lon: bounds.minLon))
        let (north, east) = grid.cell(containing: Coordinate(lat: bounds.maxLat, lon: bounds.maxLon))
        let low = grid.bounds(row: south - 1, column: west - 1), high = grid.bounds(row: north + 1, column: east + 1)
        self.box = BoundingBox(minLon: low.minLon, minLat: low.minLat, maxLon: high.maxLon, maxLat: high.maxLat)
        self.before = before.timeIntervalSince1970
        self.rules = rules
    }

    var from: Double { self.interval.start.timeIntervalSince1970 }
    var to: Double { self.interval.end.timeIntervalSince1970 }
    /// The end of what may be read: the day's end, or the privacy rule's when that is earlier.
    var end: Double { max(self.from, min(self.to, self.before)) }

    /// The answer from the rows of the cells query: `(row, column, fixes, check-ins, people)` of
    /// each shown cell, at most ``DensityRules/maximumCells`` + 1 of them (one more says there were
    /// more), read up to `readUntil` (``end``, or earlier where the read bound stopped it).
    func answer(rows: [(row: Int64, column: Int64, fixes: Int64, checkins: Int64, people: Int64)], readUntil: Double) -> ParkDensity {
        // The busiest first: the query's order.
        var cells = rows.map { row in
            DensityCell(row: Int(row.row), column: Int(row.column), bounds: self.grid.bounds(row: Int(row.row), column: Int(row.column)),
                        fixes: Int(row.fixes), checkins: Int(row.checkins), people: Int(row.people))
        }
        let truncated = cells.count > self.rules.maximumCells
        if truncated { cells.removeLast(cells.count - self.rules.maximumCells) }
        return ParkDensity(park: self.park, day: self.day, timeZone: self.timeZone, interval: self.interval,
                           readUntil: Date(timeIntervalSince1970: min(readUntil, self.end)),
                           heldBack: self.before < self.to && readUntil >= self.end, grid: self.grid, cells: cells,
                           truncated: truncated, minimumPeople: self.rules.minimumPeople)
    }
}

/// A stored park whose time zone this system does not know: the database was written by something else.
struct UnknownTimeZone: Error, CustomStringConvertible {
    var park: ParkID
    var timeZone: String
    var description: String { "park \(self.park) has time zone \"\(self.timeZone.prefix(64))\", which this system does not know" }
}
