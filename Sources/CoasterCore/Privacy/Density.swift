import Foundation

/// A day of the calendar as a person names it, `YYYY-MM-DD`, without a time zone: which instants
/// it holds depends on where (``interval(in:)``).
public struct CalendarDay: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    public let day: Int

    /// Reads `YYYY-MM-DD` (four, two and two ASCII digits), refusing a day no calendar has
    /// (`2026-02-30`).
    public init(_ text: String) throws(CalendarDayProblem) {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") else { throw .malformed }
        func number(_ range: Range<Int>) throws(CalendarDayProblem) -> Int {
            var value = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { throw .malformed }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        let (year, month, day) = (try number(0..<4), try number(5..<7), try number(8..<10))
        guard year >= 1, (1...12).contains(month), (1...Self.days(inMonth: month, of: year)).contains(day) else {
            throw .noSuchDay(text)
        }
        self.year = year
        self.month = month
        self.day = day
    }

    /// The day `date` falls on in `timeZone`.
    public init(_ date: Date, in timeZone: TimeZone) {
        let parts = Self.calendar(timeZone).dateComponents([.year, .month, .day], from: date)
        self.year = parts.year ?? 1970
        self.month = parts.month ?? 1
        self.day = parts.day ?? 1
    }

    public var description: String { String(format: "%04d-%02d-%02d", self.year, self.month, self.day) }

    public static func < (a: CalendarDay, b: CalendarDay) -> Bool {
        (a.year, a.month, a.day) < (b.year, b.month, b.day)
    }

    /// The instants of this day in `timeZone`: from its first to the next day's first, so 23 or
    /// 25 hours on a day the clocks change (and from 01:00 where they change at midnight).
    public func interval(in timeZone: TimeZone) -> DateInterval {
        let calendar = Self.calendar(timeZone)
        // Noon exists on every day in every zone; midnight does not where clocks change at midnight.
        let noon = calendar.date(from: DateComponents(year: self.year, month: self.month, day: self.day, hour: 12)) ?? Date(timeIntervalSince1970: 0)
        return calendar.dateInterval(of: .day, for: noon) ?? DateInterval(start: noon.addingTimeInterval(-12 * 3600), duration: 24 * 3600)
    }

    /// Days from this day to `other` (negative when `other` is earlier).
    public func days(to other: CalendarDay) -> Int {
        let calendar = Self.calendar(.gmt)
        let a = calendar.date(from: DateComponents(year: self.year, month: self.month, day: self.day)) ?? Date(timeIntervalSince1970: 0)
        let b = calendar.date(from: DateComponents(year: other.year, month: other.month, day: other.day)) ?? Date(timeIntervalSince1970: 0)
        return Int((b.timeIntervalSince(a) / 86_400).rounded())
    }

    static func calendar(_ timeZone: TimeZone) -> Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        return calendar
    }

    static func days(inMonth month: Int, of year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}

/// Why a day was refused; ``description`` is a sentence for the person who asked.
public enum CalendarDayProblem: Error, Hashable, Sendable, CustomStringConvertible {
    /// Not `YYYY-MM-DD`.
    case malformed
    /// A day no calendar has.
    case noSuchDay(String)
    /// Further back than the rules look (``DensityRules/daysBack``).
    case tooLongAgo(limit: Int)
    /// After tomorrow.
    case inTheFuture

    public var description: String {
        switch self {
        case .malformed: "expected a day as YYYY-MM-DD, e.g. 2026-07-04"
        case .noSuchDay(let text): "\(text.prefix(10)) is not a day of the calendar"
        case .tooLongAgo(let limit): "at most \(limit) days back"
        case .inTheFuture: "a day after tomorrow has no fixes yet"
        }
    }
}

/// A grid of square-ish cells over one park, fixed in the world: the same point falls in the same
/// cell on every request, whatever the day asked or the data behind it.
///
/// Cell `(row, column)` spans latitudes `row · latitudeStep − 90 ..< (row + 1) · latitudeStep − 90`
/// and longitudes `column · longitudeStep − 180 ..< (column + 1) · longitudeStep − 180` (SRID 4326),
/// so rows and columns are never negative and the stores compute them by truncation.
public struct DensityGrid: Hashable, Sendable {
    /// The side of a cell, metres, at ``referenceLatitude``.
    public let cellSize: Double
    /// The latitude the steps are measured at: the park's middle rounded to a whole degree, so
    /// that a park file loaded again with its fence moved by a few metres keeps its grid (a
    /// degree further north or south changes a cell's width by at most 3 % below 60°).
    public let referenceLatitude: Double
    /// A cell's height, degrees of latitude.
    public let latitudeStep: Double
    /// A cell's width, degrees of longitude.
    public let longitudeStep: Double

