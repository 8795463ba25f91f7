import Foundation

/// Why a wait or status report was refused. Raw values are the API's stable reason codes.
public enum WaitReportRefusal: String, Error, Sendable, CaseIterable {
    /// Not on a visit to the ride's park.
    case notCheckedIn = "not_checked_in"
    /// No accepted fix in the last few minutes.
    case noRecentFix = "no_recent_fix"
    /// The latest fix is not near the ride's zone or queue.
    case notNearRide = "not_near_ride"
    /// This person already reported this ride within the window.
    case tooSoon = "too_soon"
}

/// What a ride is doing, as visitors report it.
public enum RideCondition: String, Sendable, Codable, CaseIterable, NamedCases {
    case operating, down, closed
}

/// Who may report a wait or a ride's status, and how often (docs: Waits).
public struct WaitReportPolicy: Hashable, Sendable {
    /// Plausible reported waits, minutes.
    public var minutes: ClosedRange<Double> = 0...300
    /// One report per person per ride within this many seconds.
    public var window: TimeInterval = 15 * 60
    /// The latest fix must be at most this old (seconds).
    public var fixFreshness: TimeInterval = 10 * 60
    /// How far (metres) beyond the fix's accuracy circle the ride's or its queue's zone may be.
    public var nearDistance: Double = 75

    public init() {}

    /// How much a reporter's word weighs, 0…1: a fresh account's report is a vote anyone can
    /// make by the hundred, so it counts ``newReporterWeight``; a reporter is *established* once
    /// their account is ``establishedAge`` old and they have ``establishedVisits`` visits, found
    /// by the fences, that began over a day before. Then their report counts fully.
    public static func trust(accountAge: TimeInterval, earlierVisits: Int) -> Double {
        accountAge >= Self.establishedAge && earlierVisits >= Self.establishedVisits ? 1 : Self.newReporterWeight
    }

    /// Seconds.
    public static let establishedAge: TimeInterval = 7 * 24 * 3600
    public static let establishedVisits = 2
    /// Ten fresh accounts weigh as much as one established reporter.
    public static let newReporterWeight = 0.1

    /// Checks a report against what a store read of the reporter (``WaitReportFacts``).
    public func check(_ facts: WaitReportFacts, index: FenceIndex, now: Date) -> Result<Void, WaitReportRefusal> {
        self.check(latest: facts.latest, visiting: facts.visiting, zones: facts.zones, lastReport: facts.lastReport, index: index, now: now)
    }

    /// Checks a report against the reporter's latest fix and visits.
    /// - Parameters:
    ///   - zones: the ride's own zone and its queue zones; empty when the ride has no footprint,
    ///     and then being on a visit to its park is enough.
    ///   - lastReport: when this person last reported this ride.
    public func check(latest: AcceptedFix?, visiting: Bool, zones: Set<ZoneID>, lastReport: Date?, index: FenceIndex,
                      now: Date) -> Result<Void, WaitReportRefusal> {
        guard visiting else { return .failure(.notCheckedIn) }
        guard let latest, now.timeIntervalSince(latest.recordedAt) <= self.fixFreshness else { return .failure(.noRecentFix) }
        if !zones.isEmpty {
            let reach = index.locate(latest.position, accuracy: latest.accuracy + self.nearDistance)
            guard reach.contains(where: { park in park.zones.contains { zones.contains($0.id) } }) else { return .failure(.notNearRide) }
        }
        if let lastReport, now.timeIntervalSince(lastReport) < self.window { return .failure(.tooSoon) }
        return .success(())
    }

    /// Seconds until this person may report this ride again.
    public func retryAfter(lastReport: Date, now: Date) -> TimeInterval {
        max(1, self.window - now.timeIntervalSince(lastReport))
    }
}

/// What a report is checked against, read by the store in the report's transaction
/// (``WaitReportPolicy/check(_:index:now:)``).
public struct WaitReportFacts: Hashable, Sendable {
    /// The reporter's latest accepted fix.
    public var latest: AcceptedFix?
    /// Whether the reporter is on a visit to the ride's park.
    public var visiting: Bool
    /// The ride's own zone and its queue zones.
    public var zones: Set<ZoneID>
    /// When the reporter last reported this ride (this kind of report).
    public var lastReport: Date?

    public init(latest: AcceptedFix?, visiting: Bool, zones: Set<ZoneID>, lastReport: Date?) {
        self.latest = latest
        self.visiting = visiting
        self.zones = zones
        self.lastReport = lastReport
    }
}

