import Foundation

/// Which leaderboard.
public struct LeaderboardQuery: Hashable, Sendable {
    public enum Metric: Hashable, Sendable {
        case rides, credits
        case ride(RideID)

        /// The metric's name where tallies are kept: `rides`, `credits`, `ride:<ride id>`.
        public var key: String {
            switch self {
            case .rides: "rides"
            case .credits: "credits"
            case .ride(let id): "ride:" + id.rawValue
            }
        }
    }

    public enum Scope: Hashable, Sendable {
        case global, friends
        case park(ParkID)
    }

    public enum Window: String, Hashable, Sendable, CaseIterable {
        case allTime = "all-time", year, week
    }

    public var metric: Metric
    public var scope: Scope
    public var window: Window

    public init(metric: Metric, scope: Scope, window: Window) {
        self.metric = metric
        self.scope = scope
        self.window = window
    }
}

public struct LeaderboardEntry: Hashable, Sendable {
    public var rank: Int
    public var user: UserSummary
    public var value: Int
    /// When the rider reached `value` (seconds since 1970): ties go to who got there first.
    public var reachedAt: Double

    /// Where the entry stands in the board's order: what a page after it starts from.
    public var position: LeaderboardPosition { LeaderboardPosition(value: self.value, reachedAt: self.reachedAt, user: self.user.id) }

    public init(rank: Int, user: UserSummary, value: Int, reachedAt: Double) {
        self.rank = rank
        self.user = user
        self.value = value
        self.reachedAt = reachedAt
    }
}

/// A place in a leaderboard's order (higher value first, then who reached it first, then the
/// lower id): where a page continues. Any place will do, one whose rider has since left the
/// board or moved too.
public struct LeaderboardPosition: Hashable, Sendable {
    public var value: Int
    public var reachedAt: Double
    public var user: UserID

    public init(value: Int, reachedAt: Double, user: UserID) {
        self.value = value
        self.reachedAt = reachedAt
        self.user = user
    }

    /// Whether `self` comes before `other` on the board.
    public func precedes(_ other: LeaderboardPosition) -> Bool {
        (other.value, self.reachedAt, self.user.rawValue) < (self.value, other.reachedAt, other.user.rawValue)
    }
}
