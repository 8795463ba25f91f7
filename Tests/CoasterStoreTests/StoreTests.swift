import CoasterCore
@testable import CoasterStore
import CoasterTestSupport
import GRDB
import Foundation
import Testing

/// A fresh store per test (a database file, or a PostgreSQL schema: ``TestDatabase``), removed afterwards.
struct TemporaryStore {
    let directory: URL
    let store: any Store

    init(now: @escaping @Sendable () -> Date = Date.init) async throws {
        self.directory = FileManager.default.temporaryDirectory.appendingPathComponent("coasterlife-store-\(UUID().uuidString)")
        self.store = try await TestDatabase.open(in: self.directory, now: now)
    }

    /// The store as SpatiaLite, for tests of what only it has.
    var sqlite: SpatiaLiteStore { self.store as! SpatiaLiteStore }

    /// SQL beneath the interface, on either store.
    var sql: TestSQL { TestSQL(self.store) }

    /// The wait boards the store keeps.
    var waitBoards: WaitBoards { (self.store as? SpatiaLiteStore)?.waitBoards ?? (self.store as! PostgresStore).waitBoards }

    func remove() {
        try? self.store.close()
        try? FileManager.default.removeItem(at: self.directory)
    }
}

enum Parks {
    static let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static func definition(_ name: String) throws -> ParkDefinition {
        try ParkImporter().definition(from: Data(contentsOf: repoRoot.appendingPathComponent("data/parks/\(name).geojson")))
    }
    static let all = ["cedar-point", "kings-island", "six-flags-fiesta-texas"]
}

@Suite("The store")
struct StoreTests {
    @Test(.enabled(if: TestDatabase.isSQLite)) func opensWithSpatiaLiteOnEveryConnection() async throws {
        let t = try await TemporaryStore()
        defer { t.remove() }
        let versions = try await t.store.versions()
        #expect(versions["spatialite"]?.hasPrefix("5.") == true)
        #expect(versions["geos"]?.hasPrefix("3.") == true)
        // Reopening runs no migration twice and keeps the data.
        _ = try await t.store.replaceParks([try Parks.definition("kings-island")])
        try t.store.close()
        let reopened = try SpatiaLiteStore(path: t.sqlite.path)
        #expect(try await reopened.parkSummaries().map(\.id) == ["kings-island"])
        try reopened.close()
    }

    /// The promise `SpatiaLiteStore.synchronous` documents, as the writer holds it: commits written through
    /// the operating system (which a `kill -9` cannot undo), flushed to the disk at checkpoints.
    /// A change to it (to `FULL`, or `OFF`, which would not even wait for the WAL's write order)
    /// must be a decision, with the durability sentence of the FixesAndVisits article changed with it.
    @Test(.enabled(if: TestDatabase.isSQLite)) func theWriterCommitsThroughTheOperatingSystemAndFlushesAtCheckpoints() async throws {
        let t = try await TemporaryStore()
        defer { t.remove() }
        let (mode, journal) = try await t.sqlite.pool.write { db in
            (try Int.fetchOne(db, sql: "PRAGMA synchronous"), try String.fetchOne(db, sql: "PRAGMA journal_mode"))
        }
        #expect(mode == 1)  // NORMAL
        #expect(journal == "wal")
    }

