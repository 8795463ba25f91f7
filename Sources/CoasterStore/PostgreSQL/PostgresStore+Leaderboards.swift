import CoasterCore
import Foundation
import PostgresNIO

extension PostgresStore: LeaderboardStore {
    /// Counts on the leaderboards every ride log older than `cutoff` not yet counted, oldest
    /// first, at most `limit` of them in this transaction; returns how many were counted.
    ///
    /// A board never shows a ride younger than the location time-to-live: a tally that moved as
    /// a ride was logged told any reader which ride its rider was on, and when, whatever their
    /// sharing (ghost mode included). Ride logs are written with the server's clock, so their
    /// ids and times rise together and the mark is an id (and ride logs commit in id order:
    /// ``PostgresLock/rideLogs``). One settler at a time (``PostgresLock/settling``): two nodes
    /// settling at once would count the same logs twice.
    @discardableResult
    public func settleTallies(through cutoff: Date, limit: Int) async throws -> Int {
        let cutoff = cutoff.timeIntervalSince1970
        return try await self.transaction { tx in
            try await tx.lock(.settling)
            let mark = try await tx.first("SELECT through_log FROM tally_mark WHERE id = 1 FOR UPDATE").map { try $0.decode(Int64.self) } ?? 0
            let rows = try await tx.rows("""
                SELECT l.id, l.user_id, l.ridden_at, r.id, r.park_id, r.type
                FROM ride_logs l JOIN rides r ON r.id = l.ride_id WHERE l.id > \(mark) ORDER BY l.id LIMIT \(limit)
                """)
            var logs: [TallyLog] = []
            for row in rows {
                let (id, user, at, ride, park, type) = try row.decode((Int64, Int64, Double, String, String, String).self)
                // The first log still younger than the cutoff holds back the ones after it.
                guard at <= cutoff else { break }
                logs.append(TallyLog(id: id, user: UserID(user), ride: RideID(rawValue: ride), park: ParkID(rawValue: park),
                                     isCoaster: (RideType(rawValue: type) ?? .other) == .coaster, at: at))
            }
            try await Self.tally(logs, tx)
            if let last = logs.last { try await tx.run("UPDATE tally_mark SET through_log = \(last.id) WHERE id = 1") }
            return logs.count
        }
    }

    /// Marks every ride log written so far as counted (a bulk load counts its own).
    static func markTalliesSettled(_ tx: PostgresTransaction) async throws {
        try await tx.run("UPDATE tally_mark SET through_log = (SELECT coalesce(max(id), 0) FROM ride_logs) WHERE id = 1")
    }

