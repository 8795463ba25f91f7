import CoasterCore
import Foundation
import GRDB
import Synchronization

/// Parks' wait boards computed lately, answered again while nothing they read has changed.
///
/// A board reads every listed ride's reports, posted waits and learned model: four statements a
/// ride, about a millisecond for a park of 40 rides. Boards are read far more often than they
/// change, so a board is kept and served again until either
/// - a transaction of this process that wrote a table boards read commits (reports, posted waits,
///   rides, parks; the measured waits the fix pipeline writes included), or
/// - ``freshness`` has passed on the store's clock: estimates age with time, and another process
///   (`coasterlife waits load`) may have written the file.
///
/// A board is stored with the generation read *before* its read transaction began, so a board that
/// may have missed a commit is never served after that commit's invalidation.
final class WaitBoards: TransactionObserver, Sendable {
    /// How long a board is served without recomputing, seconds.
    static let freshness: TimeInterval = 1

    private struct Key: Hashable {
        var park: ParkID
        var estimator: WaitEstimator
        var statusRules: RideStatusRules
    }

    private struct Entry {
        var rows: [WaitBoardRow]
        var generation: UInt64
        var computedAt: Date
    }

    private struct State {
        var generation: UInt64 = 0
        var entries: [Key: Entry] = [:]
        /// A write to a board table happened in the open transaction.
        var touched = false
    }

    private static let tables: Set<String> = ["wait_reports", "status_reports", "posted_waits", "rides", "parks"]
    private let state = Mutex(State())

    /// The generation to store a board computed from now on with.
    var generation: UInt64 { self.state.withLock { $0.generation } }

    /// The board of `park` if one is kept that is still valid at `now`.
    func board(park: ParkID, estimator: WaitEstimator, statusRules: RideStatusRules, now: Date) -> [WaitBoardRow]? {
        self.state.withLock { state in
            let key = Key(park: park, estimator: estimator, statusRules: statusRules)
            guard let entry = state.entries[key] else { return nil }
            guard entry.generation == state.generation, abs(now.timeIntervalSince(entry.computedAt)) < Self.freshness else {
                state.entries[key] = nil
                return nil
            }
            return entry.rows
        }
    }

    /// Keeps a board computed at `now` from a read that began at `generation`.
    func keep(_ rows: [WaitBoardRow], park: ParkID, estimator: WaitEstimator, statusRules: RideStatusRules, generation: UInt64, now: Date) {
        self.state.withLock { state in
            guard generation == state.generation else { return }
            state.entries[Key(park: park, estimator: estimator, statusRules: statusRules)] =
                Entry(rows: rows, generation: generation, computedAt: now)
        }
    }

    // MARK: TransactionObserver (called on the writer's queue)

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool {
        Self.tables.contains(eventKind.tableName)
    }

    func databaseDidChange(with event: DatabaseEvent) {
        self.state.withLock { $0.touched = true }
    }

    func databaseDidCommit(_ db: Database) {
        self.state.withLock { state in
            guard state.touched else { return }
            state.touched = false
            state.generation &+= 1
            state.entries.removeAll()
        }
    }

    func databaseDidRollback(_ db: Database) {
        self.state.withLock { $0.touched = false }
    }
}
