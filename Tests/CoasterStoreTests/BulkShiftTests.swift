import CoasterCore
@testable import CoasterStore
import CoasterTestSupport
import Foundation
import GRDB
import Testing

/// A benchmark world kept on disk is moved to the present before each use
/// (`SpatiaLiteStore.bulkShiftTimes`): it must then be the world a load at that moment writes.
@Suite("Moving a bulk-loaded world in time")
struct BulkShiftTests {
    /// 2026-12-30 12:00 UTC, a Wednesday: the shift below crosses into another ISO week and year,
    /// so every period key of the tallies changes. Whole seconds, so that adding them in SQL and
    /// in `Date` gives the same doubles.
    static let loadedAt = Date(timeIntervalSince1970: 1_798_632_000)
    static let shift: TimeInterval = 3 * 86_400 + 7 * 3_600 + 17

    /// A small world as `coasterbench load` writes one, every time relative to `base`.
    static func load(into store: SpatiaLiteStore, at base: Date) async throws {
        let park = try Parks.definition("cedar-point")
        _ = try await store.replaceParks([park])
        let rides: [Ride] = park.rides.sorted { $0.id.rawValue < $1.id.rawValue }
        let position = Coordinate(lat: 41.4822, lon: -82.6835)
        let users: [BulkUser] = (1...30).map { (i: Int) -> BulkUser in
            BulkUser(id: UserID(Int64(i)), username: "user\(i)", displayName: "User \(i)", passwordHash: "x",
                     latest: AcceptedFix(position: position, accuracy: 8, recordedAt: base.addingTimeInterval(-60)),
                     zones: [], visits: i % 3 == 0 ? [] : [(park.park.id, base)],
                     tokenHash: i % 5 == 0 ? Data(repeating: UInt8(i), count: 32) : nil)
        }
        let friendships = (1...29).map { (UserID(Int64($0)), UserID(Int64($0 + 1))) }
        try await store.bulkLoad(users: users, friendships: friendships)
        // Rides over the last nine days, some twice: first rides of a week are credits.
        let logs: [BulkRide] = (0..<120).map { (n: Int) -> BulkRide in
            BulkRide(user: UserID(Int64(n % 30 + 1)), ride: rides[n * 7 % rides.count],
                     at: base.addingTimeInterval(-Double(n) * 6_481))
        }.sorted { $0.at < $1.at }
        try await store.bulkLogRides(logs)
        let messages: [BulkMessage] = (0..<40).map { (n: Int) -> BulkMessage in
            BulkMessage(sender: UserID(Int64(n % 29 + 1)), recipient: UserID(Int64(n % 29 + 2)), body: "Meet at the exit?",
                        sentAt: base.addingTimeInterval(-Double(40 - n) * 900), readAt: n % 4 == 0 ? nil : base.addingTimeInterval(-30))
        }
        try await store.bulkSendMessages(messages)
    }

    /// Every row of every table, the tables by name and their rows in order; the server's random
    /// secret and SpatiaLite's own logs (wall-clock times of its own) left out.
    static func dump(_ store: SpatiaLiteStore) async throws -> [String: [String]] {
        try await store.pool.read { db in
            let tables = try String.fetchAll(db, sql: """
                SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
                    AND name NOT IN ('secrets', 'spatialite_history', 'sql_statements_log', 'geometry_columns_time')
                """)
            var dump: [String: [String]] = [:]
            for table in tables {
                let width = try Row.fetchOne(db, sql: "SELECT count(*) FROM pragma_table_info(?)", arguments: [table])?[0] as Int? ?? 0
                guard width > 0 else { continue }
                let order = (1...width).map(String.init).joined(separator: ", ")
                dump[table] = try Row.fetchAll(db, sql: "SELECT * FROM \(table.quotedDatabaseIdentifier) ORDER BY \(order)").map(\.description)
            }
            return dump
        }
    }

    @Test(.enabled(if: TestDatabase.isSQLite)) func aMovedWorldIsTheWorldLoadedLater() async throws {
        let early = try await TemporaryStore(now: { Self.loadedAt })
        let late = try await TemporaryStore(now: { Self.loadedAt.addingTimeInterval(Self.shift) })
        defer { early.remove(); late.remove() }
        try await Self.load(into: early.sqlite, at: Self.loadedAt)
        try await Self.load(into: late.sqlite, at: Self.loadedAt.addingTimeInterval(Self.shift))
        let before = try await Self.dump(early.sqlite)
        #expect(before != (try await Self.dump(late.sqlite)))
        // all, y2026, w2026-W52 and w2026-W53; moved, the rides of 2027 are on y2027's board too.
        #expect(try await early.sql.int("SELECT count(DISTINCT period) FROM tallies") == 4)

        try await early.sqlite.bulkShiftTimes(by: Self.shift, chunk: 7)
        let moved = try await Self.dump(early.sqlite), loaded = try await Self.dump(late.sqlite)
        #expect(moved.keys.sorted() == loaded.keys.sorted())
        for table in loaded.keys.sorted() {
            #expect(moved[table] == loaded[table], "\(table)")
        }
        #expect(try await early.sql.int("SELECT count(DISTINCT period) FROM tallies") == 5)
        #expect(moved["track_state"]?.isEmpty == false)
    }

    /// A world that served requests holds times no load wrote; moving only some of them would
    /// leave it inconsistent, so nothing is moved.
    @Test(.enabled(if: TestDatabase.isSQLite), arguments: [
        ("blocks", "INSERT INTO blocks (blocker, blocked, created_at) VALUES (1, 2, 1798632000)"),
        ("user_follows", "INSERT INTO user_follows (follower_id, followee_id, at) VALUES (1, 2, 1798632000)"),
        ("ride_logs", "INSERT INTO ride_logs (user_id, ride_id, ridden_at) SELECT 1, id, 1798632000 FROM rides LIMIT 1"),
    ])
    func aWorldThatServedIsNotMoved(table: String, served: String) async throws {
        let t = try await TemporaryStore(now: { Self.loadedAt })
        defer { t.remove() }
        try await Self.load(into: t.sqlite, at: Self.loadedAt)
        try await t.sqlite.bulkShiftTimes(by: 0)
        try await t.sql.execute(served)
        let before = try await Self.dump(t.sqlite)
        let error = await #expect(throws: StoreError.self) { try await t.sqlite.bulkShiftTimes(by: Self.shift) }
        #expect(error == .notABulkLoad(path: t.sqlite.path, table: table))
        #expect(try await Self.dump(t.sqlite) == before)
    }
}
