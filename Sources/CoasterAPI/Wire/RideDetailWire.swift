import CoasterCore
import CoasterService
import CoasterStore
import Foundation
import Hummingbird

/// `GET /v1/rides/{rideId}`: one ride with its park, its wait and who has ridden it.
struct RideDetailResponse: ResponseEncodable, Sendable {
    struct Park: Encodable, Sendable {
        var id: ParkID
        var name: String
    }

    /// The ride's wait and condition now: its row of the park's wait board (`GET
    /// /v1/parks/{parkId}/waits`), without the ride's name and type the detail already gives.
    struct Wait: Encodable, Sendable {
        var estimate: EstimateWire
        /// What visitors report; `nil` when nobody did lately.
        var condition: RideCondition?
        /// What the ride is doing now, as the board says (docs: Waits).
        var status: RideLiveStatus
        var statusSource: RideLiveState.Source?
        var posted: WaitBoardResponse.Posted?
        var postedModel: WaitBoardResponse.Model
    }

    /// Riders and rides counted once their rides are older than the location time-to-live, as the
    /// leaderboards count them (``RideStore/rideDetail(_:viewer:estimator:statusRules:)``).
    struct Community: Encodable, Sendable {
        var riders: Int
        var rides: Int
    }

    /// The ride as the park's ride list shows it, its status the one its park file gives.
    var ride: RideWire
    var park: Park
    var wait: Wait
    /// How often the caller has ridden it, their latest ride included.
    var myCount: Int
    var community: Community

    init(_ detail: RideDetail) {
        let row = detail.board
        self.ride = RideWire(detail.ride, zone: detail.zone)
        self.park = Park(id: detail.ride.park, name: detail.parkName)
        self.wait = Wait(estimate: EstimateWire(row.estimate), condition: row.reportedCondition, status: row.status.status,
                         statusSource: row.status.source, posted: row.posted.map(WaitBoardResponse.Posted.init),
                         postedModel: WaitBoardResponse.Model(row.model))
        self.myCount = detail.viewerCount
        self.community = Community(riders: detail.community.riders, rides: detail.community.rides)
    }
}
