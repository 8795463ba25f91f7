import Foundation

/// One piece of wait evidence for a ride.
public struct WaitObservation: Hashable, Sendable {
    public enum Source: String, Hashable, Sendable, Codable, CaseIterable {
        /// A visitor said how long the line was.
        case crowd
        /// Timed by the service: from a visitor's enter into the ride's queue zone to their enter
        /// into its ride zone. Better evidence than a report.
        case measured
    }

    /// Who it came from (one person's repeated reports count once), `nil` when unknown.
    public var user: UserID?
    /// Minutes.
    public var minutes: Double
    /// When the observation became known (a timed wait is known when the rider boards).
    public var at: Date
    public var source: Source

    public init(user: UserID?, minutes: Double, at: Date, source: Source) {
        self.user = user
        self.minutes = minutes
        self.at = at
        self.source = source
    }
}

/// The park's official posted wait for a ride.
public struct PostedWait: Hashable, Sendable {
    /// Minutes; `nil` when the park shows the ride as down.
    public var minutes: Double?
    public var at: Date

    public init(minutes: Double?, at: Date) {
        self.minutes = minutes
        self.at = at
    }
}

/// How actual waits relate to the posted ones for a ride, learned from (actual, posted) pairs.
public struct PostedRatio: Hashable, Sendable {
    /// Multiply a posted wait by this to predict the actual wait.
    public var ratio: Double
    /// Pairs it was learned from.
    public var pairs: Int

    public init(ratio: Double, pairs: Int) {
        self.ratio = ratio
        self.pairs = pairs
    }

    /// A robust ratio (the median of actual/posted) over pairs with a posted wait of at least 5
    /// minutes; `fallback` when there are fewer than `minimumPairs`.
    public static func learn(_ pairs: [(actual: Double, posted: Double)], minimumPairs: Int = 10,
                             fallback: PostedRatio = PostedRatio(ratio: 1, pairs: 0)) -> PostedRatio {
        let ratios = pairs.filter { $0.posted >= 5 }.map { $0.actual / $0.posted }.sorted()
        guard ratios.count >= minimumPairs else { return fallback }
        let mid = ratios.count / 2
        let median = ratios.count % 2 == 1 ? ratios[mid] : (ratios[mid - 1] + ratios[mid]) / 2
        return PostedRatio(ratio: median, pairs: ratios.count)
    }
}

/// What the service says about a ride's wait.
public struct WaitEstimate: Hashable, Sendable {
    public enum Basis: String, Hashable, Sendable, Codable {
        case crowd, measured, posted
    }

    /// Minutes, rounded; `nil` means unknown: the evidence is too stale to guess.
    public var minutes: Double?
    /// A likely range (about the middle half of the evidence), minutes.
    public var low: Double?
    public var high: Double?
    /// Distinct people whose reports count.
    public var reports: Int
    /// Age in seconds of the newest report that counts.
    public var newestReportAge: TimeInterval?
    /// What the estimate rests on.
    public var basis: [Basis]

    public static let unknown = WaitEstimate(minutes: nil, low: nil, high: nil, reports: 0, newestReportAge: nil, basis: [])
}

/// The wait estimator: a pure function of the evidence (README "Waits").
///
/// 1. Each person's reports count once (their newest): one user cannot outvote a line.
/// 2. Reports older than ``window`` are dropped; the rest are weighted by recency,
///    exp(−age / ``halfLife``·ln 2), and timed (measured) waits count ``measuredWeight`` times.
/// 3. The posted wait, times the ride's learned actual-to-posted ratio, joins as one more
///    observation of weight ``priorWeight``, if it is at most ``postedMaxAge`` old.
/// 4. The estimate is the weighted median: a wild outlier moves it at most one rank.
///    The range is the weighted 25th–75th percentile, widened to ±``minimumSpread`` of the estimate.
/// 5. With no recent report and no recent posted wait the answer is unknown.
public struct WaitEstimator: Hashable, Sendable {
    /// Seconds.
    public var window: TimeInterval = 90 * 60
    /// Seconds over which a report's weight halves.
    public var halfLife: TimeInterval = 20 * 60
    public var measuredWeight = 2.0
    public var priorWeight = 1.0
    /// Seconds.
    public var postedMaxAge: TimeInterval = 60 * 60
    /// Fraction of the estimate the range spans at least on either side.
    public var minimumSpread = 0.15

    public init() {}

    public func estimate(observations: [WaitObservation], posted: PostedWait?, ratio: PostedRatio, now: Date) -> WaitEstimate {
        var newestByUser: [UserID: WaitObservation] = [:]
        var anonymous: [WaitObservation] = []
        // Times round-trip through storage as seconds since 1970 and can come back a hair after
        // `now`; a second of slack keeps a report made this instant.
        for o in observations where now.timeIntervalSince(o.at) >= -1 && now.timeIntervalSince(o.at) <= self.window
            && o.minutes.isFinite && o.minutes >= 0 {
            if let user = o.user {
                if let existing = newestByUser[user], existing.at >= o.at { continue }
                newestByUser[user] = o
            } else {
                anonymous.append(o)
            }
        }
        let counted = Array(newestByUser.values) + anonymous
        var weighted: [(value: Double, weight: Double)] = counted.map { o in
            let age = max(0, now.timeIntervalSince(o.at))
            return (o.minutes, exp(-age / self.halfLife * M_LN2) * (o.source == .measured ? self.measuredWeight : 1))
        }
        var basis: [WaitEstimate.Basis] = []
        if counted.contains(where: { $0.source == .crowd }) { basis.append(.crowd) }
        if counted.contains(where: { $0.source == .measured }) { basis.append(.measured) }
        if let posted, let minutes = posted.minutes, now.timeIntervalSince(posted.at) <= self.postedMaxAge, now.timeIntervalSince(posted.at) >= -1 {
            weighted.append((minutes * ratio.ratio, self.priorWeight))
            basis.append(.posted)
        }
        guard !weighted.isEmpty else { return .unknown }
        let middle = Self.weightedQuantile(weighted, 0.5)
        let spread = max(1, middle * self.minimumSpread)
        let low = min(Self.weightedQuantile(weighted, 0.25), middle - spread)
        let high = max(Self.weightedQuantile(weighted, 0.75), middle + spread)
        return WaitEstimate(
            minutes: middle.rounded(), low: max(0, low.rounded(.down)), high: high.rounded(.up), reports: counted.count,
            newestReportAge: counted.map { max(0, now.timeIntervalSince($0.at)) }.min(), basis: basis)
    }

    /// The smallest value whose cumulative weight reaches `q` of the total.
    static func weightedQuantile(_ items: [(value: Double, weight: Double)], _ q: Double) -> Double {
        let sorted = items.sorted { $0.value < $1.value }
        let total = sorted.reduce(0) { $0 + $1.weight }
        var cumulative = 0.0
        for item in sorted {
            cumulative += item.weight
            if cumulative >= q * total - 1e-12 { return item.value }
        }
        return sorted.last?.value ?? 0
    }
}
