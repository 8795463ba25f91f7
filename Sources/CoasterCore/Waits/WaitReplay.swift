import Foundation

/// Replays a ride's history of posted waits and timed actual waits in time order and scores the
/// estimator against the posted wait (docs: Waits, "How good are the estimates").
///
/// For each actual wait, entered at t and lasting m minutes, both predictions use only evidence
/// from strictly before t: posted waits before t, and earlier actual waits that were *known*
/// before t (an actual entered at t′ is known at t′ + m′, when its rider boarded). The learned
/// ratio only sees pairs known before t. An actual with no posted wait earlier that day is not
/// scored for either method.
public struct WaitReplay: Sendable {
    public struct Reading: Hashable, Sendable {
        public enum Kind: Hashable, Sendable {
            /// Minutes, or `nil` when the park showed the ride as down.
            case posted(Double?)
            case actual(Double)
        }

        public var at: Date
        /// The local calendar day, for "earlier that day".
        public var day: String
        public var kind: Kind

        public init(at: Date, day: String, kind: Kind) {
            self.at = at
            self.day = day
            self.kind = kind
        }
    }

    public struct Score: Hashable, Sendable {
        public var scored = 0
        /// Actuals the estimator answered "unknown" for (kept out of its MAE, counted here).
        public var declined = 0
        public var postedAbsoluteError = 0.0
        public var estimateAbsoluteError = 0.0
        /// Posted errors over the same actuals the estimator answered.
        public var postedErrorWhereAnswered = 0.0
        public var inRange = 0

        public init(scored: Int = 0, declined: Int = 0, postedAbsoluteError: Double = 0, estimateAbsoluteError: Double = 0,
                    postedErrorWhereAnswered: Double = 0, inRange: Int = 0) {
            self.scored = scored
            self.declined = declined
            self.postedAbsoluteError = postedAbsoluteError
            self.estimateAbsoluteError = estimateAbsoluteError
            self.postedErrorWhereAnswered = postedErrorWhereAnswered
            self.inRange = inRange
        }

        public var postedMAE: Double { self.scored == 0 ? .nan : self.postedAbsoluteError / Double(self.scored) }
        public var estimateMAE: Double { self.answered == 0 ? .nan : self.estimateAbsoluteError / Double(self.answered) }
        public var answered: Int { self.scored - self.declined }
        /// Percent by which the estimate's MAE is below the posted wait's, on the same actuals.
        public var improvement: Double {
            guard self.answered > 0, self.postedErrorWhereAnswered > 0 else { return .nan }
            return 100 * (1 - self.estimateAbsoluteError / self.postedErrorWhereAnswered)
        }
        public var coverage: Double { self.answered == 0 ? .nan : Double(self.inRange) / Double(self.answered) }

        public static func + (a: Score, b: Score) -> Score {
            Score(scored: a.scored + b.scored, declined: a.declined + b.declined,
                  postedAbsoluteError: a.postedAbsoluteError + b.postedAbsoluteError,
                  estimateAbsoluteError: a.estimateAbsoluteError + b.estimateAbsoluteError,
                  postedErrorWhereAnswered: a.postedErrorWhereAnswered + b.postedErrorWhereAnswered, inRange: a.inRange + b.inRange)
        }
    }

    public var estimator: WaitEstimator
    /// Most recent (actual, posted) pairs of the same part of the day the model is learned from.
    public var modelPairs: Int
    /// Plausible actual waits, minutes; others (47,897 min…) are neither scored nor used.
    public var plausible: ClosedRange<Double> = 0...400
    /// The park's time zone, for the parts of the day.
    public var timeZone: TimeZone

    public init(estimator: WaitEstimator = WaitEstimator(), modelPairs: Int = 100, timeZone: TimeZone) {
        self.estimator = estimator
        self.modelPairs = modelPairs
        self.timeZone = timeZone
    }

