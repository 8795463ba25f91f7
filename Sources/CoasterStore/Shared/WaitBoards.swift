import CoasterCore
import Foundation
import Synchronization

/// Parks' wait boards computed lately, answered again while nothing they read has changed.
///
/// A board reads every listed ride's reports, posted waits and learned model (on SQLite four
/// statements a ride, about a millisecond for a park of 40 rides). Boards are read far more often
/// than they change, so a board is kept and served again until either
/// - a transaction of this process that wrote a table boards read commits (reports, posted waits,
///   rides, parks; the measured waits the fix pipeline writes included), or
/// - ``freshness`` has passed on the store's clock: estimates age with time, and another process
///   (`coasterlife waits load`, another node) may have written the database.
///
/// The boards learn of commits in one of two ways, whichever the store can offer:
/// - SQLite: as a GRDB transaction observer (WaitBoards+Observer.swift). A commit drops only the
///   boards of the parks its writes declared (``touched(_:rows:)``, called after each write of a
///   report or posted wait, row for row) when the declarations account for every board-table row
///   it changed; otherwise it drops every board. So a report in one park does not make the other
///   parks' boards be computed again, and a write that says nothing (a park import) is still seen.
/// - PostgreSQL, which has no such hook: the store says what it wrote right after each `COMMIT`
///   returns, ``committed(parks:)`` when it knows the parks, ``invalidateAll()`` when it does not.
///
/// A board is stored with the generations read *before* its read transaction began, so a board that
/// may have missed a commit is never served after that commit's invalidation. (Told after `COMMIT`,
/// a read that began before the commit holds the generation from before it; one that began after
/// the commit but before the telling is refused too, which costs a recomputation, never a stale
/// answer.)
///
/// Misses of one board at one generation share one read (``flight(park:estimator:statusRules:compute:)``):
/// after a report, every client polling the park's board misses at once, and each used to read the
/// whole board on a reader of its own, the other reads of the service queuing behind them.
final class WaitBoards: Sendable {
    /// How long a board is served without recomputing, seconds.
    static let freshness: TimeInterval = 1

    /// The tables a board reads: a commit that wrote any of them may change a board.
    static let tables: Set<String> = ["wait_reports", "status_reports", "posted_waits", "rides", "parks"]

    private struct Key: Hashable {
        var park: ParkID
        var estimator: WaitEstimator
        var statusRules: RideStatusRules
    }

    private struct Entry {
        var rows: [WaitBoardRow]
        var generation: Generation
        var computedAt: Date
    }

    /// What a kept board must still match: every board's generation and its park's.
    struct Generation: Equatable {
        var all: UInt64
        var park: UInt64
    }

    /// A board being read, and the generation its read began at.
    private struct Flight {
        var generation: Generation
        var task: Task<[WaitBoardRow]?, any Error>
    }

    private struct State {
        var generation: UInt64 = 0
        var flights: [Key: Flight] = [:]
        var flightsStarted = 0
        var parkGenerations: [ParkID: UInt64] = [:]
        var entries: [Key: Entry] = [:]
        /// Board-table rows the open SQLite transaction changed, and those its writes declared, by park.
        var changedRows = 0
        var declaredRows = 0
        var declaredParks: Set<ParkID> = []

        func generation(_ park: ParkID) -> Generation {
            Generation(all: self.generation, park: self.parkGenerations[park] ?? 0)
        }

        /// Makes the boards of `parks` stale.
        mutating func drop(_ parks: Set<ParkID>) {
            for park in parks { self.parkGenerations[park, default: 0] &+= 1 }
            self.entries = self.entries.filter { !parks.contains($0.key.park) }
        }

        /// Makes every board stale.
        mutating func dropAll() {
            self.generation &+= 1
            self.entries.removeAll()
        }

        /// Forgets the ended transaction's counts.
        mutating func endTransaction() {
            self.changedRows = 0
            self.declaredRows = 0
            self.declaredParks = []
        }
    }

    private let state = Mutex(State())

