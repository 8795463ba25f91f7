import Foundation

/// Where a ride's live status comes from.
public enum RideStatusSource: String, Sendable, Codable, CaseIterable, NamedCases {
    /// The park's own posted-wait feed (a row without minutes: the ride is down).
    case posted
    /// The crowd's consensus of status reports (``RideStatusRules/consensus(_:now:)``).
    case crowd
}

/// What a ride is doing now, by the freshest word on it.
public struct RideLiveStatus: Hashable, Sendable {
    public var condition: RideCondition
    public var source: RideStatusSource
    /// When the word was given: the posted row's time, or the newest report agreeing with the
    /// crowd's verdict.
    public var at: Date

    public init(condition: RideCondition, source: RideStatusSource, at: Date) {
        self.condition = condition
        self.source = source
        self.at = at
    }
}

extension RideStatusRules {
    /// The freshest of the park's posted word (at most ``postedWindow`` old) and the crowd's
    /// verdict; `nil` when neither speaks. A crowd that saw the ride come back after the feed
    /// said it was down wins, as does a feed newer than the crowd's reports.
    public func current(posted: PostedWait?, reports: [StatusReport], now: Date) -> RideLiveStatus? {
        var candidates: [RideLiveStatus] = []
        if let posted, now.timeIntervalSince(posted.at) <= self.postedWindow, now.timeIntervalSince(posted.at) >= -1 {
            candidates.append(RideLiveStatus(condition: posted.minutes == nil ? .down : .operating, source: .posted, at: posted.at))
        }
        if let verdict = self.consensus(reports, now: now),
           let newest = reports.filter({ $0.condition == verdict && now.timeIntervalSince($0.at) <= self.window }).map(\.at).max() {
            candidates.append(RideLiveStatus(condition: verdict, source: .crowd, at: newest))
        }
        return candidates.max { $0.at < $1.at }
    }
}