    /// The grid of cells of `cellSize` metres for a park whose boundary has these bounds.
    public init(cellSize: Double, around bounds: BoundingBox) {
        self.cellSize = cellSize
        self.referenceLatitude = max(-85, min(85, bounds.center.lat.rounded()))
        let perMetre = Geodesy.degreesPerMetre(at: self.referenceLatitude)
        self.latitudeStep = perMetre.lat * cellSize
        self.longitudeStep = perMetre.lon * cellSize
    }

    /// The cell holding `c`: the same arithmetic as the stores' SQL (``DensityStore``).
    public func cell(containing c: Coordinate) -> (row: Int, column: Int) {
        (Int((c.lat + 90) / self.latitudeStep), Int((c.lon + 180) / self.longitudeStep))
    }

    /// The span of a cell (SRID 4326).
    public func bounds(row: Int, column: Int) -> BoundingBox {
        BoundingBox(minLon: Double(column) * self.longitudeStep - 180, minLat: Double(row) * self.latitudeStep - 90,
                    maxLon: Double(column + 1) * self.longitudeStep - 180, maxLat: Double(row + 1) * self.latitudeStep - 90)
    }
}

/// The rules of a park's density map (an admin's view of where people were on one day): counts
/// by cell, never a person.
public struct DensityRules: Hashable, Sendable {
    /// The side of a cell, metres. Phones in a park are good to 5–20 m, so a finer cell shows
    /// their noise; 25 m is about a station and its queue (``ParkImporter/defaultPointRadius``),
    /// so rides and queues still stand apart, and a park a kilometre across is some 1,600 cells.
    public var cellSize: Double = 25
    /// The fewest distinct people a cell must hold to be shown. With one, a cell is that person's
    /// trace; with two, each of them learns where the other was. A cell with fewer is withheld,
    /// and the answer says nothing of it, not even that there was one.
    public var minimumPeople = 3
    /// The most cells an answer holds, the busiest first: a park 3.5 km square at 25 m, and what a
    /// map page draws without stalling its browser.
    public var maximumCells = 20_000
    /// The most fixes one answer reads (all of the day's, the world over, before the park's box
    /// sorts them out): past this, the day is read from its start up to the time this many
    /// fixes were recorded, and the answer says until when. Bounds a request to a few seconds of
    /// a database's reading.
    public var maximumFixesRead = 2_000_000
    /// How many days back a day may be: a year and a month, so the same day of last year's season
    /// can be compared.
    public var daysBack = 400
    /// Where a check-in was: the rider's newest fix from this long (seconds) before the check-in,
    /// which is as old as the fix a check-in is decided on may be (``CheckinPolicy/freshness``) ...
    public var checkinFixBefore: TimeInterval = CheckinPolicy().freshness
    /// ... to this long after it: a fix a phone recorded by a clock running ahead
    /// (``FixPolicy/clockSkew``).
    public var checkinFixAfter: TimeInterval = FixPolicy().clockSkew

    public init() {}

    /// The grid over a park whose boundary has these bounds.
    public func grid(around bounds: BoundingBox) -> DensityGrid {
        DensityGrid(cellSize: self.cellSize, around: bounds)
    }

    /// Reads a day asked for on `now`: `YYYY-MM-DD`, a real day, at most ``daysBack`` days
    /// before today and at most tomorrow. Today is UTC's: a park's own today is at most a day
    /// either side of it.
    public func day(_ text: String, now: Date) throws(CalendarDayProblem) -> CalendarDay {
        let day = try CalendarDay(text)
        let today = CalendarDay(now, in: .gmt)
        let ahead = today.days(to: day)
        guard ahead <= 1 else { throw .inTheFuture }
        guard ahead >= -self.daysBack else { throw .tooLongAgo(limit: self.daysBack) }
        return day
    }
}