    /// Scores one ride's readings (any order), only actuals entered in `scoredFrom...` counting.
    public func score(_ readings: [Reading], scoredFrom: Date = .distantPast) -> Score {
        let sorted = readings.sorted { $0.at < $1.at }
        let posted = sorted.compactMap { r -> (at: Date, day: String, minutes: Double?)? in
            if case .posted(let m) = r.kind { return (r.at, r.day, m) }
            return nil
        }
        // Actuals (exact duplicates dropped) with the posted wait their rider saw when joining
        // (strictly before, within an hour), for the model's pairs.
        var actuals: [(entered: Date, known: Date, minutes: Double, day: String, postedAtEntry: Double?)] = []
        var seenActuals: Set<Reading> = []
        var p = 0
        for r in sorted {
            guard case .actual(let m) = r.kind, self.plausible.contains(m), seenActuals.insert(r).inserted else { continue }
            while p < posted.count && posted[p].at < r.at { p += 1 }
            let seen = p > 0 && r.at.timeIntervalSince(posted[p - 1].at) <= 3600 ? posted[p - 1].minutes : nil
            actuals.append((r.at, r.at.addingTimeInterval(m * 60), m, r.day, seen))
        }
        let byKnown = actuals.indices.sorted { actuals[$0].known < actuals[$1].known }
        var score = Score()
        var known = 0
        var postedIndex = 0
        var pairs: [[(actual: Double, posted: Double)]] = [[], [], []]
        for a in actuals {
            // Evidence known strictly before this rider joined the line.
            while known < byKnown.count && actuals[byKnown[known]].known < a.entered {
                let k = actuals[byKnown[known]]
                if let seen = k.postedAtEntry, seen > 0 { pairs[WaitHours.bucket(k.entered, in: self.timeZone)].append((k.minutes, seen)) }
                known += 1
            }
            while postedIndex < posted.count && posted[postedIndex].at < a.entered { postedIndex += 1 }
            let latestPosted = postedIndex > 0 ? posted[postedIndex - 1] : nil
            guard a.entered >= scoredFrom,
                  let baseline = posted[..<postedIndex].last(where: { $0.day == a.day && $0.minutes != nil })?.minutes
            else { continue }
            let recent = byKnown[..<known].lazy.map { actuals[$0] }
                .filter { $0.day == a.day && a.entered.timeIntervalSince($0.known) <= self.estimator.window }
            let observations = recent.map { WaitObservation(user: nil, minutes: $0.minutes, at: $0.known, source: .crowd) }
            let model = PostedModel.learn(Array(pairs[WaitHours.bucket(a.entered, in: self.timeZone)].suffix(self.modelPairs)))
            let prior = latestPosted.flatMap { $0.day == a.day ? PostedWait(minutes: $0.minutes, at: $0.at) : nil }
            let estimate = self.estimator.estimate(observations: Array(observations), posted: prior, model: model, now: a.entered)
            score.scored += 1
            score.postedAbsoluteError += abs(baseline - a.minutes)
            guard let minutes = estimate.minutes else {
                score.declined += 1
                continue
            }
            score.estimateAbsoluteError += abs(minutes - a.minutes)
            score.postedErrorWhereAnswered += abs(baseline - a.minutes)
            if let low = estimate.low, let high = estimate.high, low <= a.minutes, a.minutes <= high { score.inRange += 1 }
        }
        return score
    }

    /// Reads a TouringPlans ride file (`date,datetime,SPOSTMIN,SACTMIN`, local times; −999 = down).
    public static func touringPlans(_ text: String, timeZone: TimeZone) -> [Reading] {
        var readings: [Reading] = []
        for line in text.split(whereSeparator: \.isNewline).dropFirst() {
            let cells = line.split(separator: ",", omittingEmptySubsequences: false).map { String($0) }
            guard cells.count >= 4, let at = PostedWaitFeed.time(cells[1], timeZone: timeZone) else { continue }
            // The park day (`date`): rides after midnight belong to the evening before.
            let day = cells[0]
            if let posted = Double(cells[2]) {
                readings.append(Reading(at: at, day: day, kind: .posted(posted == -999 ? nil : posted)))
            } else if let actual = Double(cells[3]) {
                readings.append(Reading(at: at, day: day, kind: .actual(actual)))
            }
        }
        return readings
    }
}
