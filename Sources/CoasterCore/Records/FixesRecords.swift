import Foundation

/// Where a fix came from.
public enum FixSource: String, Sendable {
    case api, owntracks
}

/// The outcome of one fix of a batch, in the batch's order.
public struct FixResult: Hashable, Sendable {
    public var decision: FixDecision
    /// The fix had a client id already accepted: this is the earlier outcome, nothing was stored.
    public var replayed: Bool

    public init(decision: FixDecision, replayed: Bool) {
        self.decision = decision
        self.replayed = replayed
    }
}

/// What a batch of fixes did, and the user's state after it.
public struct FixBatch: Hashable, Sendable {
    /// In the batch's order.
    public var results: [FixResult]
    public var state: TrackState
    /// Open visits: park → last evidence.
    public var visits: [ParkID: Date]

    public init(results: [FixResult], state: TrackState, visits: [ParkID: Date]) {
        self.results = results
        self.state = state
        self.visits = visits
    }
}

/// A park visit (a check-in), open until `leftAt`.
public struct Visit: Hashable, Sendable {
    public enum How: String, Sendable, Codable {
        /// `POST /v1/checkins`.
        case explicit
        /// An enter transition of a fix.
        case automatic
    }

    public var id: Int64
    public var park: ParkID
    public var how: How
    public var enteredAt: Date
    public var leftAt: Date?

    public init(id: Int64, park: ParkID, how: How, enteredAt: Date, leftAt: Date?) {
        self.id = id
        self.park = park
        self.how = how
        self.enteredAt = enteredAt
        self.leftAt = leftAt
    }
}

/// What an explicit check-in did.
public enum CheckinOutcome: Hashable, Sendable {
    case created(Visit)
    /// A visit to this park was already open; it is returned.
    case alreadyOpen(Visit)
    case refused(CheckinRefusal)
}

public enum RideError: Error, Equatable, Sendable {
    case noSuchRide
}

/// One logged ride.
public struct RideLogEntry: Hashable, Sendable {
    public var id: Int64
    public var ride: RideID
    public var rideName: String
    public var park: ParkID
    public var riddenAt: Date
    public var evidence: RideEvidence

    public init(id: Int64, ride: RideID, rideName: String, park: ParkID, riddenAt: Date, evidence: RideEvidence) {
        self.id = id
        self.ride = ride
        self.rideName = rideName
        self.park = park
        self.riddenAt = riddenAt
        self.evidence = evidence
    }
}

/// A rider's totals.
public struct RiderStats: Hashable, Sendable {
    public var totalRides: Int
    public var distinctRides: Int
    /// Distinct roller coasters ridden.
    public var coasterCredits: Int
    public var parksVisited: Int
    /// Challenges the rider won (among those ranked first when the results became final).
    public var challengesWon: Int

    public init(totalRides: Int, distinctRides: Int, coasterCredits: Int, parksVisited: Int, challengesWon: Int = 0) {
        self.totalRides = totalRides
        self.distinctRides = distinctRides
        self.coasterCredits = coasterCredits
        self.parksVisited = parksVisited
        self.challengesWon = challengesWon
    }
}

extension RiderStats {
    /// The statistics among a rider's facts.
    public init(_ f: RiderFacts) {
        self.init(totalRides: f.totalRides, distinctRides: f.distinctRides, coasterCredits: f.coasterCredits, parksVisited: f.parksVisited,
                  challengesWon: f.challengesWon)
    }
}
