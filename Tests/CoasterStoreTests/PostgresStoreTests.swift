import CoasterCore
@testable import CoasterStore
import CoasterTestSupport
import Foundation
import PostgresNIO
import Testing

/// What only the PostgreSQL store has: its server checks, its migrations, its locks.
@Suite("PostgreSQL store", .enabled(if: TestDatabase.kind == .postgres))
struct PostgresStoreTests {
    @Test func opensOnPostGISAndReopensWithoutMigratingTwice() async throws {
        let t = try await TemporaryStore()
        defer { t.remove() }
        let versions = try await t.store.versions()
        #expect(versions["postgis"]?.hasPrefix("3.") == true, "\(versions)")
        #expect((versions["postgresql"].flatMap { Int($0.prefix(while: \.isNumber)) } ?? 0) >= 15, "\(versions)")
        _ = try await t.store.replaceParks([try Parks.definition("kings-island")])
        let reopened = try await TestDatabase.open(in: t.directory)
        defer { try? reopened.close() }
        #expect(try await reopened.parkSummaries().map(\.id) == ["kings-island"])
        #expect(try await t.sql.int("SELECT count(*) FROM schema_migrations") == PostgresSchema.migrations.count)
    }

    /// The store's connections run without JIT, whatever the server's default: compiling a plan
    /// cost a post search ten times its run.
    @Test func connectionsRunWithoutJIT() async throws {
        let t = try await TemporaryStore()
        defer { t.remove() }
        #expect(try await t.sql.strings("SELECT current_setting('jit')") == ["off"])
        #expect(try await t.sql.strings("SELECT current_setting('statement_timeout')") == ["15s"])
    }

