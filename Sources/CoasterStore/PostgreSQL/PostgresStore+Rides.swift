import CoasterCore
import Foundation
import PostgresNIO

extension PostgresStore: RideStore {
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
        let metric = LeaderboardQuery.Metric.ride(id).key, period = Periods.key(.allTime, now)
        return try await self.read { tx in
            guard let row = try await tx.first("""
                SELECT \(unescaped: Self.rideColumns("r")), p.name,
                       (SELECT z.id FROM zones z WHERE z.ride_id = r.id AND z.kind = 'ride' ORDER BY z.position LIMIT 1),
                       coalesce((SELECT c.rides FROM ride_counts c WHERE c.user_id = \(viewer.rawValue) AND c.ride_id = r.id), 0),
                       (SELECT coalesce(sum(t.riders), 0)::bigint FROM tally_counts t
                        WHERE t.metric = \(metric) AND t.scope = 'global' AND t.period = \(period) AND t.level = 0),
                       (SELECT coalesce(sum(t.value * t.riders), 0)::bigint FROM tally_counts t
                        WHERE t.metric = \(metric) AND t.scope = 'global' AND t.period = \(period) AND t.level = 0)
                FROM rides r JOIN parks p ON p.id = r.park_id
                WHERE r.id = \(id.rawValue) AND r.listed
                """) else { return nil }
            // A listed ride with its park's name, its ride zone, the viewer's count (`ride_counts`)
            // and the settled riders and rides of its all-time board: a rider at each value is
            // counted at level 0 of `tally_counts`, so the sums read one row a distinct count.
            let ride = try Self.ride(row)
            let columns = row.makeRandomAccess(), next = Self.rideColumnCount
            return RideDetail(
                board: try await Self.boardRow(ride, estimator: estimator, statusRules: statusRules, now: now, tx),
                parkName: try columns[next].decode(String.self),
                zone: try columns[next + 1].decode(String?.self).map(ZoneID.init(rawValue:)),
                viewerCount: try columns[next + 2].decode(Int.self),
                community: RideCommunity(riders: try columns[next + 3].decode(Int.self), rides: try columns[next + 4].decode(Int.self)))
        }
    }
}