    /// Adds rides to the leaderboards, in the order given: rides, first-time coaster credits, and
    /// per-ride counts, for every period and for the global and park scopes.
    ///
    /// What the SpatiaLite store does one statement a tally (up to 15 a log), here in two: which
    /// coaster logs had an earlier log (lower id) of the same coaster in each period, then every
    /// tally's increments summed by key and upserted at once. Each key ends with the count added
    /// and the time of its last log in this order, as the one-by-one upserts leave it; the
    /// `tally_counts` triggers see each key's row change once, which leaves the counts the same.
    static func tally(_ logs: [TallyLog], _ tx: PostgresTransaction) async throws {
        guard !logs.isEmpty else { return }
        let periods = logs.map { Periods.starts(Date(timeIntervalSince1970: $0.at)) }

        // A coaster's first ride of a period is a credit: one question a coaster log and period.
        var users: [Int64] = [], rides: [String] = [], starts: [Double] = [], before: [Int64] = []
        for (log, periods) in zip(logs, periods) where log.isCoaster {
            for period in periods {
                users.append(log.user.rawValue)
                rides.append(log.ride.rawValue)
                starts.append(period.start.isFinite ? period.start : -1e18)
                before.append(log.id)
            }
        }
        var repeated = Set<Int>()
        if !users.isEmpty {
            let rows = try await tx.rows("""
                SELECT k.i FROM unnest(\(users)::bigint[], \(rides)::text[], \(starts)::float8[], \(before)::bigint[])
                    WITH ORDINALITY AS k(user_id, ride_id, start, log_id, i)
                WHERE EXISTS (SELECT 1 FROM ride_logs l WHERE l.user_id = k.user_id AND l.ride_id = k.ride_id
                                                          AND l.ridden_at >= k.start AND l.id < k.log_id)
                """)
            for row in rows { repeated.insert(try row.decode(Int.self) - 1) }
        }

        struct Key: Hashable { var metric, scope, period: String, user: Int64 }
        var keys: [Key] = [], sums: [Key: (value: Int64, reachedAt: Double)] = [:]
        func add(_ metric: String, _ scope: String, _ period: String, _ log: TallyLog) {
            let key = Key(metric: metric, scope: scope, period: period, user: log.user.rawValue)
            if let sum = sums[key] {
                sums[key] = (sum.value + 1, log.at)
            } else {
                keys.append(key)
                sums[key] = (1, log.at)
            }
        }
        var question = 0
        for (log, periods) in zip(logs, periods) {
            let scopes = ["global", "park:" + log.park.rawValue]
            for (period, _) in periods {
                for scope in scopes { add("rides", scope, period, log) }
                add("ride:" + log.ride.rawValue, "global", period, log)
                if log.isCoaster {
                    if !repeated.contains(question) {
                        for scope in scopes { add("credits", scope, period, log) }
                    }
                    question += 1
                }
            }
        }
        let values = keys.map { sums[$0]! }
        try await tx.run("""
            INSERT INTO tallies AS t (metric, scope, period, user_id, value, reached_at)
            SELECT * FROM unnest(\(keys.map(\.metric))::text[], \(keys.map(\.scope))::text[], \(keys.map(\.period))::text[],
                                 \(keys.map(\.user))::bigint[], \(values.map(\.value))::bigint[], \(values.map(\.reachedAt))::float8[])
            ON CONFLICT (metric, scope, period, user_id) DO UPDATE SET value = t.value + excluded.value, reached_at = excluded.reached_at
            """)
    }

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
    /// ranked above, each looked up. One snapshot for all of it.
    public func leaderboard(_ query: LeaderboardQuery, viewer: UserID, limit: Int, offset: Int,
                            after: LeaderboardPosition? = nil) async throws -> (entries: [LeaderboardEntry], mine: LeaderboardEntry?) {
        let scope: String
        switch query.scope {
        case .global, .friends: scope = "global"
        case .park(let park): scope = "park:" + park.rawValue
        }
        let board = Board(metric: query.metric.key, scope: scope, period: Periods.key(query.window, self.now()), viewer: viewer.rawValue)
        let friends = query.scope == .friends
        return try await self.read { tx in
            if friends {
                return try await Self.friendsLeaderboard(board, limit: limit, offset: offset, after: after, tx)
            }
            var entries: [LeaderboardEntry]
            if let after {
                entries = try await Self.boardPage(board, after: after, limit: limit, tx).map { Self.entry($0, rank: 0) }
                if let first = entries.first {
                    let ahead = try await Self.ahead(first.position, board, tx)
                    for i in entries.indices { entries[i].rank = ahead + i + 1 }
                }
            } else {
                let rows = try await tx.rows("""
                    SELECT t.user_id, u.username, u.display_name, t.value, t.reached_at FROM tallies t JOIN users u ON u.id = t.user_id
                    WHERE t.metric = \(board.metric) AND t.scope = \(board.scope) AND t.period = \(board.period)
                        AND t.user_id NOT IN (SELECT blocked FROM blocks WHERE blocker = \(board.viewer)
                                              UNION SELECT blocker FROM blocks WHERE blocked = \(board.viewer))
                    ORDER BY t.value DESC, t.reached_at, t.user_id LIMIT \(limit) OFFSET \(offset)
                    """)
                entries = try rows.enumerated().map { i, row in Self.entry(try Self.boardRow(row), rank: offset + i + 1) }
            }
            guard let row = try await tx.first("""
                SELECT t.user_id, u.username, u.display_name, t.value, t.reached_at FROM tallies t JOIN users u ON u.id = t.user_id
                WHERE t.metric = \(board.metric) AND t.scope = \(board.scope) AND t.period = \(board.period) AND t.user_id = \(board.viewer)
                """) else { return (entries, nil) }
            var me = Self.entry(try Self.boardRow(row), rank: 0)
            me.rank = try await Self.ahead(me.position, board, tx) + 1
            return (entries, me)
        }
    }

