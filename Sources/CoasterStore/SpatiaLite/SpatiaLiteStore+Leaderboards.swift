import CoasterCore
import Foundation
import GRDB

extension SpatiaLiteStore {
    /// Counts on the leaderboards every ride log older than `cutoff` not yet counted, oldest
    /// first, at most `limit` of them in this transaction; returns how many were counted.
    ///
    /// A board never shows a ride younger than the location time-to-live: a tally that moved as
    /// a ride was logged told any reader which ride its rider was on, and when, whatever their
    /// sharing (ghost mode included). Ride logs are written with the server's clock, so their
    /// ids and times rise together and the mark is an id.
    @discardableResult
    public func settleTallies(through cutoff: Date, limit: Int) async throws -> Int {
        try await self.pool.write { db in
            let mark = try Int64.fetchOne(db, sql: "SELECT through_log FROM tally_mark WHERE id = 1") ?? 0
            let rows = try Row.fetchAll(db.cachedStatement(sql: """
                SELECT l.id AS log_id, l.user_id AS log_user, l.ridden_at AS log_at, r.*
                FROM ride_logs l JOIN rides r ON r.id = l.ride_id WHERE l.id > ? ORDER BY l.id LIMIT ?
                """), arguments: [mark, limit])
            var last = mark, counted = 0
            for row in rows {
                let at: Double = row["log_at"]
                // The first log still younger than the cutoff holds back the ones after it.
                guard at <= cutoff.timeIntervalSince1970 else { break }
                let id: Int64 = row["log_id"]
                try Self.tally(user: UserID(row["log_user"] as Int64), ride: RideRecord(row: row).ride, at: Date(timeIntervalSince1970: at),
                               before: id, db)
                last = id
                counted += 1
            }
            if last != mark { try db.execute(sql: "UPDATE tally_mark SET through_log = ? WHERE id = 1", arguments: [last]) }
            return counted
        }
    }

    /// Marks every ride log written so far as counted (a bulk load counts its own).
    static func markTalliesSettled(_ db: Database) throws {
        try db.execute(sql: "UPDATE tally_mark SET through_log = (SELECT coalesce(max(id), 0) FROM ride_logs) WHERE id = 1")
    }

