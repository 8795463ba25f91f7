import CoasterCore
import Foundation

/// A ride's page.
public protocol RideStore: Sendable {
    /// The ride `id` seen by `viewer`, or `nil` if no listed ride has that id: one read.
    ///
    /// The community figures come from the ride's all-time leaderboard counts (`tally_counts`),
    /// not from the ride logs. A ride log reaches them only once it is older than the location
    /// time-to-live, as it reaches the boards: a figure that moved the moment someone logged a
    /// ride would tell a reader who watches it, next to a friend list or a board, that a
    /// particular rider (a ghost among them) is on that ride now. So the detail tells nothing of
    /// the rides within the time-to-live that the leaderboards do not. They count every rider, those
    /// the viewer blocked or who blocked them included: a settled sum names nobody. The viewer's
    /// own count is theirs to see at once, so it is read from `ride_counts` as the park's ride
    /// list reads it.
    func rideDetail(_ id: RideID, viewer: UserID, estimator: WaitEstimator, statusRules: RideStatusRules) async throws -> RideDetail?
}
