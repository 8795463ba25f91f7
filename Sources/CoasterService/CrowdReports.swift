import CoasterCore
import CoasterStore
import Foundation

/// A crowd report the rules refused: why, and for a report made too soon, when the next may be.
public struct ReportRefused: Error, Hashable, Sendable {
    public var refusal: WaitReportRefusal
    /// Seconds until this person may report this ride again (``WaitReportRefusal/tooSoon`` only).
    public var retryAfter: TimeInterval?
}

/// Visitors' wait and ride-status reports: checked against the reporter's fixes and visits and
/// the fences in force (``WaitReportPolicy``), recorded, and told to everyone listening in the park.
public struct CrowdReports: Sendable {
    public let store: any Store
    public let fences: Fences
    public let live: Live
    public let policy: LocationPolicy
    public let now: @Sendable () -> Date

    public init(store: any Store, fences: Fences, live: Live, policy: LocationPolicy, now: @escaping @Sendable () -> Date) {
        self.store = store
        self.fences = fences
        self.live = live
        self.policy = policy
        self.now = now
    }

    /// The check a report's transaction applies: the policy over the fences in force now.
    private var check: WaitReportCheck {
        let policy = self.policy.waits, index = self.fences.index
        return { facts, now in policy.check(facts, index: index, now: now) }
    }

    /// Records a wait of `minutes` on `ride` by `user`, and tells the park's listeners the ride's
    /// new estimate (and its status, if the report changed it).
    /// - Returns: the report and the ride's estimate after it.
    /// - Throws: ``ReportRefused``, or ``RideError/noSuchRide``.
    public func reportWait(user: UserID, ride: RideID, minutes: Double) async throws -> (report: AcceptedReport, row: WaitBoardRow) {
        let outcome = try await self.store.reportWait(user: user, ride: ride, minutes: minutes, visitTimeout: self.policy.checkins.visitTimeout,
                                                      check: self.check, estimator: self.policy.estimator, statusRules: self.policy.statusRules)
        let accepted = try await self.accepted(outcome, user: user, ride: ride, status: false)
        guard let row = try await self.store.waitEstimate(ride: ride, estimator: self.policy.estimator, statusRules: self.policy.statusRules)
        else { throw RideError.noSuchRide }
        self.live.waitChanged(row)
        if let change = accepted.statusChange { self.live.statusesChanged([change], in: ride.park) }
        return (accepted, row)
    }

    /// Records `user`'s word on what `ride` is doing, and tells the park's listeners if it changed
    /// the ride's live status.
    /// - Throws: ``ReportRefused``, or ``RideError/noSuchRide``.
    public func reportStatus(user: UserID, ride: RideID, condition: RideCondition) async throws -> AcceptedReport {
        let outcome = try await self.store.reportStatus(user: user, ride: ride, condition: condition, visitTimeout: self.policy.checkins.visitTimeout,
                                                        check: self.check, estimator: self.policy.estimator, statusRules: self.policy.statusRules)
        let accepted = try await self.accepted(outcome, user: user, ride: ride, status: true)
        if let change = accepted.statusChange { self.live.statusesChanged([change], in: ride.park) }
        return accepted
    }

    private func accepted(_ outcome: Result<AcceptedReport, WaitReportRefusal>?, user: UserID, ride: RideID, status: Bool) async throws -> AcceptedReport {
        switch outcome {
        case nil: throw RideError.noSuchRide
        case .success(let accepted)?: return accepted
        case .failure(.tooSoon)?:
            let now = self.now()
            let last = try await self.store.lastReport(user: user, ride: ride, status: status) ?? now
            throw ReportRefused(refusal: .tooSoon, retryAfter: self.policy.waits.retryAfter(lastReport: last, now: now))
        case .failure(let refusal)?:
            throw ReportRefused(refusal: refusal, retryAfter: nil)
        }
    }
}
