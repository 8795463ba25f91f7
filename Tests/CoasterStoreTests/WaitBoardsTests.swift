import CoasterCore
@testable import CoasterStore
import CoasterTestSupport
import Foundation
import GRDB
import Synchronization
import Testing

/// Wait boards kept between requests (``WaitBoards``): a write through this store shows at once, a
/// write by another process within a second, never later.
@Suite("Kept wait boards")
struct WaitBoardsTests {
    /// A store on a hand-moved clock with real parks, and each park's board as posted minutes by ride.
    struct Fixture {
        final class Clock: Sendable {
            let value = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
            func now() -> Date { self.value.withLock { $0 } }
            func advance(_ seconds: TimeInterval) { self.value.withLock { $0 = $0.addingTimeInterval(seconds) } }
        }

        let clock = Clock()
        let t: TemporaryStore

        init(parks: [String]) async throws {
            self.t = try await TemporaryStore(now: self.clock.now)
            _ = try await self.t.store.replaceParks(try parks.map(Parks.definition))
        }

        var now: Date { self.clock.now() }

        func posted(_ park: ParkID) async throws -> [RideID: Double?] {
            let rows = try #require(try await self.t.store.waitBoard(park: park, estimator: WaitEstimator(), statusRules: RideStatusRules()))
            return Dictionary(uniqueKeysWithValues: rows.map { ($0.ride.id, $0.posted?.minutes) })
        }

        func firstRide(_ park: ParkID) async throws -> RideID {
            try #require(try await self.posted(park).keys.sorted().first)
        }

        /// Another store on the same database, as the `waits load` command would open.
        func postElsewhere(_ park: ParkID, ride: RideID, minutes: Double, at: Date) async throws {
            let other = try await TestDatabase.open(in: self.t.directory, now: self.clock.now)
            _ = try await other.loadPostedWaits(park: park, [PostedWaitEntry(ride: ride, at: at, minutes: minutes)])
            try other.close()
        }
    }

    @Test(.enabled(if: TestDatabase.isSQLite)) func aKeptBoardGivesWayToEveryWrite() async throws {
        let f = try await Fixture(parks: ["kings-island"])
        defer { f.t.remove() }
        let ride = try await f.firstRide("kings-island")
        #expect(try await f.posted("kings-island")[ride] == .some(nil))
        let at = f.now.addingTimeInterval(-60)

        // Through this store: the kept board is dropped when the write commits.
        _ = try await f.t.store.loadPostedWaits(park: "kings-island", [PostedWaitEntry(ride: ride, at: at, minutes: 25)])
        #expect(try await f.posted("kings-island")[ride] == 25)

        // Through another connection to the file: the kept board answers until it is a second old.
        try await f.postElsewhere("kings-island", ride: ride, minutes: 40, at: at.addingTimeInterval(1))
        #expect(try await f.posted("kings-island")[ride] == 25)
        f.clock.advance(SpatiaLiteStore.waitBoardFreshness)
        #expect(try await f.posted("kings-island")[ride] == 40)
    }

    /// A declared write drops only its park's kept board; a write that declares nothing (a park
    /// import) drops them all.
    @Test func aWriteDropsOnlyItsParksBoard() async throws {
        let f = try await Fixture(parks: ["kings-island", "cedar-point"])
        defer { f.t.remove() }
        let ki = try await f.firstRide("kings-island")
        let cp = try await f.firstRide("cedar-point")
        let at = f.now.addingTimeInterval(-60)
        // Cedar Point changes behind the store's back: its kept board stays until something drops it.
        try await f.postElsewhere("cedar-point", ride: cp, minutes: 15, at: at)

        _ = try await f.t.store.loadPostedWaits(park: "kings-island", [PostedWaitEntry(ride: ki, at: at, minutes: 25)])
        #expect(try await f.posted("kings-island")[ki] == 25)
        #expect(try await f.posted("cedar-point")[cp] == .some(nil), "a Kings Island write dropped Cedar Point's board")

        _ = try await f.t.store.replaceParks([try Parks.definition("kings-island")])
        #expect(try await f.posted("cedar-point")[cp] == 15)
    }

