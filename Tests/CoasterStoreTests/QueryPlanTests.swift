@testable import CoasterStore
import Foundation
import GRDB
import Testing

/// Statements on per-request paths search an index; a full scan of a table that grows with parks,
/// users or reports is a slow request waiting for enough data.
@Suite("Query plans")
struct QueryPlanTests {
    @Test(arguments: [
        // A wait or status report: the ride's zones.
        "SELECT id FROM zones WHERE ride_id = 'p.r' AND kind IN ('ride', 'queue')",
        // A report: the reporter's last report of the ride.
        "SELECT max(at) FROM wait_reports WHERE user_id = 1 AND ride_id = 'p.r' AND source = 'crowd'",
        "SELECT max(at) FROM status_reports WHERE user_id = 1 AND ride_id = 'p.r'",
        // A fix: replays by client id, open visits.
        "SELECT id FROM fixes WHERE user_id = 1 AND client_id = 'c'",
        "SELECT park_id, last_evidence_at FROM visits WHERE user_id = 1 AND left_at IS NULL",
    ])
    func searchesAnIndex(_ sql: String) async throws {
        let plan = try await Self.plan(sql)
        #expect(!plan.isEmpty && plan.allSatisfy { !$0.hasPrefix("SCAN") }, "\(plan)")
    }

    /// History pages (a rider's logged rides, their check-ins) are a range of an index in id order:
    /// no sort of all of the user's rows, which grow for as long as they ride.
    @Test(arguments: [Store.rideHistoryPage, Store.visitPage])
    func historyPagesReadOnlyThePage(_ sql: String) async throws {
        let plan = try await Self.plan(sql, [1, Int64.max, 50])
        #expect(plan.contains { $0.contains("_paged (user_id=? AND rowid<?)") }, "\(plan)")
        #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(plan)")
    }

    /// The steps of the plan SQLite makes for `sql` in a new, empty store.
    static func plan(_ sql: String, _ arguments: StatementArguments = []) async throws -> [String] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coasterlife-plans-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Store(path: directory.appendingPathComponent("plans.sqlite").path)
        defer { try? store.close() }
        return try await store.pool.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments).map { $0["detail"] as String }
        }
    }
}

/// A leaderboard request reads what the viewer's rank needs, not the riders ranked above them.
@Suite("Leaderboard query plans")
struct LeaderboardPlanTests {
    @Test(arguments: [
        // The friends' board: each friend's tally by its key, not the board filtered by friends.
        (Store.friendsBoard, "SEARCH t USING INDEX sqlite_autoindex_tallies_1 (metric=? AND scope=? AND period=? AND user_id=?)"),
        // The rank: sums of counts by their key ...
        (TallyCounts.sums, "SEARCH tally_counts USING PRIMARY KEY (metric=? AND scope=? AND period=? AND level=? AND value>?)"),
        (TallyCounts.sums, "SEARCH tally_counts USING PRIMARY KEY (metric=? AND scope=? AND period=? AND level=? AND value=? AND slot>? AND slot<?)"),
        // ... the riders of one minute on the rank index ...
        (TallyCounts.within, "SEARCH tallies USING COVERING INDEX tallies_rank (metric=? AND scope=? AND period=? AND value=? AND reached_at>? AND reached_at<?)"),
        // ... and the blocked riders' own tallies.
        (TallyCounts.blockedAhead, "SEARCH t USING INDEX sqlite_autoindex_tallies_1 (metric=? AND scope=? AND period=? AND user_id=?)"),
        // A page after a place: the riders tied with it after it, then the lower values, merged.
        (Store.boardPageAfter, "SEARCH t USING COVERING INDEX tallies_rank (metric=? AND scope=? AND period=? AND value=? AND (reached_at,user_id)>(?,?))"),
        (Store.boardPageAfter, "SEARCH t USING COVERING INDEX tallies_rank (metric=? AND scope=? AND period=? AND value<?)"),
        (Store.boardPageAfter, "MERGE (UNION ALL)"),
    ])
    func readsByKey(_ sql: String, _ step: String) async throws {
        let plan = try await QueryPlanTests.plan(sql, [
            "metric": "rides", "scope": "global", "period": "all", "me": 1, "rider": 2, "value": 3, "reached": 1e9, "from": 1e9 - 60, "limit": 50,
            "day": 11574, "hour": 277777, "minute": 16666666,
        ])
        #expect(plan.contains(step), "\(plan)")
        // Scans only of the friend or block list a subquery made, or of the one row of the sums;
        // no sort.
        #expect(plan.allSatisfy { !$0.hasPrefix("SCAN") || ["SCAN f", "SCAN b", "SCAN CONSTANT ROW"].contains($0) }, "\(plan)")
        #expect(!plan.contains { $0.contains("FOR ORDER BY") }, "\(plan)")
    }
}
