import CoasterCore
import Foundation

/// What both stores' density reads share: the plan of one read from the park's row, and the
/// answer from the grouped rows.
struct DensityPlan {
    let park: ParkID
    let day: CalendarDay
    let timeZone: String
    let interval: DateInterval
    let bounds: BoundingBox
    let grid: DensityGrid
    let rules: DensityRules

    /// The plan for a park with this time zone and boundary box. A time zone this system does
    /// not know throws: an import checks it, so only a database written by something else has one.
    init(park: ParkID, day: CalendarDay, timeZone: String, bounds: BoundingBox, rules: DensityRules) throws {
        guard let zone = TimeZone(identifier: timeZone) else { throw UnknownTimeZone(park: park, timeZone: timeZone) }
        self.park = park
        self.day = day
        self.timeZone = timeZone
        self.interval = day.interval(in: zone)
        self.bounds = bounds
        self.grid = rules.grid(around: bounds)
        self.rules = rules
    }

    var from: Double { self.interval.start.timeIntervalSince1970 }
    var to: Double { self.interval.end.timeIntervalSince1970 }

    /// The answer from the rows of the cells query: `(row, column, fixes, check-ins, people)` of
    /// each shown cell, at most ``DensityRules/maximumCells`` + 1 of them (one more says there were
    /// more), and one row without a row and column whose third value counts the cells withheld.
    func answer(rows: [(row: Int64?, column: Int64?, fixes: Int64, checkins: Int64, people: Int64)], readUntil: Double) -> ParkDensity {
        var cells: [DensityCell] = []
        var withheld = 0
        for row in rows {
            guard let r = row.row, let c = row.column else {
                withheld += Int(row.fixes)
                continue
            }
            cells.append(DensityCell(row: Int(r), column: Int(c), bounds: self.grid.bounds(row: Int(r), column: Int(c)),
                                     fixes: Int(row.fixes), checkins: Int(row.checkins), people: Int(row.people)))
        }
        // The busiest first, as the query ranked them (a compound query's order is not SQL's promise).
        cells.sort { ($1.people, $1.fixes, $0.row, $0.column) < ($0.people, $0.fixes, $1.row, $1.column) }
        let truncated = cells.count > self.rules.maximumCells
        if truncated { cells.removeLast(cells.count - self.rules.maximumCells) }
        return ParkDensity(park: self.park, day: self.day, timeZone: self.timeZone, interval: self.interval,
                           readUntil: Date(timeIntervalSince1970: min(readUntil, self.to)), grid: self.grid, cells: cells,
                           withheldCells: withheld, truncated: truncated, minimumPeople: self.rules.minimumPeople)
    }
}

/// A stored park whose time zone this system does not know: the database was written by something else.
struct UnknownTimeZone: Error, CustomStringConvertible {
    var park: ParkID
    var timeZone: String
    var description: String { "park \(self.park) has time zone \"\(self.timeZone.prefix(64))\", which this system does not know" }
}
