import Foundation

/// One cell of a park's density map: how many accepted fixes and explicit check-ins fell in it,
/// and from how many distinct people (at least ``DensityRules/minimumPeople``).
public struct DensityCell: Hashable, Sendable {
    /// The cell's place in its ``DensityGrid``.
    public var row: Int
    public var column: Int
    /// The cell's span (SRID 4326), for drawing it.
    public var bounds: BoundingBox
    public var fixes: Int
    public var checkins: Int
    /// Distinct people with a fix or a check-in in the cell.
    public var people: Int

    public init(row: Int, column: Int, bounds: BoundingBox, fixes: Int, checkins: Int, people: Int) {
        self.row = row
        self.column = column
        self.bounds = bounds
        self.fixes = fixes
        self.checkins = checkins
        self.people = people
    }

    /// The cell's middle.
    public var center: Coordinate { self.bounds.center }
}

/// Where people were in a park on one day of its calendar, by cell (``DensityRules``).
public struct ParkDensity: Hashable, Sendable {
    public var park: ParkID
    public var day: CalendarDay
    /// The park's IANA time zone, whose calendar `day` is of.
    public var timeZone: String
    /// The day's instants in the park's time zone.
    public var interval: DateInterval
    /// The end of what was read: `interval.end`, or earlier when the day had more fixes than
    /// ``DensityRules/maximumFixesRead`` or is not over for the privacy rule (``heldBack``): fixes
    /// and check-ins from here on are not counted.
    public var readUntil: Date
    /// Whether the day was read only up to what the location privacy rule lets anyone learn
    /// (``LocationPrivacy/placesShownBefore(_:)``): today's latest hours are not counted yet.
    public var heldBack: Bool
    public var grid: DensityGrid
    /// Cells touching the park with at least ``DensityRules/minimumPeople`` people, the most
    /// people first (then the most fixes, then by row and column). Of the cells with fewer,
    /// nothing is told, not even how many there were: in a "park" drawn around one house, "one
    /// cell withheld" would say that one or two people were there.
    public var cells: [DensityCell]
    /// Whether more cells qualified than ``DensityRules/maximumCells``: `cells` are the busiest.
    public var truncated: Bool
    /// The rule the cells were held to.
    public var minimumPeople: Int

    public init(park: ParkID, day: CalendarDay, timeZone: String, interval: DateInterval, readUntil: Date, heldBack: Bool, grid: DensityGrid,
                cells: [DensityCell], truncated: Bool, minimumPeople: Int) {
        self.park = park
        self.day = day
        self.timeZone = timeZone
        self.interval = interval
        self.readUntil = readUntil
        self.heldBack = heldBack
        self.grid = grid
        self.cells = cells
        self.truncated = truncated
        self.minimumPeople = minimumPeople
    }

    /// Whether the whole day was read.
    public var isComplete: Bool { self.readUntil >= self.interval.end }
}

/// Why a park's density map was not drawn.
public enum DensityError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The `day` asked for is not one the rules read (``DensityRules/day(_:now:)``): bad input.
    case badDay(CalendarDayProblem)
    /// No park has this id.
    case noSuchPark(ParkID)

    public var description: String {
        switch self {
        case .badDay(let problem): "day: \(problem)"
        case .noSuchPark(let park): "no park has the id \"\(park.rawValue.prefix(64))\""
        }
    }
}
