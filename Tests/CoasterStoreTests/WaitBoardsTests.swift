import CoasterCore
@testable import CoasterStore
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
            self.t = try TemporaryStore(now: self.clock.now)
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

        /// Another connection to the file, as the `waits load` command would open.
        func postElsewhere(_ park: ParkID, ride: RideID, minutes: Double, at: Date) async throws {
            let other = try Store(path: self.t.store.path, now: self.clock.now)
            _ = try await other.loadPostedWaits(park: park, [PostedWaitEntry(ride: ride, at: at, minutes: minutes)])
            try other.close()
        }
    }

    @Test func aKeptBoardGivesWayToEveryWrite() async throws {
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
        f.clock.advance(Store.waitBoardFreshness)
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

    /// A transaction whose declarations do not account for every board-table row it wrote drops
    /// every kept board, not only the declared park's.
    @Test func anUndeclaredRowDropsEveryBoard() async throws {
        let f = try await Fixture(parks: ["kings-island", "cedar-point"])
        defer { f.t.remove() }
        let ki = try await f.firstRide("kings-island")
        let cp = try await f.firstRide("cedar-point")
        let at = f.now.addingTimeInterval(-60).timeIntervalSince1970
        try await f.t.store.pool.write { db in
            try db.execute(sql: "INSERT INTO posted_waits (ride_id, at, minutes) VALUES (?, ?, 20)", arguments: [ki.rawValue, at])
            f.t.store.waitBoards.touched("kings-island")
            try db.execute(sql: "INSERT INTO posted_waits (ride_id, at, minutes) VALUES (?, ?, 30)", arguments: [cp.rawValue, at])
        }
        #expect(try await f.posted("kings-island")[ki] == 20)
        #expect(try await f.posted("cedar-point")[cp] == 30)
    }
}
