import CoasterCore
import CoasterHTTP
import CoasterService
import CoasterStore
import Foundation
import Hummingbird

struct EstimateWire: Encodable, Sendable {
    /// `estimated`, or `unknown` when the evidence is too stale to guess.
    var status: String
    var minutes: Double?
    var low: Double?
    var high: Double?
    var reports: Int
    /// Of `reports`, the established reporters'.
    var trustedReports: Int
    /// Seconds.
    var newestReportAge: Int?
    var basis: [WaitEstimate.Basis]

    init(_ e: WaitEstimate) {
        self.status = e.minutes == nil ? "unknown" : "estimated"
        self.minutes = e.minutes
        self.low = e.low
        self.high = e.high
        self.reports = e.reports
        self.trustedReports = e.trustedReports
        self.newestReportAge = e.newestReportAge.map { Int($0) }
        self.basis = e.basis
    }
}

struct WaitReportResponse: ResponseEncodable, Sendable {
    var ride: RideID
    var reportedAt: Date
    var estimate: EstimateWire
}

struct StatusReportResponse: ResponseEncodable, Sendable {
    var ride: RideID
    var reportedAt: Date
    /// The crowd's verdict after this report.
    var condition: RideCondition?
}

struct WaitBoardResponse: ResponseEncodable, Sendable {
    struct Posted: Encodable, Sendable {
        var minutes: Double?
        var down: Bool
        var at: Date
    }

    struct Model: Encodable, Sendable {
        var intercept: Double
        var slope: Double
        var pairs: Int
    }

    struct Item: Encodable, Sendable {
        var ride: RideID
        var name: String
        var type: RideType
        var estimate: EstimateWire
        /// What visitors report; `nil` when nobody did lately.
        var condition: RideCondition?
        /// What the ride is doing now, from the crowd's verdict, the posted wait or recent waits
        /// (docs: Waits); the `status` live message tells of its changes.
        var status: RideLiveStatus
        /// What ``status`` rests on; `nil` when unknown.
        var statusSource: RideLiveState.Source?
        var posted: Posted?
        /// The learned line actual ≈ intercept + slope × posted for this part of the day, and the
        /// pairs it rests on (0: not learned yet, the posted wait is taken as it is).
        var postedModel: Model
    }

    var park: ParkID
    var rides: [Item]

    init(park: ParkID, rows: [WaitBoardRow]) {
        self.park = park
        self.rides = rows.map { r in
            Item(ride: r.ride.id, name: r.ride.name, type: r.ride.type, estimate: EstimateWire(r.estimate), condition: r.reportedCondition,
                 status: r.status.status, statusSource: r.status.source,
                 posted: r.posted.map(Posted.init), postedModel: Model(r.model))
        }
    }
}

extension WaitBoardResponse.Posted {
    init(_ posted: PostedWait) {
        self.init(minutes: posted.minutes, down: posted.minutes == nil, at: posted.at)
    }
}

extension WaitBoardResponse.Model {
    /// Rounded to what a reader can use: minutes to the hundredth, the slope to the thousandth.
    init(_ model: PostedModel) {
        self.init(intercept: (model.intercept * 100).rounded() / 100, slope: (model.slope * 1000).rounded() / 1000, pairs: model.pairs)
    }
}

/// `GET /v1/rides/{rideId}/waits/history`, written by ``JSONWriter`` from its members' list
/// (``JSONObject``): a day of quarter hours is 96 buckets, each a time `JSONEncoder` formats.
struct WaitHistoryResponse: JSONObject, JSONWritable, Sendable {
    struct Bucket: JSONObject, Sendable {
        var start: Date
        var reports: Int
        var reportedMedian: Double?
        var posted: Double?

        static let members: [JSONMember<Self>] = [
            .init("posted", \.posted), .init("reportedMedian", \.reportedMedian), .init("reports", \.reports), .init("start", \.start),
        ]
    }

    var ride: RideID
    var bucketSeconds: Int
    var buckets: [Bucket]

    static let members: [JSONMember<Self>] = [.init("bucketSeconds", \.bucketSeconds), .init("buckets", \.buckets), .init("ride", \.ride.rawValue)]

    /// A day of quarter hours is 96 buckets of up to ~90 bytes.
    var jsonCapacity: Int { 64 + 96 * self.buckets.count }
}

struct PostedWaitsResponse: ResponseEncodable, Sendable {
    var park: ParkID
    var loaded: Int
}