    /// A page of a global or park board after a place: the riders tied on its value after it,
    /// then those of lower values, each a range of the rank index in its order, merged until the
    /// page is full. A page costs its length, however deep: each range has its own `LIMIT` (the
    /// planner does not stop a range of a bare `UNION ALL` early, and read a whole board).
    private static func boardPage(_ board: Board, after: LeaderboardPosition, limit: Int,
                                  _ tx: PostgresTransaction) async throws -> [BoardRow] {
        try await tx.rows("""
            (SELECT t.user_id AS id, u.username, u.display_name, t.value, t.reached_at FROM tallies t JOIN users u ON u.id = t.user_id
             WHERE t.metric = \(board.metric) AND t.scope = \(board.scope) AND t.period = \(board.period)
                 AND t.value = \(after.value) AND (t.reached_at, t.user_id) > (\(after.reachedAt), \(after.user.rawValue))
                 AND t.user_id NOT IN (SELECT blocked FROM blocks WHERE blocker = \(board.viewer)
                                       UNION SELECT blocker FROM blocks WHERE blocked = \(board.viewer))
             ORDER BY t.value DESC, t.reached_at, t.user_id LIMIT \(limit))
            UNION ALL
            (SELECT t.user_id AS id, u.username, u.display_name, t.value, t.reached_at FROM tallies t JOIN users u ON u.id = t.user_id
             WHERE t.metric = \(board.metric) AND t.scope = \(board.scope) AND t.period = \(board.period)
                 AND t.value < \(after.value)
                 AND t.user_id NOT IN (SELECT blocked FROM blocks WHERE blocker = \(board.viewer)
                                       UNION SELECT blocker FROM blocks WHERE blocked = \(board.viewer))
             ORDER BY t.value DESC, t.reached_at, t.user_id LIMIT \(limit))
            ORDER BY value DESC, reached_at, id LIMIT \(limit)
            """).map(Self.boardRow)
    }

    /// The board of the viewer and their friends: each one's tally looked up by the friend list
    /// (a board filtered by friends would walk every rider ranked above the last friend), sorted
    /// and ranked here.
    private static func friendsLeaderboard(_ board: Board, limit: Int, offset: Int, after: LeaderboardPosition?,
                                           _ tx: PostgresTransaction) async throws -> (entries: [LeaderboardEntry], mine: LeaderboardEntry?) {
        let rows = try await tx.rows("""
            SELECT t.user_id, u.username, u.display_name, t.value, t.reached_at
            FROM (SELECT \(board.viewer)::bigint AS id
                  UNION SELECT CASE WHEN requester = \(board.viewer) THEN addressee ELSE requester END FROM friendships
                  WHERE (requester = \(board.viewer) OR addressee = \(board.viewer)) AND status = 'accepted') f
            JOIN tallies t ON t.metric = \(board.metric) AND t.scope = \(board.scope) AND t.period = \(board.period) AND t.user_id = f.id
            JOIN users u ON u.id = t.user_id
            WHERE t.user_id NOT IN (SELECT blocked FROM blocks WHERE blocker = \(board.viewer)
                                    UNION SELECT blocker FROM blocks WHERE blocked = \(board.viewer))
            """)
        var entries = try rows.map { Self.entry(try Self.boardRow($0), rank: 0) }
        entries.sort { $0.position.precedes($1.position) }
        for i in entries.indices { entries[i].rank = i + 1 }
        let start = after.map { after in entries.firstIndex { after.precedes($0.position) } ?? entries.endIndex } ?? offset
        return (Array(entries.dropFirst(start).prefix(limit)), entries.first { $0.user.id.rawValue == board.viewer })
    }

