import Foundation

/// Why an explicit check-in was refused. Raw values are the API's stable reason codes.
public enum CheckinRefusal: String, Error, Sendable, CaseIterable {
    /// No accepted fix recently enough.
    case noRecentFix = "no_recent_fix"
    /// The latest fix's accuracy circle does not touch the park.
    case notInPark = "not_in_park"
    /// The circle crosses the park's boundary and is too wide to count.
    case accuracyTooLow = "accuracy_too_low"
}

/// The check-in decision policy (docs: FixesAndVisits, visits and check-ins).
public struct CheckinPolicy: Hashable, Sendable {
    /// The latest fix must be at most this old (seconds).
    public var freshness: TimeInterval = 10 * 60
    /// An `uncertain` fix (circle crossing the fence) counts when its accuracy is at most this
    /// (metres): standing at the gate with a good fix is being there.
    public var uncertainMaximumAccuracy: Double = 50
    /// A visit with no evidence (fix in the park, or check-in) for this long (seconds) is over.
    public var visitTimeout: TimeInterval = 12 * 3600

    public init() {}

    /// Turns the latest fix into a check-in decision for one park: inside counts; uncertain counts
    /// with a good enough accuracy; outside never.
    public func decide(latest: AcceptedFix?, park: ParkID, index: FenceIndex, now: Date) -> Result<Containment, CheckinRefusal> {
        guard let latest, now.timeIntervalSince(latest.recordedAt) <= self.freshness else { return .failure(.noRecentFix) }
        let containment = index.locate(latest.position, accuracy: latest.accuracy).first { $0.id == park }?.containment ?? .outside
        switch containment {
        case .inside: return .success(.inside)
        case .uncertain:
            return latest.accuracy <= self.uncertainMaximumAccuracy ? .success(.uncertain) : .failure(.accuracyTooLow)
        case .outside: return .failure(.notInPark)
        }
    }
}

extension RideType {
    /// Seconds between two rides on one attraction when the park file gives no `cycle_s`: a
    /// typical ride time plus unloading and loading.
    public var defaultCycleSeconds: Int {
        switch self {
        case .coaster: 150
        case .flat, .family, .kiddie, .ride, .other: 120
        case .water, .dark: 300
        case .transport: 600
        case .show: 1200
        }
    }
}

extension Ride {
    /// The shortest time between two logged rides of this ride by one rider.
    public var cooldown: TimeInterval { TimeInterval(self.cycleSeconds ?? self.type.defaultCycleSeconds) }
}

/// Why a ride could not be logged. Raw values are the API's stable reason codes.
public enum RideLogRefusal: Error, Hashable, Sendable {
    /// No open visit to the ride's park.
    case notCheckedIn
    /// The ride is closed, removed or not built yet.
    case notOperating(RideStatus)
    /// The ride's live status, from the park's posted feed or the crowd, is `down` or `closed`.
    case reported(RideLiveState)
    /// Ridden too recently; try again after this many seconds.
    case cooldown(retryAfter: TimeInterval)
    /// Another ride was logged too recently for anyone to have ridden it and walked here.
    case impossibleSequence(after: RideID, afterName: String, walk: Double, retryAfter: TimeInterval)
}
