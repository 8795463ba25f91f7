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
    /// How much the reporter's word weighs, 0…1 (``WaitReportPolicy/trust(accountAge:earlierVisits:)``).
    public var trust: Double

    public init(user: UserID?, minutes: Double, at: Date, source: Source, trust: Double = 1) {
        self.user = user
        self.minutes = minutes
        self.at = at
        self.source = source
        self.trust = trust
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

/// How actual waits relate to the posted ones for a ride: actual ≈ a + b·posted, fitted robustly
/// (least absolute deviations) on (actual, posted) pairs from one part of the day.
///
/// Posted waits overstate actual ones, and by how much changes through the day (TouringPlans:
/// Na'vi River Journey's actual/posted is about 0.6 early, 0.9–1.0 at midday, under 0.5 late),
/// so a model is learned per ``WaitHours`` bucket.
public struct PostedModel: Hashable, Sendable {
    public var intercept: Double
    public var slope: Double
    /// Pairs it was learned from; 0 for the identity used before there are enough.
    public var pairs: Int
    /// The 25th and 75th percentiles of actual ÷ prediction on the pairs: the likely range.
    public var lowFactor: Double?
    public var highFactor: Double?

    public static let identity = PostedModel(intercept: 0, slope: 1, pairs: 0, lowFactor: nil, highFactor: nil)

    public init(intercept: Double, slope: Double, pairs: Int, lowFactor: Double?, highFactor: Double?) {
        self.intercept = intercept
        self.slope = slope
        self.pairs = pairs
        self.lowFactor = lowFactor
        self.highFactor = highFactor
    }

    /// Predicted actual wait for a posted wait, minutes, never negative.
    public func predict(_ posted: Double) -> Double { max(0, self.intercept + self.slope * posted) }

    /// Fits the line by iteratively reweighted least squares (30 rounds, weights 1/max(|r|, 1)),
    /// which converges on the least-absolute-deviation line: one absurd pair cannot tilt it.
    /// Fewer than `minimumPairs` pairs give ``identity``; fewer than 20 give no range factors.
    public static func learn(_ pairs: [(actual: Double, posted: Double)], minimumPairs: Int = 10) -> PostedModel {
        let usable = pairs.filter { $0.posted > 0 && $0.actual.isFinite && $0.posted.isFinite }
        guard usable.count >= minimumPairs else { return .identity }
        var a = 0.0
        var b = 1.0
        var weights = [Double](repeating: 1, count: usable.count)
        for _ in 0..<30 {
            var sw = 0.0, sx = 0.0, sy = 0.0, sxx = 0.0, sxy = 0.0
            for (i, p) in usable.enumerated() {
                let w = weights[i]
                sw += w; sx += w * p.posted; sy += w * p.actual; sxx += w * p.posted * p.posted; sxy += w * p.posted * p.actual
            }
            let det = sw * sxx - sx * sx
            guard abs(det) > 1e-9 else { break }
            b = (sw * sxy - sx * sy) / det
            a = (sy - b * sx) / sw
            for (i, p) in usable.enumerated() { weights[i] = 1 / max(abs(p.actual - (a + b * p.posted)), 1) }
        }
        var model = PostedModel(intercept: a, slope: b, pairs: usable.count, lowFactor: nil, highFactor: nil)
        let factors = usable.compactMap { p -> Double? in
            let predicted = model.predict(p.posted)
            return predicted >= 1 ? p.actual / predicted : nil
        }.sorted()
        if factors.count >= 20 {
            model.lowFactor = quantile(factors, 0.25)
            model.highFactor = quantile(factors, 0.75)
        }
        return model
    }

    /// Linear interpolation between order statistics (numpy's default).
    static func quantile(_ sorted: [Double], _ q: Double) -> Double {
        let position = q * Double(sorted.count - 1)
        let lower = Int(position.rounded(.down))
        let upper = min(lower + 1, sorted.count - 1)
        return sorted[lower] + (sorted[upper] - sorted[lower]) * (position - Double(lower))
    }
}

/// Parts of a park day with their own actual-to-posted relation: before 10:00, 10:00–16:00,
/// and later (hours after midnight, until 05:00, belong to the evening before).
public enum WaitHours {
    public static func bucket(localHour: Int) -> Int {
        let hour = localHour < 5 ? localHour + 24 : localHour
        return hour < 10 ? 0 : hour < 16 ? 1 : 2
    }

    public static func bucket(_ date: Date, in timeZone: TimeZone) -> Int {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        return Self.bucket(localHour: calendar.component(.hour, from: date))
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
    /// Of those, the established reporters (``WaitReportPolicy/trust(accountAge:earlierVisits:)``):
    /// how many people an estimate rests on that no one can make by opening accounts.
    public var trustedReports: Int = 0
    /// Age in seconds of the newest report that counts.
    public var newestReportAge: TimeInterval?
    /// What the estimate rests on.
    public var basis: [Basis]

    public static let unknown = WaitEstimate(minutes: nil, low: nil, high: nil, reports: 0, newestReportAge: nil, basis: [])
}

/// The wait estimator: a pure function of the evidence (docs: Waits).
///
/// 1. Each person's reports count once (their newest): one user cannot outvote a line.
/// 2. Reports older than ``window`` are dropped; the rest are weighted by recency,
///    exp(−age / ``timeConstant``), and timed (measured) waits count ``measuredWeight`` times;
///    each weight is scaled by the reporter's trust, so fresh accounts cannot outvote the
///    established reporters and the posted wait.
/// 3. The posted wait, turned into an expected actual wait by the ride's ``PostedModel`` for this
///    part of the day, joins as one more observation of weight ``priorWeight``, if it is at most
///    ``postedMaxAge`` old.
/// 4. The estimate is the weighted median: a wild outlier moves it at most one rank.
/// 5. The range is the estimate times the model's 25th and 75th percentile factors of
///    actual ÷ predicted (about half of actual waits fall inside), or, before there are enough
///    pairs, the weighted 25th–75th percentile of the evidence; at least ±``minimumSpread``.
/// 6. With no recent report and no recent posted wait the answer is unknown.
///
/// The parameters were chosen on 2017 TouringPlans data and checked on 2018–2019 (docs: Waits, "How good are the estimates").
public struct WaitEstimator: Hashable, Sendable {
    /// Seconds.
    public var window: TimeInterval = 120 * 60
    /// Seconds over which a report's weight falls by a factor e.
    public var timeConstant: TimeInterval = 20 * 60
    public var measuredWeight = 2.0
    public var priorWeight = 2.0
    /// Seconds.
    public var postedMaxAge: TimeInterval = 60 * 60
    /// Fraction of the estimate the range spans at least on either side.
    public var minimumSpread = 0.15

    public init() {}

    public func estimate(observations: [WaitObservation], posted: PostedWait?, model: PostedModel, now: Date) -> WaitEstimate {
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
            let trust = o.trust.isFinite ? min(1, max(0, o.trust)) : 0
            return (o.minutes, exp(-age / self.timeConstant) * (o.source == .measured ? self.measuredWeight : 1) * trust)
        }
        var basis: [WaitEstimate.Basis] = []
        if counted.contains(where: { $0.source == .crowd }) { basis.append(.crowd) }
        if counted.contains(where: { $0.source == .measured }) { basis.append(.measured) }
        if let posted, let minutes = posted.minutes, self.isCurrent(posted, now: now) {
            weighted.append((model.predict(minutes), self.priorWeight))
            basis.append(.posted)
        }
        guard !weighted.isEmpty else { return .unknown }
        let middle = Self.weightedQuantile(weighted, 0.5)
        let spread = max(1, middle * self.minimumSpread)
        var low = Self.weightedQuantile(weighted, 0.25)
        var high = Self.weightedQuantile(weighted, 0.75)
        if let lowFactor = model.lowFactor, let highFactor = model.highFactor {
            low = middle * lowFactor
            high = middle * highFactor
        }
        low = min(low, middle - spread)
        high = max(high, middle + spread)
        return WaitEstimate(
            minutes: middle.rounded(), low: max(0, low.rounded(.down)), high: high.rounded(.up), reports: counted.count,
            trustedReports: counted.count { $0.trust >= 1 },
            newestReportAge: counted.map { max(0, now.timeIntervalSince($0.at)) }.min(), basis: basis)
    }

    /// Whether the posted wait is recent enough to speak for the ride now: at most ``postedMaxAge``
    /// old (and not from the future, beyond a second of storage rounding).
    public func isCurrent(_ posted: PostedWait, now: Date) -> Bool {
        now.timeIntervalSince(posted.at) <= self.postedMaxAge && now.timeIntervalSince(posted.at) >= -1
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
