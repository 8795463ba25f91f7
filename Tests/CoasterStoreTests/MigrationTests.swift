@testable import CoasterStore
import CoasterTestSupport
import Foundation
import GRDB
import Testing

/// A database file as a store made up to `migration` (inclusive) left it, in a directory of its
/// own: what today's code must open and migrate.
struct OldStore {
    let directory: URL
    let path: String
    let pool: DatabasePool

    init(upTo migration: String) throws {
        self.directory = FileManager.default.temporaryDirectory.appendingPathComponent("coasterlife-migration-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: self.directory, withIntermediateDirectories: true)
        self.path = self.directory.appendingPathComponent("old.sqlite").path
        var configuration = Configuration()
        configuration.prepareDatabase { db in try SpatiaLite.attach(to: db) }
        self.pool = try DatabasePool(path: self.path, configuration: configuration)
        try Migrations.migrator.migrate(self.pool, upTo: migration)
    }

    func remove() {
        try? self.pool.close()
        try? FileManager.default.removeItem(at: self.directory)
    }
}

extension Database {
    /// Members `rider<id>` with these ids (placeholder names and password hash), for tests that
    /// write the rows a store holds.
    func addRiders(_ ids: some Sequence<Int64>) throws {
        for id in ids {
            try self.execute(sql: "INSERT INTO users (id, username, display_name, password_hash, role, created_at) VALUES (?, ?, 'R', 'x', 'member', 0)",
                             arguments: [id, "rider\(id)"])
        }
    }
}

/// Migrations that rebuild a table keep its rows and its rules.
@Suite("Migrations", .enabled(if: TestDatabase.isSQLite))
struct MigrationTests {
    /// A store made before "2026-11-22 fixes written with fewer pages", with fixes in it, opened by
    /// today's code: every fix kept with its id, the same uniqueness rules, new ids after the old.
    @Test func fixesKeepTheirRowsAndRulesThroughTheRebuild() throws {
        let file = try OldStore(upTo: "2026-11-22 zones by ride")
        defer { file.remove() }
        let (old, path) = (file.pool, file.path)
        let insert = """
            INSERT INTO fixes (id, user_id, client_id, lat, lon, accuracy, recorded_at, received_at, speed, altitude, source)
            VALUES (?, ?, ?, ?, ?, 8, ?, ?, NULL, NULL, 'api')
            """
        try old.write { db in
            try db.addRiders(1...2)
            try db.execute(sql: insert, arguments: [10, 1, "a", 41.48, -82.68, 100, 100])
            try db.execute(sql: insert, arguments: [11, 1, nil, 41.49, -82.68, 101, 101])
            try db.execute(sql: insert, arguments: [12, 1, nil, 41.50, -82.68, 102, 102])
            try db.execute(sql: insert, arguments: [40, 2, "a", 41.48, -82.68, 100, 100])
        }
        let before = try old.read { db in try Row.fetchAll(db, sql: "SELECT * FROM fixes ORDER BY id") }
        try old.close()

        let store = try SpatiaLiteStore(path: path)
        defer { try? store.close() }
        try store.pool.write { db in
            #expect(try Row.fetchAll(db, sql: "SELECT * FROM fixes ORDER BY id") == before)
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_sequence WHERE name = 'fixes'") == 0)
            // A client id once per user; any number of fixes without one.
            try db.execute(sql: insert + " ON CONFLICT DO NOTHING", arguments: [nil, 1, "a", 41.51, -82.68, 103, 103])
            #expect(db.changesCount == 0)
            try db.execute(sql: insert, arguments: [nil, 1, nil, 41.52, -82.68, 104, 104])
            #expect(db.lastInsertedRowID == 41)
            try db.execute(sql: insert, arguments: [nil, 1, "b", 41.53, -82.68, 105, 105])
            // The same time and place twice is still one fix.
            try db.execute(sql: insert + " ON CONFLICT DO NOTHING", arguments: [nil, 1, nil, 41.48, -82.68, 100, 200])
            #expect(db.changesCount == 0)
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM fixes") == 6)
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM pragma_foreign_key_check") == 0)
        }
    }
}
