import Foundation

/// One row of an admin's posted-wait feed.
public struct PostedWaitEntry: Hashable, Sendable {
    public var ride: RideID
    public var at: Date
    /// `nil` when the park shows the ride as down.
    public var minutes: Double?

    public init(ride: RideID, at: Date, minutes: Double?) {
        self.ride = ride
        self.at = at
        self.minutes = minutes
    }
}

/// One ride on a park's wait board.
public struct WaitBoardRow: Hashable, Sendable {
    public var ride: Ride
    public var estimate: WaitEstimate
    public var posted: PostedWait?
    /// The crowd's verdict on the ride's condition, if anyone reported lately.
    public var reportedCondition: RideCondition?
    /// The posted-to-actual model in force for this part of the day.
    public var model: PostedModel
    /// What the ride is doing now (``RideStatusRules/liveState(statuses:posted:recentWaits:estimator:now:)``).
    public var status: RideLiveState

    public init(ride: Ride, estimate: WaitEstimate, posted: PostedWait?, reportedCondition: RideCondition?, model: PostedModel, status: RideLiveState) {
        self.ride = ride
        self.estimate = estimate
        self.posted = posted
        self.reportedCondition = reportedCondition
        self.model = model
        self.status = status
    }
}

/// What loading a posted-wait feed wrote and changed.
public struct PostedWaitsLoad: Hashable, Sendable {
    public var loaded: Int
    /// The rides whose live status the feed changed, in ride order.
    public var statusChanges: [RideStatusChange]

    public init(loaded: Int, statusChanges: [RideStatusChange]) {
        self.loaded = loaded
        self.statusChanges = statusChanges
    }
}

/// One bucket of a ride's wait history.
public struct WaitHistoryBucket: Hashable, Sendable {
    public var start: Date
    public var reports: Int
    /// Median of the reported and timed waits in the bucket.
    public var reportedMedian: Double?
    /// The last posted wait in the bucket (`nil` if none or down).
    public var posted: Double?

    public init(start: Date, reports: Int, reportedMedian: Double?, posted: Double?) {
        self.start = start
        self.reports = reports
        self.reportedMedian = reportedMedian
        self.posted = posted
    }
}

public enum PostedWaitError: Error, Equatable, Sendable {
    /// Rows naming rides that are not listed in the park: (row index, ride id).
    case unknownRides([(Int, String)])

    public static func == (a: PostedWaitError, b: PostedWaitError) -> Bool {
        switch (a, b) {
        case (.unknownRides(let x), .unknownRides(let y)): x.map(\.0) == y.map(\.0) && x.map(\.1) == y.map(\.1)
        }
    }
}

/// A write changed a ride's live status: what listeners in its park are told.
public struct RideStatusChange: Hashable, Sendable {
    public var ride: RideID
    public var name: String
    public var previous: RideLiveState
    public var current: RideLiveState
    /// When the evidence that settled ``current`` was made: the report, or the posted row.
    public var at: Date

    public init(ride: RideID, name: String, previous: RideLiveState, current: RideLiveState, at: Date) {
        self.ride = ride
        self.name = name
        self.previous = previous
        self.current = current
        self.at = at
    }
}

/// A crowd report the store accepted.
public struct AcceptedReport: Hashable, Sendable {
    public var at: Date
    /// The crowd's verdict on the ride's condition after the report.
    public var verdict: RideCondition?
    /// Set when the report changed the ride's live status.
    public var statusChange: RideStatusChange?

    public init(at: Date, verdict: RideCondition?, statusChange: RideStatusChange?) {
        self.at = at
        self.verdict = verdict
        self.statusChange = statusChange
    }
}