    /// Riders of `board` ranked ahead of a place on it, less those blocked either way by its
    /// viewer, in one statement (``TallyCounts``). `tally_minute` is the triggers' own slot; the
    /// sums are `float8`, as SQLite's `total()` gives them (exact for any count of riders).
    private static func ahead(_ place: LeaderboardPosition, _ board: Board, _ tx: PostgresTransaction) async throws -> Int {
        let (day, hour, minute) = TallyCounts.slots(place.reachedAt)
        let from = TallyCounts.firstTime(ofMinute: minute)
        let (metric, scope, period, viewer) = (board.metric, board.scope, board.period, board.viewer)
        let (value, reached, rider) = (place.value, place.reachedAt, place.user.rawValue)
        let row = try await tx.one("""
            SELECT (SELECT coalesce(sum(riders), 0)::float8 FROM tally_counts
                    WHERE metric = \(metric) AND scope = \(scope) AND period = \(period) AND level = 0 AND value > \(value))
                 + (SELECT coalesce(sum(riders), 0)::float8 FROM tally_counts
                    WHERE metric = \(metric) AND scope = \(scope) AND period = \(period) AND level = 1 AND value = \(value)
                      AND slot < \(day))
                 + (SELECT coalesce(sum(riders), 0)::float8 FROM tally_counts
                    WHERE metric = \(metric) AND scope = \(scope) AND period = \(period) AND level = 2 AND value = \(value)
                      AND slot >= \(day) * 24 AND slot < \(hour))
                 + (SELECT coalesce(sum(riders), 0)::float8 FROM tally_counts
                    WHERE metric = \(metric) AND scope = \(scope) AND period = \(period) AND level = 3 AND value = \(value)
                      AND slot >= \(hour) * 60 AND slot < \(minute)),
                   (SELECT count(*) FROM tallies
                    WHERE metric = \(metric) AND scope = \(scope) AND period = \(period) AND value = \(value)
                      AND reached_at <= \(reached) AND reached_at >= \(from) AND tally_minute(reached_at) = \(minute)
                      AND (reached_at < \(reached) OR user_id < \(rider))),
                   (SELECT count(*) FROM (SELECT blocked FROM blocks WHERE blocker = \(viewer)
                                          UNION SELECT blocker FROM blocks WHERE blocked = \(viewer)) b
                    JOIN tallies t ON t.metric = \(metric) AND t.scope = \(scope) AND t.period = \(period) AND t.user_id = b.blocked
                    WHERE t.value > \(value) OR (t.value = \(value) AND (t.reached_at < \(reached)
                                                                       OR (t.reached_at = \(reached) AND t.user_id < \(rider)))))
            """)
        let (counted, tied, hidden) = try row.decode((Double, Int, Int).self)
        return Int(counted) + tied - hidden
    }

    /// A board's row as pages show it: the rider's id, username and display name, the value and
    /// when it was reached.
    private typealias BoardRow = (id: Int64, username: String, displayName: String, value: Int, reachedAt: Double)

    private static func boardRow(_ row: PostgresRow) throws -> BoardRow {
        try row.decode((Int64, String, String, Int, Double).self)
    }

    private static func entry(_ row: BoardRow, rank: Int) -> LeaderboardEntry {
        LeaderboardEntry(rank: rank, user: UserSummary(id: UserID(row.id), username: row.username, displayName: row.displayName),
                         value: row.value, reachedAt: row.reachedAt)
    }
}

/// Which board a page reads, and whose blocks it leaves out.
private struct Board: Sendable {
    var metric: String
    var scope: String
    var period: String
    var viewer: Int64
}

/// A ride log to count on the leaderboards (``PostgresStore/tally(_:_:)``).
struct TallyLog: Sendable {
    /// The log's id: logs with lower ids came before it.
    var id: Int64
    var user: UserID
    var ride: RideID
    var park: ParkID
    /// Whether the ride is a coaster (a coaster's first ride of a period is a credit).
    var isCoaster: Bool
    /// When it was ridden, seconds since 1970.
    var at: Double
}