    @Test(.enabled(if: TestDatabase.isSQLite)) func failingSpatiaLiteAdminCallsThrowInsteadOfReturningZero() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coasterlife-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        // A directory where the file should be: opening must fail with a sentence, not crash.
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("db.sqlite"), withIntermediateDirectories: true)
        #expect(throws: StoreError.self) { try SpatiaLiteStore(path: directory.appendingPathComponent("db.sqlite").path) }
    }

    @Test func realParksRoundTripExactly() async throws {
        let t = try await TemporaryStore()
        defer { t.remove() }
        let definitions = try Parks.all.map(Parks.definition)
        let written = try await t.store.replaceParks(definitions)
        #expect(written.map(\.replaced) == [false, false, false])
        for definition in definitions {
            let stored = try #require(try await t.store.park(definition.park.id))
            #expect(stored.park.boundary == definition.park.boundary)
            #expect(stored.zones == definition.zones)
            #expect(stored.rides == definition.rides)
        }
        let summaries = try await t.store.parkSummaries()
        #expect(summaries.map(\.name) == ["Cedar Point", "Kings Island", "Six Flags Fiesta Texas"])
        let cp = try #require(summaries.first)
        #expect(cp.rideCount == definitions[0].rides.count)
        #expect(cp.bounds.contains(Coordinate(lat: 41.4822, lon: -82.6835)))
    }

    @Test func reimportReplacesZonesAndUnlistsMissingRides() async throws {
        let t = try await TemporaryStore()
        defer { t.remove() }
        var cp = try Parks.definition("cedar-point")
        _ = try await t.store.replaceParks([cp])
        let removed = cp.rides.removeLast()
        cp.zones.removeAll { $0.ride == removed.id }
        cp.park.name = "Cedar Point (renamed)"
        let result = try #require(try await t.store.replaceParks([cp]).first)
        #expect(result.replaced)
        #expect(result.unlistedRides == 1)
        let stored = try #require(try await t.store.park(cp.park.id))
        #expect(stored.park.name == "Cedar Point (renamed)")
        #expect(stored.zones.count == cp.zones.count)
        #expect(try await t.store.rides(in: cp.park.id)?.rides.contains { $0.id == removed.id } == false)
    }

    @Test func aFailingImportWritesNothing() async throws {
        let t = try await TemporaryStore()
        defer { t.remove() }
        let ki = try Parks.definition("kings-island")
        _ = try await t.store.replaceParks([ki])
        // The second park's zone names a ride that does not exist: the foreign key fails mid-way.
        var cp = try Parks.definition("cedar-point")
        cp.zones[0].ride = "cedar-point.no-such-ride"
        var kiChanged = ki
        kiChanged.park.name = "Should not be written"
        await #expect(throws: (any Error).self) { try await t.store.replaceParks([kiChanged, cp]) }
        #expect(try await t.store.parkSummaries().map(\.name) == ["Kings Island"])
        #expect(try await t.store.park("cedar-point") == nil)
    }

    @Test func spatialiteAgreesWithTheFenceIndex() async throws {
        let t = try await TemporaryStore()
        defer { t.remove() }
        let definitions = try Parks.all.map(Parks.definition)
        _ = try await t.store.replaceParks(definitions)
        let stored = try await t.store.allParks()
        let index = try FenceIndex(parks: stored.map(\.park), zones: stored.flatMap(\.zones), replicas: 1)
        var generator = SystemRandomNumberGenerator()
        for definition in definitions {
            let box = try #require(definition.park.boundary.boundingBox)
            for _ in 0..<300 {
                let p = Coordinate(lat: .random(in: box.minLat...box.maxLat, using: &generator),
                                   lon: .random(in: box.minLon...box.maxLon, using: &generator))
                let sql = try await t.store.parkIDs(covering: p)
                #expect(sql == index.locate(p).map(\.id), "at \(p)")
            }
        }
    }

    @Test func unknownParkIsNil() async throws {
        let t = try await TemporaryStore()
        defer { t.remove() }
        #expect(try await t.store.park("nowhere") == nil)
        #expect(try await t.store.rides(in: "nowhere") == nil)
    }
}