    /// The board of `park` if one is kept that is still valid at `now`.
    func board(park: ParkID, estimator: WaitEstimator, statusRules: RideStatusRules, now: Date) -> [WaitBoardRow]? {
        self.state.withLock { state in
            let key = Key(park: park, estimator: estimator, statusRules: statusRules)
            guard let entry = state.entries[key] else { return nil }
            guard entry.generation == state.generation(park), abs(now.timeIntervalSince(entry.computedAt)) < Self.freshness else {
                state.entries[key] = nil
                return nil
            }
            return entry.rows
        }
    }

    /// Keeps a board computed at `now` from a read that began at `generation`.
    func keep(_ rows: [WaitBoardRow], park: ParkID, estimator: WaitEstimator, statusRules: RideStatusRules, generation: Generation, now: Date) {
        self.state.withLock { state in
            guard generation == state.generation(park) else { return }
            state.entries[Key(park: park, estimator: estimator, statusRules: statusRules)] =
                Entry(rows: rows, generation: generation, computedAt: now)
        }
    }

    /// The read of the board of `park` under way at the current generation, joined; or, if there is
    /// none, `compute` started (with that generation) as the one later misses join. A flight
    /// begun before a commit that touched the board is not joined: its board may lack the commit.
    func flight(
        park: ParkID, estimator: WaitEstimator, statusRules: RideStatusRules,
        compute: @escaping @Sendable (Generation) async throws -> [WaitBoardRow]?
    ) -> Task<[WaitBoardRow]?, any Error> {
        let key = Key(park: park, estimator: estimator, statusRules: statusRules)
        return self.state.withLock { state in
            let generation = state.generation(park)
            if let flight = state.flights[key], flight.generation == generation { return flight.task }
            let task = Task {
                defer { self.landed(key, generation: generation) }
                return try await compute(generation)
            }
            state.flights[key] = Flight(generation: generation, task: task)
            state.flightsStarted += 1
            return task
        }
    }

    /// Forgets a flight that has ended, unless a later one has taken its place.
    private func landed(_ key: Key, generation: Generation) {
        self.state.withLock { state in
            if state.flights[key]?.generation == generation { state.flights[key] = nil }
        }
    }

    /// Reads of boards started so far (for tests).
    var flightsStarted: Int { self.state.withLock { $0.flightsStarted } }

    // MARK: Told by the store after a commit

    /// A transaction whose board-table writes all belong to `parks` has committed: their boards
    /// are stale. Call it right after `COMMIT` returns (or after a `COMMIT` that failed, which may
    /// have committed anyway).
    func committed(parks: Set<ParkID>) {
        guard !parks.isEmpty else { return }
        self.state.withLock { $0.drop(parks) }
    }

    /// A transaction whose board-table writes are not known park by park (a park import, a batch
    /// of measured waits) has committed: every board is stale. Call it right after `COMMIT` returns.
    func invalidateAll() {
        self.state.withLock { $0.dropAll() }
    }

    // MARK: Learnt from SQLite's transaction hooks

    /// Declares, inside a SQLite write transaction and after the write, that `rows` board-table
    /// rows it just changed belong to `park`.
    func touched(_ park: ParkID, rows: Int = 1) {
        self.state.withLock { state in
            state.declaredRows += rows
            state.declaredParks.insert(park)
        }
    }

    /// The open SQLite transaction changed one board-table row.
    func observedChange() {
        self.state.withLock { $0.changedRows += 1 }
    }

    /// The open SQLite transaction committed: drops the declared parks' boards if the
    /// declarations account for every changed row, else every board.
    func observedCommit() {
        self.state.withLock { state in
            defer { state.endTransaction() }
            guard state.changedRows > 0 else { return }
            if state.declaredRows == state.changedRows {
                state.drop(state.declaredParks)
            } else {
                state.dropAll()
            }
        }
    }

    /// The open SQLite transaction rolled back: nothing it did counts.
    func observedRollback() {
        self.state.withLock { $0.endTransaction() }
    }
}
