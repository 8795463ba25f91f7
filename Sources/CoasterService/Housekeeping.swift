import CoasterCore
import CoasterStore
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// The service's periodic work, run beside the server for as long as it runs: revocations read
/// from the store and applied (every ``revocationPoll``), and ride logs counted on the
/// leaderboards once they are older than the location time-to-live (every ``settlePeriod``).
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
    /// Revocations read at a time.
    public static let revocationBatch = 1000
    /// The last revocation applied.
    private let seen: Mutex<Int64>

    public init(store: any Store, sessions: Sessions, privacy: LocationPrivacy, now: @escaping @Sendable () -> Date, logger: Logger,
         startingAfter seq: Int64, revocationPoll: Duration = .seconds(1), settlePeriod: Duration = .seconds(60)) {
        self.store = store
        self.sessions = sessions
        self.privacy = privacy
        self.now = now
        self.logger = logger
        self.seen = Mutex(seq)
        self.revocationPoll = revocationPoll
        self.settlePeriod = settlePeriod
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
                    round += 1
                    try await Task.sleep(for: self.settlePeriod)
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
        let cutoff = self.now().addingTimeInterval(-self.privacy.timeToLive)
        // A full batch may have left more behind it.
        while try await self.store.settleTallies(through: cutoff, limit: Self.settleBatch) == Self.settleBatch {}
    }
}
