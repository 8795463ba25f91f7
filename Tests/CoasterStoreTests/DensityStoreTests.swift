import CoasterCore
@testable import CoasterStore
import CoasterTestSupport
import Foundation
import Synchronization
import Testing

/// A park's density map, on both stores: what is counted (the park's day in its own time zone,
/// inside its boundary, fixes and explicit check-ins), what is withheld, and the bounds.
@Suite("Density in the store")
struct DensityStoreTests {
    /// An L-shaped park in New York's time zone, a store on a hand-set clock, and riders.
    struct World {
        final class Clock: Sendable {
            let value = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
            func now() -> Date { self.value.withLock { $0 } }
            func set(_ date: Date) { self.value.withLock { $0 = date } }
        }

        static let park: ParkID = "ell"
        /// South-west corner of the park's box; the box is 0.004° square, the park all of it but
        /// its north-east quarter.
        static let corner = Coordinate(lat: 41.48, lon: -82.69)
        static let day = try! CalendarDay("2026-07-04")

        let clock = Clock()
        let t: TemporaryStore
        var store: any Store { self.t.store }
        let grid = DensityRules().grid(around: BoundingBox(minLon: corner.lon, minLat: corner.lat, maxLon: corner.lon + 0.004, maxLat: corner.lat + 0.004))

        init() async throws {
            self.t = try await TemporaryStore(now: self.clock.now)
            let (x, y) = (Self.corner.lon, Self.corner.lat)
            let ring = [(x, y), (x + 0.004, y), (x + 0.004, y + 0.002), (x + 0.002, y + 0.002), (x + 0.002, y + 0.004), (x, y + 0.004), (x, y)]
                .map { Coordinate(lat: $0.1, lon: $0.0) }
            let boundary = MultiPolygon(polygons: [Polygon(rings: [ring])])
            _ = try await self.store.replaceParks([ParkDefinition(
                park: Park(id: Self.park, name: "Ell", timeZone: "America/New_York", attribution: nil, boundary: boundary), zones: [], rides: [])])
            try await self.t.sql.addRiders(1...30)
        }

        /// The middle of the grid's cell holding the point `east`, `north` degrees from the corner.
        func cell(_ east: Double, _ north: Double) -> Coordinate {
            let (row, column) = self.grid.cell(containing: Coordinate(lat: Self.corner.lat + north, lon: Self.corner.lon + east))
            return self.grid.bounds(row: row, column: column).center
        }

        /// New York's wall-clock time on a day of July 2026 (EDT, UTC−4).
        static func local(_ day: Int, _ hour: Int, _ minute: Int) -> Date {
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "America/New_York")!
            return calendar.date(from: DateComponents(year: 2026, month: 7, day: day, hour: hour, minute: minute))!
        }

        /// Accepted fixes of `user`, in time order.
        func fixes(_ user: Int64, _ fixes: [(Coordinate, Date)]) async throws {
            let incoming = fixes.sorted { $0.1 < $1.1 }.map { IncomingFix(lat: $0.0.lat, lon: $0.0.lon, accuracy: 5, recordedAt: $0.1) }
            _ = try await self.store.recordFixes(user: UserID(rawValue: user), incoming, source: .api, visitTimeout: 12 * 3600) { _, _, _ in
                .accepted(current: true, transitions: [])
            }
        }

        /// An explicit check-in of `user` at the park at `at`.
        func checkIn(_ user: Int64, at: Date) async throws {
            self.clock.set(at)
            let outcome = try await self.store.checkIn(user: UserID(rawValue: user), park: Self.park, visitTimeout: 12 * 3600) { _, _ in .success(.inside) }
            guard case .created? = outcome else { throw Unexpected(what: "\(String(describing: outcome))") }
        }

        func density(_ rules: DensityRules = DensityRules(), before: Date = .distantFuture) async throws -> ParkDensity {
            try #require(try await self.store.density(of: Self.park, on: Self.day, before: before, rules: rules))
        }

