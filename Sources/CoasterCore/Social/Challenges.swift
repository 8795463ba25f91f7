import Foundation

/// What a challenge counts.
public enum ChallengeUnit: Hashable, Sendable {
    /// Every validated ride log.
    case rides
    /// Coasters ridden for the first time in the window: a coaster the rider had logged before
    /// their window began is no new credit.
    case credits
    /// Logs of one ride.
    case ride(RideID)
    /// Distinct parks whose visit began in the window.
    case parks
    /// Visits that began in the window.
    case visits
    /// Entries logged by hand, in a unit of the author's words ("funnel cakes").
    case custom(label: String)

    /// The wire form: `rides`, `credits`, `ride:{rideId}`, `parks`, `visits`, `custom`.
    public var name: String {
        switch self {
        case .rides: "rides"
        case .credits: "credits"
        case .ride(let id): "ride:" + id.rawValue
        case .parks: "parks"
        case .visits: "visits"
        case .custom: "custom"
        }
    }

    /// The custom unit's label, `nil` for the counted units.
    public var label: String? {
        if case .custom(let label) = self { return label }
        return nil
    }

    /// A unit from its wire form and label; `nil` for an unknown name.
    public init?(name: String, label: String?) {
        switch name {
        case "rides": self = .rides
        case "credits": self = .credits
        case "parks": self = .parks
        case "visits": self = .visits
        case "custom": self = .custom(label: label ?? "")
        default:
            guard name.hasPrefix("ride:"), name.count > 5 else { return nil }
            self = .ride(RideID(rawValue: String(name.dropFirst(5))))
        }
    }

    /// Counted from the geofences' evidence (ride logs or visits), not by hand: progress in it
    /// tells where a participant was, so others see it only once it is older than the location
    /// time-to-live (``ChallengeRules/shownAt(_:timeToLive:)``).
    public var isCounted: Bool {
        if case .custom = self { return false }
        return true
    }

    /// Counted from ride logs.
    public var countsRideLogs: Bool {
        switch self {
        case .rides, .credits, .ride: true
        case .parks, .visits, .custom: false
        }
    }

    /// Counted from visits.
    public var countsVisits: Bool {
        switch self {
        case .parks, .visits: true
        case .rides, .credits, .ride, .custom: false
        }
    }
}

/// Who may see a challenge.
public enum ChallengeVisibility: String, Hashable, Sendable, CaseIterable, Codable, NamedCases {
    /// Anyone may find it, see its ranking and join.
    case `public`
    /// Its participants and invitees only; to anyone else it does not exist.
    case `private`
}

/// Where a challenge stands in time.
public enum ChallengeStatus: String, Hashable, Sendable, CaseIterable, Codable, NamedCases {
    case upcoming, ongoing, completed
}

/// A caller's place in a challenge.
public enum ChallengeMembership: String, Hashable, Sendable, Codable {
    case invited, member, declined
}

/// A challenge as it is proposed, before it is stored: checked by ``ChallengeRules/violations(_:now:)``.
public struct ChallengeDraft: Hashable, Sendable {
    public var name: String
    public var description: String
    public var unit: ChallengeUnit
    public var target: Double?
    public var start: Date
    public var end: Date
    public var visibility: ChallengeVisibility
    /// Parks whose logs and visits count; empty: every park.
    public var parks: [ParkID]
    /// The least evidence a ride log needs to count.
    public var evidence: RideEvidence

    public init(name: String, description: String, unit: ChallengeUnit, target: Double?, start: Date, end: Date,
                visibility: ChallengeVisibility, parks: [ParkID], evidence: RideEvidence) {
        self.name = name
        self.description = description
        self.unit = unit
        self.target = target
        self.start = start
        self.end = end
        self.visibility = visibility
        self.parks = parks
        self.evidence = evidence
    }
}

/// A stored challenge.
public struct Challenge: Hashable, Sendable {
    public var id: Int64
    public var author: UserSummary
    public var name: String
    public var description: String
    public var unit: ChallengeUnit
    public var target: Double?
    public var start: Date
    public var end: Date
    public var visibility: ChallengeVisibility
    public var parks: [ParkID]
    public var evidence: RideEvidence
    public var createdAt: Date
    /// When the winners were fixed; `nil` until then.
    public var finalizedAt: Date?
    /// Members (invitees and those who declined not counted).
    public var participants: Int
    public var likes: Int

    public init(id: Int64, author: UserSummary, name: String, description: String, unit: ChallengeUnit, target: Double?, start: Date,
                end: Date, visibility: ChallengeVisibility, parks: [ParkID], evidence: RideEvidence, createdAt: Date,
                finalizedAt: Date?, participants: Int, likes: Int) {
        self.id = id
        self.author = author
        self.name = name
        self.description = description
        self.unit = unit
        self.target = target
        self.start = start
        self.end = end
        self.visibility = visibility
        self.parks = parks
        self.evidence = evidence
        self.createdAt = createdAt
        self.finalizedAt = finalizedAt
        self.participants = participants
        self.likes = likes
    }