@Suite("The live directory's load")
struct PersonStatesTests {
    /// Friend lists as the directory loads them (counted, then filled at their final size): every
    /// accepted friendship both ways, no pending request, blocks both ways; an id past 2³² (which
    /// the compact path cannot hold) in the same lists; and a refresh of a few users agreeing with
    /// the full load.
    @Test func friendListsHoldEveryAcceptedTieBothWays() async throws {
        let t = try await TemporaryStore()
        defer { t.remove() }
        var ids: [UserID] = []
        for i in 0..<12 {
            ids.append(try await t.store.createUser(username: "p\(i)", displayName: "P \(i)", passwordHash: "x", role: .member).id)
        }
        // A ring of friendships, each user also friends with the one three along; one request
        // left pending; one block.
        var expected: [UserID: Set<UserID>] = Dictionary(uniqueKeysWithValues: ids.map { ($0, []) })
        for (i, id) in ids.enumerated() {
            for step in [1, 3] {
                let other = ids[(i + step) % ids.count]
                _ = try await t.store.requestFriend(from: id, to: "p\((i + step) % ids.count)")
                _ = try await t.store.answerRequest(of: other, from: id, accept: true)
                expected[id, default: []].insert(other)
                expected[other, default: []].insert(id)
            }
        }
        _ = try await t.store.requestFriend(from: ids[0], to: "p6")
        _ = try await t.store.block(of: ids[1], ids[7])
        // A user with an id past 2³², friends with two others (rows written as an import would).
        let wide = UserID(5_000_000_000)
        let wideFriends = [ids[2], ids[9]]
        try await t.sql.execute("INSERT INTO users (id, username, display_name, password_hash, role, created_at) VALUES (?, 'wide', 'Wide', 'x', 'member', 0)",
                                [wide.rawValue])
        for other in wideFriends {
            try await t.sql.execute("INSERT INTO friendships (requester, addressee, status, created_at, accepted_at) VALUES (?, ?, 'accepted', 0, 0)",
                                    [wide.rawValue, other.rawValue])
        }
        for other in wideFriends {
            expected[wide, default: []].insert(other)
            expected[other, default: []].insert(wide)
        }

        let everyone = Dictionary(uniqueKeysWithValues: try await t.store.personStates().map { ($0.id, $0) })
        #expect(everyone.count == 13)
        for (id, friends) in expected {
            #expect(Set(everyone[id]?.friends ?? []) == friends, "friends of \(id)")
        }
        #expect(everyone[ids[1]]?.blocks == [ids[7]])
        #expect(everyone[ids[7]]?.blocks == [ids[1]])
        #expect(everyone[ids[0]]?.friends.contains(ids[6]) == false)  // pending

        let some = try await t.store.personStates(only: [ids[2], wide])
        #expect(Set(some.map(\.id)) == [ids[2], wide])
        for person in some { #expect(person.friends == everyone[person.id]?.friends) }
    }

    /// A load's people in the same zones share one set (see `ZoneSets`); their zones are as stored.
    @Test func loadsEqualZoneSetsOnce() async throws {
        let t = try await TemporaryStore()
        defer { t.remove() }
        let fix = AcceptedFix(position: Coordinate(lat: 41.48, lon: -82.68), accuracy: 5, recordedAt: Date(timeIntervalSince1970: 1_700_000_000))
        let ride = ZoneID(rawValue: "cedar-point.millennium-force"), land = ZoneID(rawValue: "cedar-point.frontier-town")
        let zones: [[ZoneID]] = [[ride, land], [land, ride], [land], [], [ride, land]]
        let users = zones.enumerated().map { i, zones in
            BulkUser(id: UserID(Int64(i + 1)), username: "user\(i)", displayName: "User \(i)", passwordHash: "x", latest: fix, zones: zones,
                     visits: [], tokenHash: nil)
        }
        try await t.store.bulkLoad(users: users, friendships: [])
        let people = Dictionary(uniqueKeysWithValues: try await t.store.personStates().map { ($0.id.rawValue, $0.zones) })
        for (i, expected) in zones.enumerated() { #expect(people[Int64(i + 1)] == Set(expected)) }
        #expect(try #require(people[1]).isSameCopy(as: try #require(people[2])))
        #expect(try #require(people[1]).isSameCopy(as: try #require(people[5])))
        #expect(try !#require(people[1]).isSameCopy(as: try #require(people[3])))
    }
}