    /// Adds one ride to the leaderboards: rides, first-time coaster credits, and per-ride counts,
    /// for every period and for the global and park scopes. `before`: the log's own id (logs
    /// with lower ids came before it); `nil` when the log row is not written yet.
    static func tally(user: UserID, ride: Ride, at: Date, before logID: Int64? = nil, _ db: Database) throws {
        let upsert = try db.cachedStatement(sql: """
            INSERT INTO tallies (metric, scope, period, user_id, value, reached_at) VALUES (?, ?, ?, ?, 1, ?)
            ON CONFLICT (metric, scope, period, user_id) DO UPDATE SET value = value + 1, reached_at = excluded.reached_at
            """)
        let t = at.timeIntervalSince1970
        let scopes = ["global", "park:" + ride.park.rawValue]
        for (period, start) in Periods.starts(at) {
            for scope in scopes {
                try upsert.execute(arguments: ["rides", scope, period, user.rawValue, t])
            }
            try upsert.execute(arguments: ["ride:" + ride.id.rawValue, "global", period, user.rawValue, t])
            if ride.type == .coaster {
                let before = try Bool.fetchOne(
                    db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM ride_logs WHERE user_id = ? AND ride_id = ? AND ridden_at >= ? AND id < ?)"),
                    arguments: [user.rawValue, ride.id.rawValue, start.isFinite ? start : -1e18, logID ?? Int64.max]) ?? false
                if !before {
                    for scope in scopes { try upsert.execute(arguments: ["credits", scope, period, user.rawValue, t]) }
                }
            }
        }
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
    /// ranked above, each looked up.
    public func leaderboard(_ query: LeaderboardQuery, viewer: UserID, limit: Int, offset: Int,
                            after: LeaderboardPosition? = nil) async throws -> (entries: [LeaderboardEntry], mine: LeaderboardEntry?) {
        let period = Periods.key(query.window, self.now())
        return try await self.pool.read { db in
            let scope: String
            switch query.scope {
            case .global, .friends: scope = "global"
            case .park(let park): scope = "park:" + park.rawValue
            }
            let arguments: StatementArguments = ["metric": query.metric.key, "scope": scope, "period": period, "me": viewer.rawValue]
            if query.scope == .friends {
                return try Self.friendsLeaderboard(of: viewer, arguments, limit: limit, offset: offset, after: after, db)
            }
            var entries: [LeaderboardEntry]
            if let after {
                let rows = try Row.fetchAll(db.cachedStatement(sql: Self.boardPageAfter), arguments: arguments + [
                    "value": after.value, "reached": after.reachedAt, "rider": after.user.rawValue, "limit": limit,
                ])
                entries = rows.map { Self.entry($0, rank: 0) }
                if let first = entries.first {
                    let ahead = try TallyCounts.ahead(first.position, arguments, db)
                    for i in entries.indices { entries[i].rank = ahead + i + 1 }
                }
            } else {
                let page = try db.cachedStatement(sql: """
                    \(Self.boardRows) WHERE t.metric = :metric AND t.scope = :scope AND t.period = :period
                        AND t.user_id NOT IN (\(Self.blockedEitherWay))
                    ORDER BY t.value DESC, t.reached_at, t.user_id LIMIT :limit OFFSET :offset
                    """)
                let rows = try Row.fetchAll(page, arguments: arguments + ["limit": limit, "offset": offset])
                entries = rows.enumerated().map { i, row in Self.entry(row, rank: offset + i + 1) }
            }
            let mine = try db.cachedStatement(sql: """
                \(Self.boardRows) WHERE t.metric = :metric AND t.scope = :scope AND t.period = :period AND t.user_id = :me
                """)
            guard let row = try Row.fetchOne(mine, arguments: arguments) else { return (entries, nil) }
            var me = Self.entry(row, rank: 0)
            me.rank = try TallyCounts.ahead(me.position, arguments, db) + 1
            return (entries, me)
        }
    }

    static func entry(_ row: Row, rank: Int) -> LeaderboardEntry {
        LeaderboardEntry(rank: rank, user: Self.summary(row), value: row["value"], reachedAt: row["reached_at"])
    }

    /// A page of a global or park board after a place (`:value`, `:reached`, `:rider`): the
    /// riders tied on its value after it, then those of lower values, each a range of the rank
    /// index in its order, merged until the page is full. A page costs its length, however deep.
    static let boardPageAfter = """
        \(boardRows) WHERE t.metric = :metric AND t.scope = :scope AND t.period = :period
            AND t.value = :value AND (t.reached_at, t.user_id) > (:reached, :rider) AND t.user_id NOT IN (\(blockedEitherWay))
        UNION ALL
        \(boardRows) WHERE t.metric = :metric AND t.scope = :scope AND t.period = :period
            AND t.value < :value AND t.user_id NOT IN (\(blockedEitherWay))
        ORDER BY value DESC, reached_at, id LIMIT :limit
        """

    /// A board's columns as pages show them: the tally `t` and its user `u`'s names.
    static let boardColumns = "t.user_id AS id, u.username, u.display_name, t.value, t.reached_at"

    /// A board's rows as pages show them.
    static let boardRows = "SELECT \(boardColumns) FROM tallies t JOIN users u ON u.id = t.user_id"

    /// The users `:me` has blocked and those who blocked them, for `NOT IN (…)`.
    static let blockedEitherWay = "SELECT blocked FROM blocks WHERE blocker = :me UNION SELECT blocker FROM blocks WHERE blocked = :me"

    /// The viewer's and their friends' tallies on the board of `:metric`, `:scope`, `:period`.
    /// CROSS JOIN keeps the friend list outside: SQLite would otherwise walk the board.
    static let friendsBoard = """
        SELECT \(boardColumns)
        FROM (SELECT :me AS id UNION SELECT CASE WHEN requester = :me THEN addressee ELSE requester END FROM friendships
              WHERE (requester = :me OR addressee = :me) AND status = 'accepted') f
        CROSS JOIN tallies t ON t.metric = :metric AND t.scope = :scope AND t.period = :period AND t.user_id = f.id
        JOIN users u ON u.id = t.user_id
        WHERE t.user_id NOT IN (\(SpatiaLiteStore.blockedEitherWay))
        """