    /// Within a millisecond counts as reached: stored times make a round trip through seconds
    /// since 1970, which can move them by a fraction of a microsecond, and a challenge ended "now"
    /// must read as ended at that now.
    public func status(at now: Date) -> ChallengeStatus {
        let slack = 0.001
        if now.timeIntervalSince(self.start) < -slack { return .upcoming }
        return now.timeIntervalSince(self.end) < -slack ? .ongoing : .completed
    }
}

/// Something that may count towards a challenge: a validated ride log or a visit.
public enum ChallengeEvidence: Hashable, Sendable {
    case rideLog(id: Int64, ride: RideID, park: ParkID, isCoaster: Bool, evidence: RideEvidence, at: Date)
    case visit(id: Int64, park: ParkID, at: Date)

    public var at: Date {
        switch self {
        case .rideLog(_, _, _, _, _, let at), .visit(_, _, let at): at
        }
    }

    public var park: ParkID {
        switch self {
        case .rideLog(_, _, let park, _, _, _), .visit(_, let park, _): park
        }
    }

    /// What a credit row names as its source: `ride-log` or `visit`.
    public var source: String {
        switch self {
        case .rideLog: "ride-log"
        case .visit: "visit"
        }
    }

    public var sourceID: Int64 {
        switch self {
        case .rideLog(let id, _, _, _, _, _), .visit(let id, _, _): id
        }
    }
}

/// What one piece of evidence adds to one participant's progress.
public struct ChallengeCredit: Hashable, Sendable {
    public var amount: Double
    /// For units that count something once (a coaster, a park): what, so that it counts once
    /// per participant and challenge. `nil`: every piece counts.
    public var distinctKey: String?
    /// For `credits`: the ride, which must not have been logged by the rider before this time
    /// (their counting window's beginning) for the credit to be new.
    public var firstSince: (ride: RideID, since: Date)?

    public init(amount: Double, distinctKey: String?, firstSince: (ride: RideID, since: Date)? = nil) {
        self.amount = amount
        self.distinctKey = distinctKey
        self.firstSince = firstSince
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.amount == b.amount && a.distinctKey == b.distinctKey && a.firstSince?.ride == b.firstSince?.ride
            && a.firstSince?.since == b.firstSince?.since
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(self.amount)
        hasher.combine(self.distinctKey)
    }
}

/// The rules of challenges: what a draft may be, what counts, and when results are final.
public struct ChallengeRules: Hashable, Sendable {
    /// The longest window.
    public var longestWindow: TimeInterval = 366 * 86_400
    /// The largest target, and the largest amount one hand entry may add.
    public var largestAmount: Double = 1_000_000
    /// Parks a challenge may be scoped to.
    public var maximumParks = 20
    /// Users one invitation request may name.
    public var maximumInvitees = 100
    /// Challenges a user may be a member of that have not ended.
    public var maximumActiveMemberships = 100
    /// Entries one participant may log in one challenge.
    public var maximumEntries = 1_000

    public static let name = TextLimits(atMost: 80, atLeast: 1)
    public static let description = TextLimits(atMost: 1_000)
    public static let label = TextLimits(atMost: 40, atLeast: 1)
    public static let note = TextLimits(atMost: 280)
    /// A search query.
    public static let query = TextLimits(atMost: 100, atLeast: 1)

    public init() {}

    /// Why each field of `draft` is refused, by the field's JSON name (`end`, `unit`, …): empty
    /// when it may be stored. A ride or park that does not exist is the store's to say.
    public func violations(_ draft: ChallengeDraft, now: Date) -> [(field: String, reason: String)] {
        var refused: [(String, String)] = []
        if let v = Self.name.violation(draft.name) { refused.append(("name", Self.describe(v, Self.name))) }
        if let v = Self.description.violation(draft.description) { refused.append(("description", Self.describe(v, Self.description))) }
        if case .custom(let label) = draft.unit, let v = Self.label.violation(label) {
            refused.append(("unitLabel", Self.describe(v, Self.label)))
        }
        if let target = draft.target, !(target.isFinite && target > 0 && target <= self.largestAmount) {
            refused.append(("target", "a number above 0 and at most \(Int(self.largestAmount))"))
        }
        if draft.end <= draft.start {
            refused.append(("end", "after the start"))
        } else if draft.end.timeIntervalSince(draft.start) > self.longestWindow {
            refused.append(("end", "at most \(Int(self.longestWindow / 86_400)) days after the start"))
        } else if draft.end <= now {
            refused.append(("end", "in the future"))
        }
        if draft.parks.count > self.maximumParks {
            refused.append(("parks", "at most \(self.maximumParks) parks"))
        } else if Set(draft.parks).count != draft.parks.count {
            refused.append(("parks", "each park once"))
        } else if let bad = draft.parks.firstIndex(where: { !Slug.isValid($0.rawValue) }) {
            refused.append(("parks/\(bad)", "a park id"))
        }
        if draft.evidence == .atRide, !draft.unit.countsRideLogs {
            refused.append(("evidence", "at-ride applies to the ride units only (rides, credits, ride:{rideId})"))
        }
        return refused
    }

