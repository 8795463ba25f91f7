@testable import CoasterStore
import CoasterTestSupport
import Foundation
import GRDB
import Testing

/// Statements on per-request paths search an index; a full scan of a table that grows with parks,
/// users or reports is a slow request waiting for enough data.
@Suite("Query plans", .enabled(if: TestDatabase.isSQLite))
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
    @Test(arguments: [SpatiaLiteStore.rideHistoryPage, SpatiaLiteStore.visitPage])
    func historyPagesReadOnlyThePage(_ sql: String) async throws {
        let plan = try await Self.plan(sql, [1, Int64.max, 50])
        #expect(plan.contains { $0.contains("_paged (user_id=? AND rowid<?)") }, "\(plan)")
        #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(plan)")
    }

    /// A ride log or a visit checks the rider's lists on `list_items_open`: when no list of theirs
    /// holds the ride or park, a probe that finds nothing (the cost every log pays).
    @Test(arguments: [SpatiaLiteStore.rideChanges, SpatiaLiteStore.rideChecks, SpatiaLiteStore.parkChanges, SpatiaLiteStore.parkChecks])
    func listChecksProbeTheOpenItems(_ sql: String) async throws {
        let plan = try await Self.plan(sql, ["user": 1, "target": "p.r", "source": "visit", "at": 0, "shown": 0])
        #expect(plan.contains { $0.contains("list_items_open (owner_id=? AND kind=? AND target_id=?)") }, "\(plan)")
        #expect(plan.allSatisfy { !$0.hasPrefix("SCAN") }, "\(plan)")
    }

    /// Every statement written out in the store's sources (those whose text is whole there; the
    /// interpolated ones, the leaderboards' among them, have tests of their own): no scan of a
    /// table and no sort for an ORDER BY, but for the few listed here with why. A list that grows
    /// without bound and is read in pages without an index in its order (a history page that
    /// sorts all of a user's rows, say) shows here first.
    @Test func everyStatementSearchesAnIndexOrSaysWhyNot() async throws {
        let allowed: [(statement: String, step: String, why: String)] = [
            ("SELECT id, imported_at FROM parks", "SCAN parks", "every park: a handful"),
            ("SELECT id FROM catalog_parks", "SCAN catalog_parks", "a bulk load of posts checks its tags against the whole catalogue, once"),
            ("SELECT id, ride_id, park_id FROM catalog_rides", "SCAN catalog_rides", "a bulk load of posts checks its tags against the whole catalogue, once"),
            ("SELECT p.id, p.name, p.time_zone", "SCAN p", "the park list: every park"),
            ("SELECT p.id, p.name, p.time_zone", "USE TEMP B-TREE FOR ORDER BY", "the park list: every park"),
            ("SELECT p.id FROM idx_parks_boundary r", "SCAN r VIRTUAL TABLE INDEX", "the parks' R*Tree, searched by its bounds"),
            ("SELECT p.id FROM idx_parks_boundary r", "USE TEMP B-TREE FOR ORDER BY", "the few parks whose bounds hold a point"),
            ("SELECT count(*) FROM owntracks_transitions WHERE user_id = ?", "SCAN owntracks_transitions", "for tests only"),
            ("SELECT u.id, u.username, u.display_name, u.ghost, u.ghost_until, u.precision, u.last_seen_at, f.accepted_at",
             "USE TEMP B-TREE FOR ORDER BY", "a page of the friend list by name, which no index holds: at most 5,000 (docs: OperationsAndSecurity, Limits)"),
            ("SELECT u.id, u.username, u.display_name, f.created_at FROM friendships f JOIN users u ON u.id = f.addressee",
             "USE TEMP B-TREE FOR ORDER BY", "a user's own requests waiting on others: at most 1,000 (docs: OperationsAndSecurity, Limits)"),
            ("WITH RECURSIVE seen(park)", "SCAN seen", "the parks a user visited, found one by one on an index"),
            ("SELECT count(*) FROM (SELECT 1 FROM visits", "SCAN (subquery", "a reporter's first two visits, a range of an index"),
            ("SELECT DISTINCT sha256, format FROM photos", "SCAN photos", "every photo file: a backup, or the sweep at start"),
            ("SELECT source, source_id AS id, amount, at", "USE TEMP B-TREE FOR ORDER BY",
             "a member's newest 50 counted items in one challenge: their credits (logs and visits of its window) and entries (at most 1,000)"),
            ("WITH recent(challenge_id, n)", "SCAN r", "trending: one row a challenge joined or liked since a time (a week)"),
            ("WITH recent(challenge_id, n)", "USE TEMP B-TREE FOR ORDER BY", "trending: by a score of recent joins and likes, which no index holds"),
            ("SELECT (SELECT count(*) FROM catalog_rides)", "SCAN catalog_", "the catalogue's size for /ready and an import's summary: two counts"),
            ("SELECT p.id, p.name, p.fenced FROM catalog_parks_fts", "SCAN catalog_parks_fts VIRTUAL TABLE INDEX 0:M",
             "the parks' name index, searched by its words (FTS5)"),
            ("SELECT p.id, p.name, p.fenced FROM catalog_parks_fts", "USE TEMP B-TREE FOR ORDER BY",
             "the parks whose names hold every word of a search, by name: a handful"),
            ("SELECT r.rowid, r.*, p.name AS park_name", "SCAN json_each VIRTUAL TABLE", "the rowids of a search's page: at most 50"),
            ("DELETE FROM catalog_parks_fts WHERE rowid", "SCAN catalog_parks_fts VIRTUAL TABLE INDEX 0:=",
             "a park's entry in the name index, by its rowid (FTS5's own lookup)"),
            ("SELECT kind, value FROM post_tags WHERE post_id = ?", "USE TEMP B-TREE FOR ORDER BY",
             "a post's tagged parks and rides in the author's order: at most 30"),
            ("SELECT p.*, u.username, u.display_name, r.value AS reaction", "SCAN json_each VIRTUAL TABLE", "the ids of a page of posts: at most 100"),
            ("SELECT post_id, photo_id FROM post_photos WHERE post_id IN", "SCAN json_each VIRTUAL TABLE",
             "the ids of a page of posts, for their photos: at most 100"),
            ("SELECT t.post_id, t.kind, t.value, cp.name AS park_name", "SCAN json_each VIRTUAL TABLE",
             "the ids of a page of posts, for their tags: at most 100"),
            ("SELECT r.*, p.name AS park_name, p.fenced AS park_fenced FROM catalog_rides r JOIN catalog_parks p ON p.id = r.park_id WHERE r.id IN",
             "SCAN json_each VIRTUAL TABLE", "the rides tagged on a page of posts: at most 2,000"),
            ("WITH points(user_id, lat, lon, checkin)", "SCAN points", "a park's density map: the day's fixes in its box, grouped by cell (DensityPlanTests)"),
            ("WITH points(user_id, lat, lon, checkin)", "SCAN c", "a park's density map: its cells, at most the box's, those that touch the park shown"),
            ("WITH points(user_id, lat, lon, checkin)", "USE TEMP B-TREE FOR ORDER BY", "a park's density map: its cells, the busiest first, which no index holds"),
            ("SELECT name FROM sqlite_master WHERE type = 'table'", "SCAN sqlite_master", "moving a kept benchmark world: every table, once"),
            ("SELECT name FROM sqlite_master WHERE type = 'table'", "USE TEMP B-TREE FOR ORDER BY", "moving a kept benchmark world: every table, once"),
            ("SELECT name FROM pragma_table_info(?)", "SCAN pragma_table_info", "moving a kept benchmark world: a table's columns, once"),
            ("SELECT name, sql FROM sqlite_master WHERE type = 'index'", "SCAN sqlite_master", "moving a kept benchmark world: a table's indexes, once"),
            ("SELECT through_log FROM tally_mark", "SCAN tally_mark", "one row"),
            ("DELETE FROM tallies", "SCAN tallies", "moving a kept benchmark world: the boards counted again from nothing"),
            // Planned, not run: SQLite searches a parent's children only when its key changes, and an
            // upsert of a park never changes its id (with a million photos tagged with a park, its
            // re-import took 0.07-0.08 s, as without them).
            ("INSERT INTO parks", "SCAN photos", "a park's import: the children's search is not run"),
            ("INSERT INTO parks", "SCAN visits", "a park's import: the children's search is not run"),
        ]
        let statements = try Self.storeStatements()
        #expect(statements.count >= 100, "found only \(statements.count) statements in the sources")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coasterlife-plans-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SpatiaLiteStore(path: directory.appendingPathComponent("plans.sqlite").path)
        defer { try? store.close() }
        let (checked, unexplained, used) = try await store.pool.read { db in
            var unexplained: [String] = []
            var used = Set<Int>()
            var checked = 0
            for sql in statements {
                // Every parameter NULL: the plan depends on the statement, not on them.
                let statement = try db.makeStatement(sql: "EXPLAIN QUERY PLAN " + sql)
                statement.setUncheckedArguments([])
                let plan = try Row.fetchAll(statement).map { $0["detail"] as String }
                checked += 1
                for step in plan where (step.hasPrefix("SCAN ") && step != "SCAN CONSTANT ROW") || step.contains("TEMP B-TREE FOR ORDER BY") {
                    if let reason = allowed.firstIndex(where: { sql.hasPrefix($0.statement) && step.hasPrefix($0.step) }) {
                        used.insert(reason)
                    } else {
                        unexplained.append("\(step) in \(sql)")
                    }
                }
            }
            return (checked, unexplained, used)
        }
        #expect(checked == statements.count)
        #expect(unexplained.isEmpty, "\(unexplained.joined(separator: "\n"))")
        // A reason no statement needs any more goes, so that the list stays the list of exceptions.
        let stale = allowed.indices.filter { !used.contains($0) }.map { "\(allowed[$0].statement): \(allowed[$0].step)" }
        #expect(stale.isEmpty, "\(stale)")
    }

    /// The SQL statements written out whole in `Sources/CoasterStore/SpatiaLite` (not the migrations' DDL),
    /// whitespace collapsed: string literals that begin with a statement's keyword and hold no
    /// interpolation, one statement each.
    static func storeStatements() throws -> [String] {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/CoasterStore/SpatiaLite")
        let literals = try NSRegularExpression(pattern: #"\"\"\"\n(.*?)\"\"\"|(?<!\")\"((?:[^"\\\n]|\\.)*)\"(?!\")"#, options: [.dotMatchesLineSeparators])
        let keyword = try NSRegularExpression(pattern: #"^\s*(SELECT|UPDATE|DELETE|INSERT|WITH|REPLACE)\b"#, options: [.caseInsensitive])
        var out = Set<String>()
        for name in try FileManager.default.contentsOfDirectory(atPath: sources.path) where name.hasSuffix(".swift") && name != "Migrations.swift" {
            let text = try String(contentsOf: sources.appendingPathComponent(name), encoding: .utf8)
            for match in literals.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                guard let range = [1, 2].lazy.compactMap({ Range(match.range(at: $0), in: text) }).first else { continue }
                let literal = String(text[range])
                guard keyword.firstMatch(in: literal, range: NSRange(literal.startIndex..., in: literal)) != nil,
                      !literal.contains("\\("), !literal.trimmingCharacters(in: .whitespacesAndNewlines).dropLast().contains(";") else { continue }
                out.insert(literal.split(whereSeparator: \.isWhitespace).joined(separator: " "))
            }
        }
        return out.sorted()
    }

    /// The steps of the plan SQLite makes for `sql` in a new, empty store.
    static func plan(_ sql: String, _ arguments: StatementArguments = []) async throws -> [String] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coasterlife-plans-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SpatiaLiteStore(path: directory.appendingPathComponent("plans.sqlite").path)
        defer { try? store.close() }
        return try await store.pool.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments).map { $0["detail"] as String }
        }
    }
}