    /// A server short of a resource (class 53: a full disk, memory, a configured limit) makes the
    /// store unavailable, in the server's words, rather than failing with an error that names
    /// nothing: here a sort that must spill past a temporary-file limit of 64 kB.
    @Test func aServerShortOfAResourceIsUnavailableInItsOwnWords() async throws {
        let t = try await TemporaryStore()
        defer { t.remove() }
        let store = try #require(t.store as? PostgresStore)
        let error = await #expect(throws: StoreUnavailable.self) {
            try await store.transaction { tx in
                try await tx.run("SET LOCAL work_mem = '64kB'")
                try await tx.run("SET LOCAL temp_file_limit = '64kB'")
                try await tx.run("SELECT count(*) FROM (SELECT g FROM generate_series(1, 200000) g ORDER BY random()) s")
            }
        }
        #expect(String(describing: error).contains("temp_file_limit"), "\(String(describing: error))")
        #expect(String(describing: error).contains("SQLSTATE 53400"), "\(String(describing: error))")
        #expect(!PostgresStore.isUnavailable(sqlState: "23505") && !PostgresStore.isUnavailable(sqlState: "40001"))
    }

    /// A database a newer CoasterLife migrated is refused with a sentence, not half understood.
    @Test func aDatabaseOfANewerVersionIsRefused() async throws {
        let t = try await TemporaryStore()
        defer { t.remove() }
        try await t.sql.execute("INSERT INTO schema_migrations (identifier, applied_at) VALUES ('2099-01-01 from the future', 0)")
        let error = await #expect(throws: StoreError.self) { _ = try await TestDatabase.open(in: t.directory) }
        #expect(String(describing: error).contains("2099-01-01 from the future"), "\(String(describing: error))")
        #expect(String(describing: error).contains("newer CoasterLife"))
    }

    /// Users' locks serialise what a use case reads, decides and writes for them: requests between
    /// two people sent both ways at once end as one friendship, whichever way they raced.
    @Test func requestsBothWaysAtOnceMakeOneFriendship() async throws {
        let t = try await TemporaryStore()
        defer { t.remove() }
        for round in 0..<10 {
            let a = try await t.store.createUser(username: "a\(round)", displayName: "A", passwordHash: "x", role: .member).id
            let b = try await t.store.createUser(username: "b\(round)", displayName: "B", passwordHash: "x", role: .member).id
            async let one = t.store.requestFriend(from: a, to: "b\(round)")
            async let two = t.store.requestFriend(from: b, to: "a\(round)")
            _ = try await (one, two)
            let rows = try await t.sql.ints("SELECT count(*) FROM friendships WHERE (requester = ? AND addressee = ?) OR (requester = ? AND addressee = ?)",
                                            [a.rawValue, b.rawValue, b.rawValue, a.rawValue])
            #expect(rows == [1], "round \(round)")
            #expect(try await t.store.friends(of: a).map(\.user.id) == [b], "round \(round)")
        }
    }

    /// The leaderboards' counts are kept by statement triggers that sum a statement's tallies by
    /// count row: after tallies inserted, upserted, moved, deleted and cascaded away with their
    /// users, every count equals what the tallies say, and none is left at zero.
    @Test func countsFollowEveryTallyWrittenMovedAndDeleted() async throws {
        let t = try await TemporaryStore()
        defer { t.remove() }
        try await t.sql.addRiders(1...300)
        let statements = [
            "INSERT INTO tallies (metric, scope, period, user_id, value, reached_at) SELECT 'rides', 'global', 'all', g, 1 + g % 3, 1795000000 + g * 7.5 FROM generate_series(1, 300) g",
            """
            INSERT INTO tallies AS t (metric, scope, period, user_id, value, reached_at) SELECT 'rides', 'global', 'all', g, 9, 1795000100 FROM generate_series(1, 150) g
            ON CONFLICT (metric, scope, period, user_id) DO UPDATE SET value = t.value + excluded.value, reached_at = excluded.reached_at
            """,
            "INSERT INTO tallies (metric, scope, period, user_id, value, reached_at) VALUES ('rides', 'park:x', 'all', 1, 1, -90)",
            "DELETE FROM tallies WHERE user_id % 5 = 0",
            "DELETE FROM users WHERE id % 7 = 0",
            "UPDATE tallies SET reached_at = reached_at + 3600 WHERE user_id % 11 = 0",
        ]
        let differing = """
            WITH want AS (SELECT metric, scope, period, l.level, value, l.slot, count(*) AS riders
                          FROM tallies t CROSS JOIN LATERAL tally_slots(t.reached_at) l GROUP BY 1, 2, 3, 4, 5, 6)
            SELECT (SELECT count(*) FROM (SELECT * FROM want EXCEPT SELECT * FROM tally_counts) a)
                 + (SELECT count(*) FROM (SELECT * FROM tally_counts EXCEPT SELECT * FROM want) b)
            """
        for statement in statements {
            try await t.sql.execute(statement)
            #expect(try await t.sql.int(differing) == 0, "after \(statement)")
        }
        #expect(try await t.sql.int("SELECT count(*) FROM tally_counts") ?? 0 > 0)
        try await t.sql.execute("DELETE FROM tallies")
        #expect(try await t.sql.int("SELECT count(*) FROM tally_counts") == 0)
    }

    /// The catalogue's migration makes the parks and rides loaded before it its first entries, in
    /// Swift (their documents are CatalogText's): run again on a database whose catalogue is
    /// emptied, it gives every park and ride its entry, linked to itself, found by its words.
    @Test func loadedParksAndRidesBecomeCatalogueEntries() async throws {
        let t = try await TemporaryStore()
        defer { t.remove() }
        let store = try #require(t.store as? PostgresStore)
        _ = try await store.replaceParks([try Parks.definition("kings-island")])
        let rides = try #require(try await t.sql.int("SELECT count(*) FROM rides"))
        try await t.sql.execute("DELETE FROM catalog_rides")
        try await t.sql.execute("DELETE FROM catalog_parks")
        try await store.transaction { tx in try await PostgresStore.catalogFromLoadedParks(tx) }
        #expect(try await store.catalogCounts() == (rides: rides, parks: 1))
        let banshee = try #require(try await store.catalogRide("kings-island.banshee"))
        #expect(banshee.fenced == "kings-island.banshee" && banshee.park == CatalogPark(id: "kings-island", name: "Kings Island", fenced: true))
        #expect(try await store.searchCatalog(CatalogQuery(text: "banshee kings")).rides.map(\.id) == ["kings-island.banshee"])
    }

    /// A ride log checks the rider's lists with one statement that probes `list_items_open`, as
    /// the benchmark needs: a log that checks fifty lists costs about what one that checks none does.
    @Test func theRideLogHookProbesTheOpenItemsIndex() async throws {
        let t = try await TemporaryStore()
        defer { t.remove() }
        try await t.sql.execute("""
            INSERT INTO users (id, username, display_name, password_hash, role, created_at)
            SELECT g, 'u' || g, 'U', 'x', 'member', 0 FROM generate_series(1, 2000) g
            """)
        try await t.sql.execute("""
            INSERT INTO catalog_parks (id, name, name_key) VALUES ('p', 'P', 'p')
            """)
        try await t.sql.execute("""
            INSERT INTO catalog_rides (id, park_id, name, name_key, type, name_doc, detail_doc)
            SELECT 'p.r' || g, 'p', 'R' || g, 'r' || g, 'coaster', 'r' || g, 'p' FROM generate_series(1, 20) g
            """)
        try await t.sql.execute("""
            INSERT INTO lists (owner_id, title, description, visibility, created_at, updated_at)
            SELECT g, 'l', '', 'private', 0, 0 FROM generate_series(1, 2000) g
            """)
        try await t.sql.execute("""
            INSERT INTO list_items (list_id, owner_id, kind, target_id, position, added_at)
            SELECT l.id, l.owner_id, 'ride', r.id, 0, 0 FROM lists l, catalog_rides r
            """)
        try await t.sql.execute("ANALYZE list_items")
        let plan = try await t.sql.strings("""
            EXPLAIN UPDATE list_items i SET checked_at = 1 WHERE i.owner_id = 7 AND i.kind = 'ride' AND i.checked_at IS NULL
                AND NOT i.unchecked_by_hand AND i.target_id = (SELECT id FROM catalog_rides WHERE ride_id = 'p.r1')
            """).joined(separator: "\n")
        #expect(plan.contains("list_items_open"), "\(plan)")
    }
}
