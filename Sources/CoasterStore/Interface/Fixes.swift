import CoasterCore
import Foundation

/// GPS fixes, the visits and transitions they make, check-ins and ride logs.
public protocol FixStore: Sendable {
    /// Decides and records a batch of fixes for one user: read the previous state, decide each fix
    /// (in recorded-time order), write fixes, transitions, visits and the new state. It returns
    /// after the batch has committed; results come back in the batch's order. (SpatiaLite commits
    /// a batch as one savepoint of a transaction shared with other users' batches queued meanwhile,
    /// ``GroupCommit``; PostgreSQL commits each batch on its own connection.)
    func recordFixes(
        user: UserID, _ fixes: [IncomingFix], source: FixSource, visitTimeout: TimeInterval, decide: @escaping FixDecider
    ) async throws -> FixBatch

    /// The same, calling `completion` after the commit instead of returning: for callers that are
    /// not tasks (the fast lane). SpatiaLite calls it on the writer's thread
    /// (``GroupCommit/write(_:completion:)``); PostgreSQL from a task of its own.
    func recordFixes(
        user: UserID, _ fixes: [IncomingFix], source: FixSource, visitTimeout: TimeInterval, decide: @escaping FixDecider,
        completion: @escaping @Sendable (Result<FixBatch, any Error>) -> Void
    )

    /// Transactions that wrote fix batches so far, and the batches they carried (their ratio is the
    /// mean group size of SpatiaLite's group commit; on PostgreSQL they are equal).
    var fixCommits: (transactions: Int, batches: Int) { get }

    /// The user's latest accepted fix, if any.
    func latestFix(of user: UserID) async throws -> AcceptedFix?

    /// How many fixes of a user are stored (for tests and the reliability harness).
    func fixCount(of user: UserID) async throws -> Int

    /// Checks a user into a park if `decide` (``CheckinPolicy`` over the fences in force) allows
    /// it from their latest fix; `nil` if there is no such park.
    func checkIn(user: UserID, park: ParkID, visitTimeout: TimeInterval,
        decide: @escaping @Sendable (AcceptedFix?, Date) -> Result<Containment, CheckinRefusal>) async throws -> CheckinOutcome?

    /// A user's visits, newest first. `before` pages by visit id.
    func visits(of user: UserID, limit: Int, before: Int64?) async throws -> [Visit]

    /// The parks a user is visiting now (open visits with recent evidence).
    func openVisits(of user: UserID, timeout: TimeInterval) async throws -> [Visit]

    /// Logs a ride, if the rider is on a visit to its park, the ride runs, and no rider could
    /// have been on it yet after their last logged ride (docs: FixesAndVisits, "Ride logs").
    /// - Returns: the entry, with the evidence behind it, and how many times the rider has now
    ///   ridden it.
    func logRide(user: UserID, ride rideID: RideID, visitTimeout: TimeInterval, policy: RideLogPolicy,
        statusRules: RideStatusRules, estimator: WaitEstimator) async throws -> Result<(RideLogEntry, Int), RideLogRefusal>

    /// A rider's logged rides, newest first; `before` pages by entry id. `nil` unless `viewer` is
    /// the rider or an accepted friend of theirs (read in the same transaction).
    func rideHistory(of user: UserID, viewer: UserID, limit: Int, before: Int64?) async throws -> [RideLogEntry]?

    /// How often a rider has ridden each ride of a park, with the park's last load (what a kept
    /// copy of its rides is checked against), or `nil` if there is no such park.
    func rideCounts(of user: UserID, in park: ParkID) async throws -> (counts: [RideID: Int], loadedAt: Date)?

    func riderStats(of user: UserID) async throws -> RiderStats

    /// Records an OwnTracks region event as the app reported it.
    func recordOwnTracksTransition(user: UserID, event: String, region: String?, regionID: String?, position: Coordinate,
        accuracy: Double, at: Date) async throws

    /// How many OwnTracks region events a user has (for tests).
    func ownTracksTransitionCount(of user: UserID) async throws -> Int
}

extension FixStore {
    /// The newest page of a user's visits.
    public func visits(of user: UserID, limit: Int) async throws -> [Visit] { try await self.visits(of: user, limit: limit, before: nil) }

    /// The newest page of a rider's logged rides, as `viewer` may see it.
    public func rideHistory(of user: UserID, viewer: UserID, limit: Int) async throws -> [RideLogEntry]? {
        try await self.rideHistory(of: user, viewer: viewer, limit: limit, before: nil)
    }

    /// Logs a ride under the default rules.
    public func logRide(user: UserID, ride: RideID, visitTimeout: TimeInterval) async throws -> Result<(RideLogEntry, Int), RideLogRefusal> {
        try await self.logRide(user: user, ride: ride, visitTimeout: visitTimeout, policy: RideLogPolicy(), statusRules: RideStatusRules(),
                               estimator: WaitEstimator())
    }
}