        /// The shown cell holding `c`, if any.
        func shown(_ density: ParkDensity, at c: Coordinate) -> DensityCell? {
            let (row, column) = self.grid.cell(containing: c)
            return density.cells.first { $0.row == row && $0.column == column }
        }
    }

    struct Unexpected: Error {
        var what: String
    }

    @Test func threePeopleShowTwoAreWithheldAndCheckInsAreCountedAtTheirFix() async throws {
        let w = try await World()
        defer { w.t.remove() }
        let busy = w.cell(0.0005, 0.0005), quiet = w.cell(0.003, 0.0005)
        for user: Int64 in 1...3 { try await w.fixes(user, [(busy, World.local(4, 10, 0))]) }
        try await w.fixes(1, [(busy, World.local(4, 10, 30))])
        for user: Int64 in 4...5 { try await w.fixes(user, [(quiet, World.local(4, 11, 0))]) }
        // Three check in five minutes after their fix in the busy cell: counted there. A fourth
        // checks in an hour after their last fix: nowhere to place it.
        for user: Int64 in 1...3 { try await w.checkIn(user, at: World.local(4, 10, 5)) }
        try await w.checkIn(4, at: World.local(4, 12, 0))

        let density = try await w.density()
        #expect(density.cells.count == 1)
        let cell = try #require(w.shown(density, at: busy))
        #expect((cell.fixes, cell.checkins, cell.people) == (4, 3, 3))
        #expect(cell.bounds.contains(busy))
        #expect(w.shown(density, at: quiet) == nil)
        #expect(density.minimumPeople == 3 && !density.truncated && density.isComplete && !density.heldBack)
        #expect(density.timeZone == "America/New_York")
        #expect(density.interval.start == World.local(4, 0, 0) && density.interval.end == World.local(5, 0, 0))
    }

    /// The day is the park's: a minute either side of New York's midnights, which UTC's day
    /// (from 20:00 the evening before) would count the other way.
    @Test func onlyFixesOfTheParksOwnDayCount() async throws {
        let w = try await World()
        defer { w.t.remove() }
        let inDay = w.cell(0.0005, 0.0015), outOfDay = w.cell(0.0015, 0.0015)
        for user: Int64 in 1...3 { try await w.fixes(user, [(inDay, World.local(4, 0, 1)), (inDay, World.local(4, 23, 59))]) }
        for user: Int64 in 4...6 { try await w.fixes(user, [(outOfDay, World.local(3, 23, 59)), (outOfDay, World.local(5, 0, 1))]) }
        let density = try await w.density()
        #expect(density.cells.count == 1)
        let cell = try #require(w.shown(density, at: inDay))
        #expect((cell.fixes, cell.people) == (6, 3))
    }

    /// Outside the box, or inside the box in the corner the park does not have: not counted.
    @Test func fixesOutsideTheParkAreNotCounted() async throws {
        let w = try await World()
        defer { w.t.remove() }
        let notch = w.cell(0.0032, 0.0032), away = w.cell(0.02, 0.0005), inside = w.cell(0.001, 0.001)
        for user: Int64 in 1...3 {
            try await w.fixes(user, [(notch, World.local(4, 9, 0)), (away, World.local(4, 9, 30)), (inside, World.local(4, 10, 0))])
        }
        try await w.fixes(4, [(away, World.local(4, 10, 0))])
        let density = try await w.density()
        #expect(density.cells.count == 1)
        #expect(w.shown(density, at: inside)?.fixes == 3)
    }

    /// The bounds: at most so many fixes read (the answer says until when), at most so many
    /// cells (the busiest).
    @Test func aDayWithMoreFixesThanTheBoundIsReadToWhereItStops() async throws {
        let w = try await World()
        defer { w.t.remove() }
        let a = w.cell(0.0005, 0.0005), b = w.cell(0.0005, 0.0015)
        for user: Int64 in 1...4 { try await w.fixes(user, [(a, World.local(4, 9, Int(user)))]) }
        for user: Int64 in 5...7 { try await w.fixes(user, [(b, World.local(4, 10, Int(user)))]) }

        var rules = DensityRules()
        rules.maximumFixesRead = 5
        let early = try await w.density(rules)
        #expect(early.readUntil == World.local(4, 10, 6))
        #expect(!early.isComplete)
        #expect(w.shown(early, at: a)?.people == 4)
        // Of b's fixes only user 5's (the fifth of the day) was read: one person, withheld.
        #expect(w.shown(early, at: b) == nil && !early.heldBack)

        rules = DensityRules()
        rules.maximumCells = 1
        let busiest = try await w.density(rules)
        #expect(busiest.truncated)
        #expect(busiest.cells.map(\.people) == [4])
        #expect(busiest.isComplete)
    }

    /// A cell the park's edge crosses is counted whole, what lies outside the park too: moving an
    /// edge within a cell (the park loaded again, a second park over the same ground) changes no
    /// count, so no two answers differ by a strip narrower than a cell.
    @Test func aCellTheEdgeCrossesIsCountedWhole() async throws {
        let w = try await World()
        defer { w.t.remove() }
        // The cell holding the park's east edge in its southern half, and a point of that cell
        // east of the edge: outside the park and its box.
        let edge = Coordinate(lat: World.corner.lat + 0.0005, lon: World.corner.lon + 0.004 - 1e-7)
        let (row, column) = w.grid.cell(containing: edge)
        let span = w.grid.bounds(row: row, column: column)
        try #require(span.maxLon > edge.lon + 2e-6)
        let outside = Coordinate(lat: edge.lat, lon: (World.corner.lon + 0.004 + span.maxLon) / 2)
        for user: Int64 in 1...2 { try await w.fixes(user, [(outside, World.local(4, 9, 0))]) }
        try await w.fixes(3, [(edge, World.local(4, 9, 0))])
        let density = try await w.density()
        let cell = try #require(w.shown(density, at: edge))
        #expect((cell.fixes, cell.people) == (3, 3))
        #expect(cell.bounds.contains(outside))
    }

    /// Nothing from the privacy rule's end of the past on is counted: the answer says it was held
    /// back, and until when it counted.
    @Test func whatIsTooRecentIsNotCountedYet() async throws {
        let w = try await World()
        defer { w.t.remove() }
        let early = w.cell(0.0005, 0.0005), late = w.cell(0.0005, 0.0015)
        for user: Int64 in 1...3 { try await w.fixes(user, [(early, World.local(4, 9, 0)), (late, World.local(4, 11, 0))]) }
        for user: Int64 in 4...6 { try await w.checkIn(user, at: World.local(4, 11, 1)) }
        let density = try await w.density(before: World.local(4, 10, 0))
        #expect(density.heldBack && !density.isComplete)
        #expect(density.readUntil == World.local(4, 10, 0))
        #expect(density.cells.count == 1)
        #expect(w.shown(density, at: early)?.people == 3)
        #expect(w.shown(density, at: late) == nil)
        // The day long over: all of it, nothing held back.
        let later = try await w.density(before: World.local(6, 0, 0))
        #expect(!later.heldBack && later.isComplete && later.cells.count == 2)
        // Before the day began: nothing read, and the answer says it counted to the day's start.
        let before = try await w.density(before: World.local(3, 12, 0))
        #expect(before.heldBack && before.cells.isEmpty && before.readUntil == World.local(4, 0, 0))
    }

    @Test func anUnknownParkHasNoMap() async throws {
        let w = try await World()
        defer { w.t.remove() }
        #expect(try await w.store.density(of: "nowhere", on: World.day, before: .distantFuture, rules: DensityRules()) == nil)
    }
}
