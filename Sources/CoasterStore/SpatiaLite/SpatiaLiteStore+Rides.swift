import CoasterCore
import Foundation
import GRDB

extension SpatiaLiteStore {
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
    public func rideDetail(_ id: RideID, viewer: UserID, estimator: WaitEstimator, statusRules: RideStatusRules) async throws -> RideDetail? {
        let now = self.now()
        let arguments: StatementArguments = [
            "ride": id.rawValue, "viewer": viewer.rawValue,
            "metric": LeaderboardQuery.Metric.ride(id).key, "period": Periods.key(.allTime, now),
        ]
        return try await self.pool.read { db in
            guard let row = try Row.fetchOne(db.cachedStatement(sql: Self.rideDetailRow), arguments: arguments) else { return nil }
            let ride = RideRecord(row: row).ride
            return RideDetail(
                board: try Self.boardRow(ride, estimator: estimator, statusRules: statusRules, now: now, db),
                parkName: row["park_name"], zone: (row["zone_id"] as String?).map(ZoneID.init(rawValue:)),
                viewerCount: row["viewer_count"],
                community: RideCommunity(riders: row["community_riders"], rides: row["community_rides"]))
        }
    }

    /// A listed ride with its park's name, its ride zone, the viewer's count (`ride_counts`) and
    /// the settled riders and rides of its all-time board: a rider at each value is counted at
    /// level 0 of `tally_counts`, so the sums read one row a distinct count, not one a rider.
    static let rideDetailRow = """
        SELECT r.*, p.name AS park_name,
               (SELECT z.id FROM zones z WHERE z.ride_id = r.id AND z.kind = 'ride' LIMIT 1) AS zone_id,
               coalesce((SELECT c.rides FROM ride_counts c WHERE c.user_id = :viewer AND c.ride_id = r.id), 0) AS viewer_count,
               (SELECT coalesce(sum(t.riders), 0) FROM tally_counts t
                WHERE t.metric = :metric AND t.scope = 'global' AND t.period = :period AND t.level = 0) AS community_riders,
               (SELECT coalesce(sum(t.value * t.riders), 0) FROM tally_counts t
                WHERE t.metric = :metric AND t.scope = 'global' AND t.period = :period AND t.level = 0) AS community_rides
        FROM rides r JOIN parks p ON p.id = r.park_id
        WHERE r.id = :ride AND r.listed = 1
        """
}