/// Whether a report may be made, from what the store read of its reporter, at a time.
public typealias WaitReportCheck = @Sendable (_ facts: WaitReportFacts, _ now: Date) -> Result<Void, WaitReportRefusal>

/// A visitor's report of what a ride is doing.
public struct StatusReport: Hashable, Sendable {
    public var user: UserID
    public var condition: RideCondition
    public var at: Date

    public init(user: UserID, condition: RideCondition, at: Date) {
        self.user = user
        self.condition = condition
        self.at = at
    }
}

/// The crowd's verdict on a ride's condition: each person's newest report in the last
/// ``window`` seconds votes, weighted by recency (half-life ``halfLife``); no votes, no verdict.
public struct RideStatusRules: Hashable, Sendable {
    public var window: TimeInterval = 30 * 60
    public var halfLife: TimeInterval = 10 * 60

    public init() {}

    public func consensus(_ reports: [StatusReport], now: Date) -> RideCondition? {
        var newest: [UserID: StatusReport] = [:]
        for r in reports where now.timeIntervalSince(r.at) >= -1 && now.timeIntervalSince(r.at) <= self.window {
            if let existing = newest[r.user], existing.at >= r.at { continue }
            newest[r.user] = r
        }
        var score: [RideCondition: Double] = [:]
        for r in newest.values {
            score[r.condition, default: 0] += exp(-max(0, now.timeIntervalSince(r.at)) / self.halfLife * M_LN2)
        }
        return score.max { ($0.value, $0.key.rawValue) < ($1.value, $1.key.rawValue) }?.key
    }
}

/// What a ride is doing now, as the service tells it: the wait board's `status` and the `status`
/// live message (docs: Waits).
public enum RideLiveStatus: String, Sendable, Codable, CaseIterable {
    case operating, down, closed, unknown

    init(_ condition: RideCondition) {
        switch condition {
        case .operating: self = .operating
        case .down: self = .down
        case .closed: self = .closed
        }
    }
}

/// A ride's live status and the evidence that settled it.
public struct RideLiveState: Hashable, Sendable {
    public enum Source: String, Hashable, Sendable, Codable, CaseIterable {
        /// Visitors: their status reports, or their reported and timed waits.
        case crowd
        /// The park's posted-wait feed.
        case posted
    }

    public var status: RideLiveStatus
    /// `nil` when the status is unknown.
    public var source: Source?

    public static let unknown = RideLiveState(status: .unknown, source: nil)

    public init(status: RideLiveStatus, source: Source?) {
        self.status = status
        self.source = source
    }
}

extension RideStatusRules {
    /// A ride's live status: the freshest word on it, then what riders did.
    /// 1. the newer of the crowd's verdict (``consensus(_:now:)`` of `statuses`, as of the newest
    ///    report that agrees with it) and the park's newest posted wait if it is current
    ///    (``WaitEstimator/isCurrent(_:now:)``; `down` when the park shows the ride down, else
    ///    `operating`). A feed that lags on a breakdown is outrun by the riders still reporting it,
    ///    and a ride the feed shows running again after the crowd's reports is running;
    /// 2. `operating`, if anyone reported or timed a wait within the estimator's window: they rode it;
    /// 3. `unknown`.
    ///
    /// `posted` and `recentWaits` are called only when what comes before them does not settle the
    /// status, so a caller that reads them from the database reads no more than the answer needs.
    public func liveState(statuses: [StatusReport], posted: () throws -> PostedWait?, recentWaits: () throws -> Bool,
                          estimator: WaitEstimator, now: Date) rethrows -> RideLiveState {
        let current = try posted().flatMap { estimator.isCurrent($0, now: now) ? $0 : nil }
        if let verdict = self.consensus(statuses, now: now) {
            let verdictAt = statuses.filter { $0.condition == verdict }.map(\.at).max() ?? now
            if let current, current.at > verdictAt {
                return RideLiveState(status: current.minutes == nil ? .down : .operating, source: .posted)
            }
            return RideLiveState(status: RideLiveStatus(verdict), source: .crowd)
        }
        if let current {
            return RideLiveState(status: current.minutes == nil ? .down : .operating, source: .posted)
        }
        if try recentWaits() { return RideLiveState(status: .operating, source: .crowd) }
        return .unknown
    }
}