/// A park's density map reads one day of fixes, not all of them, and the park's check-ins, not everyone's.
@Suite("Density query plans", .enabled(if: TestDatabase.isSQLite))
struct DensityPlanTests {
    @Test func theDayIsARangeOfTheTimeIndex() async throws {
        let cutoff = try await QueryPlanTests.plan(SpatiaLiteStore.densityCutoff, ["from": 0, "to": 1, "read": 5])
        #expect(cutoff == ["SEARCH fixes USING COVERING INDEX fixes_by_time (recorded_at>? AND recorded_at<?)"], "\(cutoff)")
        let cells = try await QueryPlanTests.plan(SpatiaLiteStore.densityCells, [
            "park": "p", "from": 0, "until": 1, "south": 0, "north": 1, "west": 0, "east": 1, "before": 600, "after": 120,
            "dlat": 0.0002, "dlon": 0.0003, "k": 3, "limit": 20_001,
        ])
        for step in [
            "SEARCH fixes USING INDEX fixes_by_time (recorded_at>? AND recorded_at<?)",
            "SEARCH v USING INDEX visits_checkins (park_id=? AND entered_at>? AND entered_at<?)",
            "SEARCH fixes USING COVERING INDEX sqlite_autoindex_fixes_1 (user_id=? AND recorded_at>? AND recorded_at<?)",
            "SEARCH f USING INTEGER PRIMARY KEY (rowid=?)",
            "SEARCH p USING INDEX sqlite_autoindex_parks_1 (id=?)",
        ] {
            #expect(cells.contains(step), "\(step) not in \(cells)")
        }
        // Whole tables are never read: only what the statement made itself (its points and cells).
        let tables: Set<Substring> = ["fixes", "f", "visits", "v", "parks", "p"]
        #expect(!cells.contains { $0.hasPrefix("SCAN ") && tables.contains($0.dropFirst(5).prefix { $0 != " " }) }, "\(cells)")
    }
}

