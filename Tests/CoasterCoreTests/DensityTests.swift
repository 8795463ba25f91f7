import CoasterCore
import Foundation
import Testing

@Suite("Density rules")
struct DensityTests {
    @Test(arguments: [
        ("2026-07-04", "2026-07-04"), ("2024-02-29", "2024-02-29"), ("2000-02-29", "2000-02-29"), ("0001-01-01", "0001-01-01"),
    ])
    func daysAreRead(_ text: String, _ written: String) throws {
        #expect(try CalendarDay(text).description == written)
    }

    @Test(arguments: [
        ("2026-7-04", CalendarDayProblem.malformed), ("2026-07-04T00:00", .malformed), ("", .malformed), ("２026-07-04", .malformed),
        ("2026/07/04", .malformed), ("+026-07-04", .malformed), ("2026-02-29", .noSuchDay("2026-02-29")), ("1900-02-29", .noSuchDay("1900-02-29")),
        ("2026-13-01", .noSuchDay("2026-13-01")), ("2026-04-31", .noSuchDay("2026-04-31")), ("0000-01-01", .noSuchDay("0000-01-01")),
        ("2026-01-00", .noSuchDay("2026-01-00")),
    ])
    func badDaysAreRefusedSayingWhy(_ text: String, _ problem: CalendarDayProblem) {
        #expect(throws: problem) { try CalendarDay(text) }
    }

    /// A park's day is its own time zone's, 23 or 25 hours long when the clocks change.
    @Test(arguments: [
        ("2026-07-04", "America/New_York", "2026-07-04T04:00:00Z", 24.0),
        ("2026-03-08", "America/New_York", "2026-03-08T05:00:00Z", 23.0),
        ("2026-11-01", "America/New_York", "2026-11-01T04:00:00Z", 25.0),
        ("2026-07-04", "Pacific/Kiritimati", "2026-07-03T10:00:00Z", 24.0),
        ("2026-07-04", "UTC", "2026-07-04T00:00:00Z", 24.0),
    ])
    func aDayIsItsTimeZones(_ text: String, _ zone: String, _ start: String, _ hours: Double) throws {
        let interval = try CalendarDay(text).interval(in: #require(TimeZone(identifier: zone)))
        #expect(interval.start == ISO8601DateFormatter().date(from: start))
        #expect(interval.duration == hours * 3600)
    }

    @Test func aDayIsAtMostSoFarBackAndAtMostTomorrow() throws {
        let now = try #require(ISO8601DateFormatter().date(from: "2026-07-04T23:30:00Z"))
        let rules = DensityRules()
        #expect(try rules.day("2026-07-05", now: now).description == "2026-07-05")
        #expect(throws: CalendarDayProblem.inTheFuture) { try rules.day("2026-07-06", now: now) }
        // 400 days before 2026-07-04 is 2025-05-30.
        #expect(try rules.day("2025-05-30", now: now).description == "2025-05-30")
        #expect(throws: CalendarDayProblem.tooLongAgo(limit: 400)) { try rules.day("2025-05-29", now: now) }
        #expect(throws: CalendarDayProblem.malformed) { try rules.day("yesterday", now: now) }
    }

    /// Cells are fixed in the world and about the size the rules say: the same point falls in the
    /// same cell, and its cell holds it.
    @Test func cellsAreFixedAndOfTheirSize() throws {
        let cedarPoint = BoundingBox(minLon: -82.6925, minLat: 41.4744, maxLon: -82.6744, maxLat: 41.4902)
        let grid = DensityRules().grid(around: cedarPoint)
        #expect(grid.referenceLatitude == 41)
        // Moving the fence by a few metres keeps the grid.
        var moved = cedarPoint
        moved.maxLat += 0.0003
        #expect(DensityRules().grid(around: moved) == grid)
        let point = Coordinate(lat: 41.4822, lon: -82.6835)
        let (row, column) = grid.cell(containing: point)
        #expect(grid.cell(containing: point) == (row, column))
        let bounds = grid.bounds(row: row, column: column)
        #expect(bounds.contains(point))
        let height = Geodesy.distance(Coordinate(lat: bounds.minLat, lon: bounds.minLon), Coordinate(lat: bounds.maxLat, lon: bounds.minLon))
        let width = Geodesy.distance(Coordinate(lat: bounds.minLat, lon: bounds.minLon), Coordinate(lat: bounds.minLat, lon: bounds.maxLon))
        #expect(abs(height - 25) < 0.1, "height \(height)")
        // Measured at 41°, used at 41.48°: a little narrower.
        #expect(abs(width - 25) < 0.5, "width \(width)")
        // Its neighbour to the north-east starts where it ends.
        let next = grid.bounds(row: row + 1, column: column + 1)
        #expect(next.minLat == bounds.maxLat && next.minLon == bounds.maxLon)
    }
}