    /// The board of the viewer and their friends: each one's tally looked up by the friend list
    /// (a board filtered by friends would walk every rider ranked above the last friend), sorted
    /// and ranked here.
    private static func friendsLeaderboard(of viewer: UserID, _ arguments: StatementArguments, limit: Int, offset: Int,
                                           after: LeaderboardPosition?, _ db: Database) throws -> (entries: [LeaderboardEntry], mine: LeaderboardEntry?) {
        var entries = try Row.fetchAll(db.cachedStatement(sql: Self.friendsBoard), arguments: arguments).map { Self.entry($0, rank: 0) }
        entries.sort { $0.position.precedes($1.position) }
        for i in entries.indices { entries[i].rank = i + 1 }
        let start = after.map { after in entries.firstIndex { after.precedes($0.position) } ?? entries.endIndex } ?? offset
        return (Array(entries.dropFirst(start).prefix(limit)), entries.first { $0.user.id == viewer })
    }
}

/// The SQLite side of ``TallyCounts``: its sums, the count within a minute and the blocked riders
/// ahead, as statements on this store's schema.
extension TallyCounts {
    private static let board = "metric = :metric AND scope = :scope AND period = :period"

    /// The riders at higher values, and at the same value in earlier days, hours of the day and
    /// minutes of the hour.
    static let sums = """
        SELECT (SELECT total(riders) FROM tally_counts WHERE \(board) AND level = 0 AND value > :value)
             + (SELECT total(riders) FROM tally_counts WHERE \(board) AND level = 1 AND value = :value AND slot < :day)
             + (SELECT total(riders) FROM tally_counts WHERE \(board) AND level = 2 AND value = :value AND slot >= :day * 24 AND slot < :hour)
             + (SELECT total(riders) FROM tally_counts WHERE \(board) AND level = 3 AND value = :value AND slot >= :hour * 60 AND slot < :minute)
        """

    /// The riders at the same value ahead within the minute: they lie between its first second
    /// (less one, for the rounding of the division) and the rider's own time on the rank index;
    /// the slot's own test decides.
    static let within = """
        SELECT count(*) FROM tallies WHERE \(board) AND value = :value AND reached_at <= :reached AND reached_at >= :from
            AND CAST(max(reached_at, 0) / 60 AS INTEGER) = :minute AND (reached_at < :reached OR user_id < :rider)
        """

    /// The blocked riders ahead: they are few, each one's tally looked up (CROSS JOIN keeps the
    /// blocks outside).
    static let blockedAhead = """
        SELECT count(*) FROM (\(SpatiaLiteStore.blockedEitherWay)) b CROSS JOIN tallies t
            ON t.metric = :metric AND t.scope = :scope AND t.period = :period AND t.user_id = b.blocked
        WHERE t.value > :value OR (t.value = :value AND (t.reached_at < :reached OR (t.reached_at = :reached AND t.user_id < :rider)))
        """

    /// Riders of the board in `arguments` (`:metric`, `:scope`, `:period`) ranked ahead of a
    /// place on it, less those blocked either way by the viewer `:me`.
    static func ahead(_ place: LeaderboardPosition, _ arguments: StatementArguments, _ db: Database) throws -> Int {
        let (day, hour, minute) = Self.slots(place.reachedAt)
        let sums = try db.cachedStatement(sql: Self.sums)
        let within = try db.cachedStatement(sql: Self.within)
        let blocked = try db.cachedStatement(sql: Self.blockedAhead)
        let all = arguments + [
            "value": place.value, "reached": place.reachedAt, "rider": place.user.rawValue, "day": day, "hour": hour, "minute": minute,
            "from": Self.firstTime(ofMinute: minute),
        ]
        let counted = try Double.fetchOne(sums, arguments: all) ?? 0
        let tied = try Int.fetchOne(within, arguments: all) ?? 0
        let hidden = try Int.fetchOne(blocked, arguments: all) ?? 0
        return Int(counted) + tied - hidden
    }
}
