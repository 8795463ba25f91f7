import Foundation

/// How many riders of a leaderboard are ranked ahead of one, from the counts triggers keep in
/// `tally_counts` (SQLite: migration "2026-11-24 leaderboard ranks from counts"; PostgreSQL:
/// `tally_counts_change` in ``PostgresSchema``): by value (level 0), and at each value by the day,
/// hour and minute it was reached (levels 1–3).
///
/// Ahead of a rider at value v reached at r: every rider at a higher value (one sum over the
/// board's distinct values), and at v those who reached it earlier (ties go to who got there
/// first, then the lower id): the days before r's, the hours of r's day before its hour, the
/// minutes of that hour before its minute (sums of at most a few hundred, 24 and 60 rows), and a
/// count of the riders within r's minute. Counting everyone above instead walked the rank index
/// as far as the rank (34–42 requests a second with 222,709 riders on the board).
///
/// Each store's SQL lives with the store; the arithmetic both share is here, and must agree bit
/// for bit with the triggers' (a slot off by one miscounts every rank of that minute).
enum TallyCounts {
    /// The slots of a time, as the triggers compute them: whole minutes since 1970 of
    /// `max(reachedAt, 0)`, truncated (SQLite's `CAST` of a real; PostgreSQL's `floor`, equal for
    /// a number ≥ 0, since its `CAST` rounds), and the hour and day of that minute by integer
    /// division, so that the levels nest.
    static func slots(_ reachedAt: Double) -> (day: Int64, hour: Int64, minute: Int64) {
        let minutes = max(reachedAt, 0) / 60
        // SQLite's CAST saturates (PostgreSQL's raises); no time the server writes comes near it.
        let minute = minutes < 9.0e18 ? Int64(minutes) : Int64.max
        return (minute / 1440, minute / 60, minute)
    }

    /// Where the riders within `minute` start on the rank index: its first second, less one for
    /// the rounding of the division (the slot's own test decides); from the lowest time for
    /// minute 0, which holds every time before 1970 too.
    static func firstTime(ofMinute minute: Int64) -> Double {
        minute == 0 ? -Double.greatestFiniteMagnitude : Double(minute) * 60 - 1
    }
}