    /// Misses of one board at once (every client polling the park after a report) share one read,
    /// and get the same board.
    @Test func missesAtOnceShareOneRead() async throws {
        let f = try await Fixture(parks: ["cedar-point"])
        defer { f.t.remove() }
        let boards = try await withThrowingTaskGroup(of: [RideID: Double?].self) { group in
            for _ in 0..<16 { group.addTask { try await f.posted("cedar-point") } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(boards.map { $0.keys.count }) == [66] && Set(boards).count == 1)
        #expect(f.t.waitBoards.flightsStarted == 1)
    }

    /// A read begun before a commit that touches its park may lack the commit: a miss after the
    /// commit starts a read of its own rather than joining it, and its board is the one kept.
    @Test(.enabled(if: TestDatabase.isSQLite)) func aMissAfterACommitDoesNotJoinAnOlderRead() async throws {
        let f = try await Fixture(parks: ["kings-island"])
        defer { f.t.remove() }
        let ride = try await f.firstRide("kings-island")
        f.clock.advance(SpatiaLiteStore.waitBoardFreshness)  // the board kept by firstRide has gone stale
        let gate = AsyncStream<Void>.makeStream()
        let older = f.t.waitBoards.flight(park: "kings-island", estimator: WaitEstimator(), statusRules: RideStatusRules()) { _ in
            for await _ in gate.stream { break }
            return []
        }
        // Should the miss join the older read, that read ends (with no rides) in two seconds.
        let release = Task {
            try? await Task.sleep(for: .seconds(2))
            gate.continuation.yield()
        }
        _ = try await f.t.store.loadPostedWaits(park: "kings-island", [PostedWaitEntry(ride: ride, at: f.now.addingTimeInterval(-60), minutes: 25)])
        #expect(try await f.posted("kings-island")[ride] == 25, "the miss joined the read from before the commit")
        release.cancel()
        gate.continuation.yield()
        #expect(try await older.value == [])
        #expect(try await f.posted("kings-island")[ride] == 25)
        #expect(f.t.waitBoards.flightsStarted == 3)
    }

    /// The board reads each person's newest report only, and answers as the estimator and the
    /// status consensus do over every report: people who reported many times (as they can once the
    /// report window is lifted, or across sources) count once, with their newest.
    @Test(.enabled(if: TestDatabase.isSQLite)) func theBoardReadsEachPersonsNewestReportAndAnswersAsAllOfThem() async throws {
        let f = try await Fixture(parks: ["kings-island"])
        defer { f.t.remove() }
        let ride = try await f.firstRide("kings-island")
        let users = try await (0..<5).asyncMap { i in
            try await f.t.store.createUser(username: "r\(i)", displayName: "R\(i)", passwordHash: "x", role: .member).id
        }
        let now = f.now.timeIntervalSince1970
        var rng = SystemRandomNumberGenerator()
        for user in users {
            for _ in 0..<Int.random(in: 1...12, using: &rng) {
                let at = now - Double.random(in: 0...(3 * 3600), using: &rng)
                try await f.t.sql.execute("INSERT INTO wait_reports (user_id, ride_id, minutes, source, at, entered_at) VALUES (?, ?, ?, ?, ?, ?)",
                               [user.rawValue, ride.rawValue, Double.random(in: 0...120, using: &rng).rounded(),
                                           Bool.random(using: &rng) ? "crowd" : "measured", at, at - 600])
                try await f.t.sql.execute("INSERT INTO status_reports (user_id, ride_id, condition, at) VALUES (?, ?, ?, ?)",
                               [user.rawValue, ride.rawValue, ["operating", "down", "closed"].randomElement(using: &rng)!,
                                           now - Double.random(in: 0...3600, using: &rng)])
            }
        }
        f.clock.advance(SpatiaLiteStore.waitBoardFreshness)
        let row = try #require(try await f.t.store.waitBoard(park: "kings-island", estimator: WaitEstimator(), statusRules: RideStatusRules())?
            .first { $0.ride.id == ride })
        let (all, statuses) = try await f.t.sqlite.pool.read { db in
            (try Row.fetchAll(db, sql: "SELECT user_id, minutes, at, source FROM wait_reports WHERE ride_id = ?", arguments: [ride.rawValue]).map {
                WaitObservation(user: UserID($0["user_id"] as Int64), minutes: $0["minutes"], at: Date(timeIntervalSince1970: $0["at"]),
                                source: WaitObservation.Source(rawValue: $0["source"]) ?? .crowd)
            }, try Row.fetchAll(db, sql: "SELECT user_id, condition, at FROM status_reports WHERE ride_id = ?", arguments: [ride.rawValue]).map {
                StatusReport(user: UserID($0["user_id"] as Int64), condition: RideCondition(rawValue: $0["condition"]) ?? .operating,
                             at: Date(timeIntervalSince1970: $0["at"]))
            })
        }
        let expected = WaitEstimator().estimate(observations: all, posted: nil, model: PostedModel.learn([]), now: f.now)
        #expect(row.estimate == expected)
        #expect(row.reportedCondition == RideStatusRules().consensus(statuses, now: f.now))
    }

    /// A transaction whose declarations do not account for every board-table row it wrote drops
    /// every kept board, not only the declared park's (SpatiaLite's observer sees every row; the
    /// PostgreSQL store declares its own writes).
    @Test(.enabled(if: TestDatabase.isSQLite)) func anUndeclaredRowDropsEveryBoard() async throws {
        let f = try await Fixture(parks: ["kings-island", "cedar-point"])
        defer { f.t.remove() }
        let ki = try await f.firstRide("kings-island")
        let cp = try await f.firstRide("cedar-point")
        let at = f.now.addingTimeInterval(-60).timeIntervalSince1970
        try await f.t.sqlite.pool.write { db in
            try db.execute(sql: "INSERT INTO posted_waits (ride_id, at, minutes) VALUES (?, ?, 20)", arguments: [ki.rawValue, at])
            f.t.waitBoards.touched("kings-island")
            try db.execute(sql: "INSERT INTO posted_waits (ride_id, at, minutes) VALUES (?, ?, 30)", arguments: [cp.rawValue, at])
        }
        #expect(try await f.posted("kings-island")[ki] == 20)
        #expect(try await f.posted("cedar-point")[cp] == 30)
    }
}
