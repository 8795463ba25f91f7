import CoasterCore
@testable import CoasterStore
import Foundation
import GRDB
import Synchronization
import Testing

@Suite("Kept wait boards")
struct WaitBoardsTests {
    /// A transaction whose declarations do not account for every board-table row it wrote drops
    /// every kept board, not only the declared park's.
    @Test func anUndeclaredRowDropsEveryBoard() async throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let t = try TemporaryStore(now: { now })
        defer { t.remove() }
        _ = try await t.store.replaceParks([try Parks.definition("kings-island"), try Parks.definition("cedar-point")])
        func posted(_ park: ParkID) async throws -> [RideID: Double?] {
            let rows = try #require(try await t.store.waitBoard(park: park, estimator: WaitEstimator(), statusRules: RideStatusRules()))
            return Dictionary(uniqueKeysWithValues: rows.map { ($0.ride.id, $0.posted?.minutes) })
        }
        let ki = try #require(try await posted("kings-island").keys.sorted().first)
        let cp = try #require(try await posted("cedar-point").keys.sorted().first)
        let at = now.addingTimeInterval(-60).timeIntervalSince1970
        try await t.store.pool.write { db in
            try db.execute(sql: "INSERT INTO posted_waits (ride_id, at, minutes) VALUES (?, ?, 20)", arguments: [ki.rawValue, at])
            t.store.waitBoards.touched("kings-island")
            try db.execute(sql: "INSERT INTO posted_waits (ride_id, at, minutes) VALUES (?, ?, 30)", arguments: [cp.rawValue, at])
        }
        #expect(try await posted("kings-island")[ki] == 20)
        #expect(try await posted("cedar-point")[cp] == 30)
    }
}
