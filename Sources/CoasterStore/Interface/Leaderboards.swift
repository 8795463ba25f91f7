import CoasterCore
import Foundation

/// Leaderboards and the tallies behind them.
public protocol LeaderboardStore: Sendable {
    /// Counts on the leaderboards every ride log older than `cutoff` not yet counted, oldest
    /// first, at most `limit` of them in this transaction; returns how many were counted.
    ///
    /// A board never shows a ride younger than the location time-to-live: a tally that moved as
    /// a ride was logged told any reader which ride its rider was on, and when, whatever their
    /// sharing (ghost mode included). Ride logs are written with the server's clock, so their
    /// ids and times rise together and the mark is an id.
    @discardableResult
    func settleTallies(through cutoff: Date, limit: Int) async throws -> Int

    /// One page of a leaderboard, best first; ties go to who got there first, then the lower id.
    /// Users blocked by or blocking `viewer` are left out. The viewer's own entry (if they are on
    /// the board) comes with every page, ranked the same way. A page starts `offset` entries in,
    /// or right after a place on the board (`after`, the last entry's ``LeaderboardEntry/position``
    /// of the page before).
    ///
    /// What each part costs, whatever the board's size: the friends' board is read from the
    /// friend list (one lookup a friend, sorted here); a global or park page is a range of the
    /// rank index (`offset + limit` entries, or `limit` after a place: the way to walk a large
    /// board); the viewer's rank, and the first rank of a page after a place, is a few sums of
    /// `tally_counts` and a count within one minute (``TallyCounts``), less the blocked riders
    /// ranked above, each looked up.
    func leaderboard(_ query: LeaderboardQuery, viewer: UserID, limit: Int, offset: Int,
        after: LeaderboardPosition?) async throws -> (entries: [LeaderboardEntry], mine: LeaderboardEntry?)
}

extension LeaderboardStore {
    /// A page of a leaderboard `offset` entries in.
    public func leaderboard(_ query: LeaderboardQuery, viewer: UserID, limit: Int, offset: Int)
        async throws -> (entries: [LeaderboardEntry], mine: LeaderboardEntry?) {
        try await self.leaderboard(query, viewer: viewer, limit: limit, offset: offset, after: nil)
    }
}