    /// Why a hand entry's amount is refused, or `nil`.
    public func amountViolation(_ amount: Double) -> String? {
        amount.isFinite && amount > 0 && amount <= self.largestAmount ? nil : "a number above 0 and at most \(Int(self.largestAmount))"
    }

    private static func describe(_ violation: TextLimits.Violation, _ limits: TextLimits) -> String { limits.rule }

    /// What `evidence` adds to the progress of a participant who joined at `joinedAt`, or `nil`
    /// if it does not count: it must fall in their window (from the start or their joining,
    /// whichever is later, to the end), in the challenge's parks, be of the unit's kind, and a
    /// ride log must have the evidence the challenge asks.
    public func credit(_ evidence: ChallengeEvidence, challenge: Challenge, joinedAt: Date) -> ChallengeCredit? {
        let from = max(challenge.start, joinedAt)
        guard evidence.at >= from, evidence.at < challenge.end else { return nil }
        guard challenge.parks.isEmpty || challenge.parks.contains(evidence.park) else { return nil }
        switch (challenge.unit, evidence) {
        case (.rides, .rideLog(_, _, _, _, let level, _)):
            return Self.admits(level, challenge.evidence) ? ChallengeCredit(amount: 1, distinctKey: nil) : nil
        case (.ride(let wanted), .rideLog(_, let ride, _, _, let level, _)):
            return ride == wanted && Self.admits(level, challenge.evidence) ? ChallengeCredit(amount: 1, distinctKey: nil) : nil
        case (.credits, .rideLog(_, let ride, _, let isCoaster, let level, _)):
            guard isCoaster, Self.admits(level, challenge.evidence) else { return nil }
            return ChallengeCredit(amount: 1, distinctKey: ride.rawValue, firstSince: (ride, from))
        case (.parks, .visit(_, let park, _)):
            return ChallengeCredit(amount: 1, distinctKey: park.rawValue)
        case (.visits, .visit):
            return ChallengeCredit(amount: 1, distinctKey: nil)
        default:
            return nil
        }
    }

    /// Whether a log with `level` meets a challenge asking for `least`.
    static func admits(_ level: RideEvidence, _ least: RideEvidence) -> Bool {
        least == .inPark || level == .atRide
    }

    /// When the winners of a challenge ending at `end` are fixed: at the end for hand entries;
    /// for counted units once every ride or visit of the window is older than the location
    /// time-to-live, the moment the last of them may be shown.
    public static func finalAt(end: Date, unit: ChallengeUnit, timeToLive: TimeInterval) -> Date {
        unit.isCounted ? end.addingTimeInterval(timeToLive) : end
    }

    /// The words of a search query, lowercased, each matched as a prefix of a word of a
    /// challenge's name or description: runs of letters and digits, at most eight of them. Both
    /// stores search with these (FTS5 and `tsvector`), so that they find the same challenges.
    public static func searchWords(_ query: String) -> [String] {
        var words: [String] = []
        var current = ""
        for scalar in query.lowercased().unicodeScalars {
            if CharacterSet.alphanumerics.contains(scalar) {
                current.unicodeScalars.append(scalar)
            } else if !current.isEmpty {
                words.append(current)
                current = ""
            }
        }
        if !current.isEmpty { words.append(current) }
        return Array(words.prefix(8))
    }

    /// When counted progress made at `at` may be shown to anyone but the participant: once older
    /// than the location time-to-live, as leaderboards show rides (``LocationPrivacy``).
    public static func shownAt(_ at: Date, timeToLive: TimeInterval) -> Date { at.addingTimeInterval(timeToLive) }
}

/// The standing order of a ranking: more progress first, then who reached their amount first;
/// participants level on both share a rank (those with nothing yet are all level).
public struct ChallengeStanding: Hashable, Sendable, Comparable {
    public var progress: Double
    /// When the participant reached `progress` (seconds since 1970); 0 with no progress.
    public var reachedAt: Double

    public init(progress: Double, reachedAt: Double) {
        self.progress = progress
        self.reachedAt = progress > 0 ? reachedAt : 0
    }

    /// `a` ranks ahead of `b`.
    public static func < (a: Self, b: Self) -> Bool {
        a.progress != b.progress ? a.progress > b.progress : a.reachedAt < b.reachedAt
    }
}
