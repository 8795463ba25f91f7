import CoasterCore
import Foundation

/// Wait reports, ride status reports, posted waits and the wait boards.
public protocol WaitStore: Sendable {
    /// Records a crowd wait report after checking the reporter may make it.
    ///
    /// The ride's live status before and after the report is worked out in the same transaction,
    /// so that concurrent reports each see the status the one before left: exactly one of them
    /// reports a change. The status after is derived from what was read before plus the report,
    /// not read again; what the status needs beyond the crowd's reports is read only when the rule
    /// asks for it.
    /// - Returns: `nil` if the ride is not listed.
    func reportWait(user: UserID, ride: RideID, minutes: Double, visitTimeout: TimeInterval, check: @escaping WaitReportCheck,
        estimator: WaitEstimator, statusRules: RideStatusRules) async throws -> Result<AcceptedReport, WaitReportRefusal>?

    /// Records a ride-status report after the same checks as a wait report, and works out the
    /// ride's live status before and after it as ``reportWait(user:ride:minutes:visitTimeout:check:estimator:statusRules:)`` does.
    func reportStatus(user: UserID, ride: RideID, condition: RideCondition, visitTimeout: TimeInterval, check: @escaping WaitReportCheck,
        estimator: WaitEstimator, statusRules: RideStatusRules) async throws -> Result<AcceptedReport, WaitReportRefusal>?

    /// When the reporter last reported (for `Retry-After`).
    func lastReport(user: UserID, ride: RideID, status: Bool) async throws -> Date?

    /// Loads a park's posted waits (replacing rows with the same ride and time). Every row must name
    /// a listed ride of the park, or nothing is written.
    ///
    /// The live status of each ride the feed names is worked out before and after in the same
    /// transaction; the changes come back in the park's ride order, at most one per listed ride of
    /// the park.
    @discardableResult
    func loadPostedWaits(park: ParkID, _ entries: [PostedWaitEntry], estimator: WaitEstimator,
        statusRules: RideStatusRules) async throws -> PostedWaitsLoad

    /// The park's wait board: every listed ride with its estimate, posted wait and reported condition.
    /// A board computed less than ``waitBoardFreshness`` ago is answered again unless a write it
    /// read has committed since (``WaitBoards``).
    /// - Returns: `nil` if there is no such park.
    func waitBoard(park: ParkID, estimator: WaitEstimator, statusRules: RideStatusRules) async throws -> [WaitBoardRow]?

    /// One ride's board row, or `nil` if the ride is not listed.
    func waitEstimate(ride: RideID, estimator: WaitEstimator, statusRules: RideStatusRules) async throws -> WaitBoardRow?

    /// A ride's wait history in buckets of `bucket` seconds from `from` to `to`.
    func waitHistory(ride: RideID, from: Date, to: Date, bucket: TimeInterval) async throws -> [WaitHistoryBucket]?
}

extension WaitStore {
    /// Loads a park's posted waits under the default estimator and status rules.
    public func loadPostedWaits(park: ParkID, _ entries: [PostedWaitEntry]) async throws -> PostedWaitsLoad {
        try await self.loadPostedWaits(park: park, entries, estimator: WaitEstimator(), statusRules: RideStatusRules())
    }
}
