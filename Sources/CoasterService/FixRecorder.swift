import CoasterCore
import CoasterStore
import Foundation

/// Records a user's fixes and check-ins, and once they are committed brings the rest of the service up to date:
/// the fix metrics, the live directory (nearby answers read it) and friends' live feeds. Shared by
/// `POST /v1/fixes` (the router's handler and the fast lane's) and OwnTracks.
public struct FixRecorder: Sendable {
    public let store: any Store
    public let fences: Fences
    public let people: People
    public let live: Live
    public let metrics: ServiceMetrics
    public let policy: LocationPolicy

    public init(store: any Store, fences: Fences, people: People, live: Live, metrics: ServiceMetrics, policy: LocationPolicy) {
        self.store = store
        self.fences = fences
        self.people = people
        self.live = live
        self.metrics = metrics
        self.policy = policy
    }

    /// Records `fixes` for `user` (whom the directory must hold: see the async form) and calls
    /// `completion` once they are committed and applied, on the store's writer thread. Applied
    /// there, batches reach the directory in the order they were committed, whoever waits for them.
    public func record(_ fixes: [IncomingFix], for user: UserID, source: FixSource,
                completion: @escaping @Sendable (Result<FixBatch, any Error>) -> Void) {
        let start = ContinuousClock.now
        let pipeline = FixPipeline(policy: self.policy.fixes), index = self.fences.index
        self.store.recordFixes(user: user, fixes, source: source, visitTimeout: self.policy.checkins.visitTimeout,
                               decide: { fix, state, now in pipeline.process(fix, state: &state, index: index, now: now) }) { [metrics, people, live] result in
            if case .success(let batch) = result {
                metrics.fixes(batch, source: source.rawValue, writeDuration: ContinuousClock.now - start)
                people.apply(user, batch)
                live.fixesRecorded(by: user, batch)
            }
            completion(result)
        }
    }

    /// The same for a task: loads `user` into the directory first if it does not hold them yet
    /// (created by the command line, or by another process, since it was loaded).
    public func record(_ fixes: [IncomingFix], for user: UserID, source: FixSource) async throws -> FixBatch {
        _ = try await self.people.person(loading: user)
        return try await withCheckedThrowingContinuation { continuation in
            self.record(fixes, for: user, source: source) { continuation.resume(with: $0) }
        }
    }

    /// Checks `user` into `park` if their latest fix puts them there (``CheckinPolicy``, over the
    /// fences in force); `nil` if there is no such park.
    public func checkIn(user: UserID, park: ParkID) async throws -> CheckinOutcome? {
        let policy = self.policy.checkins, index = self.fences.index
        return try await self.store.checkIn(user: user, park: park, visitTimeout: policy.visitTimeout) { latest, now in
            policy.decide(latest: latest, park: park, index: index, now: now)
        }
    }
}
