import Foundation

/// One listed ride as its detail page shows it: the ride, its park, its wait and who has ridden it.
public struct RideDetail: Hashable, Sendable {
    /// The ride's wait board row, exactly as the park's board computes it; it holds the ride.
    public var board: WaitBoardRow
    public var parkName: String
    /// The ride's own zone, when it has a footprint.
    public var zone: ZoneID?
    /// How often the viewer has ridden it: every ride they logged, the newest included.
    public var viewerCount: Int
    public var community: RideCommunity

    public var ride: Ride { self.board.ride }

    public init(board: WaitBoardRow, parkName: String, zone: ZoneID?, viewerCount: Int, community: RideCommunity) {
        self.board = board
        self.parkName = parkName
        self.zone = zone
        self.viewerCount = viewerCount
        self.community = community
    }
}

/// How many people have ridden a ride and how often, counting only rides that have reached the
/// leaderboards (older than the location time-to-live, ``LeaderboardStore/settleTallies(through:limit:)``).
public struct RideCommunity: Hashable, Sendable {
    /// Distinct riders.
    public var riders: Int
    /// Rides logged by all of them together.
    public var rides: Int

    public init(riders: Int, rides: Int) {
        self.riders = riders
        self.rides = rides
    }
}