/// A leaderboard request reads what the viewer's rank needs, not the riders ranked above them.
@Suite("Leaderboard query plans", .enabled(if: TestDatabase.isSQLite))
struct LeaderboardPlanTests {
    @Test(arguments: [
        // The friends' board: each friend's tally by its key, not the board filtered by friends.
        (SpatiaLiteStore.friendsBoard, "SEARCH t USING INDEX sqlite_autoindex_tallies_1 (metric=? AND scope=? AND period=? AND user_id=?)"),
        // The rank: sums of counts by their key ...
        (TallyCounts.sums, "SEARCH tally_counts USING PRIMARY KEY (metric=? AND scope=? AND period=? AND level=? AND value>?)"),
        (TallyCounts.sums, "SEARCH tally_counts USING PRIMARY KEY (metric=? AND scope=? AND period=? AND level=? AND value=? AND slot>? AND slot<?)"),
        // ... the riders of one minute on the rank index ...
        (TallyCounts.within, "SEARCH tallies USING COVERING INDEX tallies_rank (metric=? AND scope=? AND period=? AND value=? AND reached_at>? AND reached_at<?)"),
        // ... and the blocked riders' own tallies.
        (TallyCounts.blockedAhead, "SEARCH t USING INDEX sqlite_autoindex_tallies_1 (metric=? AND scope=? AND period=? AND user_id=?)"),
        // A page after a place: the riders tied with it after it, then the lower values, merged.
        (SpatiaLiteStore.boardPageAfter, "SEARCH t USING COVERING INDEX tallies_rank (metric=? AND scope=? AND period=? AND value=? AND (reached_at,user_id)>(?,?))"),
        (SpatiaLiteStore.boardPageAfter, "SEARCH t USING COVERING INDEX tallies_rank (metric=? AND scope=? AND period=? AND value<?)"),
        (SpatiaLiteStore.boardPageAfter, "MERGE (UNION ALL)"),
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
