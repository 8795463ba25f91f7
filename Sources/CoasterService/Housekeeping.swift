import CoasterCore
import CoasterStore
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// The service's periodic work, run beside the server for as long as it runs: revocations read
/// from the store and applied (every ``revocationPoll``), and ride logs counted on the
/// leaderboards and challenge progress shown to other participants once they are older than the
/// location time-to-live, and the winners of challenges that are due fixed (every ``settlePeriod``),
/// and list changes pushed to their followers once others may see them (every ``listPeriod``).
///
/// Each step is also a method of its own, so tests run it when they choose.
public final class Housekeeping: ServiceLifecycle.Service, Sendable {
    public let store: any Store
    public let sessions: Sessions
    public let privacy: LocationPrivacy
    public let now: @Sendable () -> Date
    public let logger: Logger
    /// How often the store's revocations are read: the longest a session revoked by another
    /// process (a command-line role change, another node) keeps working here.
    public let revocationPoll: Duration
    public let settlePeriod: Duration
    /// How often list changes that came due are delivered: a check made by a ride log or a visit
    /// is shown to others a location time-to-live after it, and its followers hear of it within
    /// this much of that.
    public let listPeriod: Duration
    /// Revocations read at a time.
    public static let revocationBatch = 1000
    /// The last revocation applied.
    private let seen: Mutex<Int64>
    /// Where the settled challenge progress and the due list changes are pushed
    /// (``pushChallengeMoves(to:)``); `nil`: nowhere, and list changes stay undelivered.
    private let live = Mutex<Live?>(nil)

    public init(store: any Store, sessions: Sessions, privacy: LocationPrivacy, now: @escaping @Sendable () -> Date, logger: Logger,
         startingAfter seq: Int64, revocationPoll: Duration = .seconds(1), settlePeriod: Duration = .seconds(60),
         listPeriod: Duration = .seconds(5)) {
        self.store = store
        self.sessions = sessions
        self.privacy = privacy
        self.now = now
        self.logger = logger
        self.seen = Mutex(seq)
        self.revocationPoll = revocationPoll
        self.settlePeriod = settlePeriod
        self.listPeriod = listPeriod
    }

    /// Runs until the service group shuts down (gracefully: the server's drain does not wait on it).
    public func run() async throws {
        do {
            try await cancelWhenGracefulShutdown { try await self.loops() }
        } catch is CancellationError {
            return
        }
    }

    private func loops() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                while !Task.isCancelled {
                    try await Task.sleep(for: self.revocationPoll)
                    do {
                        try await self.applyRevocations()
                    } catch is CancellationError {
                        return  // stopping: a store call that waits (PostgreSQL's) ends with the task
                    } catch {
                        self.logger.warning("reading revocations failed", metadata: ["error": "\(error)"])
                    }
                }
            }
            group.addTask {
                var round = 0
                while !Task.isCancelled {
                    do {
                        try await self.settleTallies()
                        // Revocations are kept a day: every process has read them long before.
                        if round % 60 == 0 { try await self.store.pruneRevocations(olderThan: 24 * 3600) }
                    } catch is CancellationError {
                        return
                    } catch {
                        self.logger.warning("settling the leaderboards failed", metadata: ["error": "\(error)"])
                    }
                    do {
                        try await self.settleChallenges()
                    } catch is CancellationError {
                        return
                    } catch {
                        self.logger.warning("settling the challenges failed", metadata: ["error": "\(error)"])
                    }
                    round += 1
                    try await Task.sleep(for: self.settlePeriod)
                }
            }
            group.addTask {
                while !Task.isCancelled {
                    try await Task.sleep(for: self.listPeriod)
                    do {
                        try await self.deliverListChanges()
                    } catch is CancellationError {
                        return
                    } catch {
                        self.logger.warning("delivering list changes failed", metadata: ["error": "\(error)"])
                    }
                }
            }
            try await group.next()
            group.cancelAll()
        }
    }

    /// Applies every revocation the store announced since the last one applied.
    public func applyRevocations() async throws {
        while true {
            let after = self.seen.withLock { $0 }
            let batch = try await self.store.revocations(after: after, limit: Self.revocationBatch)
            guard let last = batch.last else { return }
            for revocation in batch { self.sessions.apply(revocation) }
            self.seen.withLock { $0 = max($0, last.seq) }
            if batch.count < Self.revocationBatch { return }
        }
    }

    /// Counts on the leaderboards every ride log now older than the location time-to-live.
    /// Ride logs counted in one settling transaction: a short hold of the writer.
    public static let settleBatch = 5_000

    public func settleTallies() async throws {
        let cutoff = self.privacy.placesShownBefore(self.now())
        // A full batch may have left more behind it.
        while try await self.store.settleTallies(through: cutoff, limit: Self.settleBatch) == Self.settleBatch {}
    }

    /// Pushes the progress the challenge sweep shows to the participants listening on `live`
    /// (setting it again replaces it).
    public func pushChallengeMoves(to live: Live) {
        self.live.withLock { $0 = live }
    }

    /// Challenge credits shown in one settling transaction, and challenges finalized in one.
    public static let challengeSettleBatch = 2_000
    public static let challengeFinalizeBatch = 100
    /// Batches one sweep takes at most of each: what is left waits for the next sweep, so that a
    /// backlog never holds the loop (or the writer) for long.
    public static let challengeBatchesPerSweep = 50

    /// Shows every challenge credit now older than the location time-to-live to the other
    /// participants (pushing who moved), then fixes the winners of the challenges that are due:
    /// both in bounded batches.
    public func settleChallenges() async throws {
        let cutoff = self.privacy.placesShownBefore(self.now())
        for _ in 0..<Self.challengeBatchesPerSweep {
            let moves = try await self.store.settleChallengeCredits(through: cutoff, limit: Self.challengeSettleBatch)
            if moves.isEmpty { break }
            if let live = self.live.withLock({ $0 }) {
                do {
                    try await live.challengesMoved(moves, store: self.store)
                } catch {
                    // Shown is shown: a read for a push that failed loses the push, not the progress.
                    self.logger.warning("pushing settled challenge progress failed", metadata: ["error": "\(error)"])
                }
            }
        }
        for _ in 0..<Self.challengeBatchesPerSweep {
            if try await self.store.finalizeChallenges(limit: Self.challengeFinalizeBatch).count < Self.challengeFinalizeBatch { break }
        }
    }

    /// Delivers the list changes that came due (``ListRules/shownAt(_:privacy:)``) to their
    /// followers listening where ``pushChallengeMoves(to:)`` set; with nowhere set, nothing is
    /// delivered (a process that pushes to no one leaves them to one that does).
    public func deliverListChanges() async throws {
        guard let live = self.live.withLock({ $0 }) else { return }
        try await Lists.deliver(store: self.store, privacy: self.privacy, now: self.now(), live: live)
    }
}
