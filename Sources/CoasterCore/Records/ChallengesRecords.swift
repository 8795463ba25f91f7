import Foundation

/// A challenge as one viewer sees it.
public struct ChallengeView: Hashable, Sendable {
    public var challenge: Challenge
    /// The viewer's place in it; `nil` for a viewer outside it (a public challenge).
    public var membership: ChallengeMembership?
    public var liked: Bool
    /// Fixed once the challenge is final (``Challenge/finalizedAt``): those ranked first with
    /// some progress, at most ten named.
    public var winners: [UserSummary]

    public init(challenge: Challenge, membership: ChallengeMembership?, liked: Bool, winners: [UserSummary]) {
        self.challenge = challenge
        self.membership = membership
        self.liked = liked
        self.winners = winners
    }
}

/// One participant's line of a ranking.
public struct ChallengeRankingEntry: Hashable, Sendable {
    public var rank: Int
    public var user: UserSummary
    public var progress: Double
    /// Their last counted activity as the viewer may see it; `nil` with none.
    public var lastActivity: Date?

    public init(rank: Int, user: UserSummary, progress: Double, lastActivity: Date?) {
        self.rank = rank
        self.user = user
        self.progress = progress
        self.lastActivity = lastActivity
    }
}

/// What counted towards a participant's progress.
public struct ChallengeCountedItem: Hashable, Sendable {
    /// `ride-log`, `visit` or `entry`.
    public var source: String
    public var id: Int64
    public var amount: Double
    public var at: Date
    public var park: ParkID?
    public var ride: RideID?
    public var evidence: RideEvidence?

    public init(source: String, id: Int64, amount: Double, at: Date, park: ParkID?, ride: RideID?, evidence: RideEvidence?) {
        self.source = source
        self.id = id
        self.amount = amount
        self.at = at
        self.park = park
        self.ride = ride
        self.evidence = evidence
    }
}

/// A page of a challenge's ranking, as one viewer sees it: others' counted progress once it is
/// older than the location time-to-live, the viewer's own at once (their rank is theirs against
/// what they see of everyone else).
public struct ChallengeRanking: Hashable, Sendable {
    public var view: ChallengeView
    public var entries: [ChallengeRankingEntry]
    /// The viewer's own line, when they take part, whether or not it is on the page.
    public var mine: ChallengeRankingEntry?
    /// Of the viewer's progress, how much others do not see yet.
    public var pending: Double
    /// The viewer's newest counted items (at most 50), which say what counted.
    public var counted: [ChallengeCountedItem]

    public init(view: ChallengeView, entries: [ChallengeRankingEntry], mine: ChallengeRankingEntry?, pending: Double,
                counted: [ChallengeCountedItem]) {
        self.view = view
        self.entries = entries
        self.mine = mine
        self.pending = pending
        self.counted = counted
    }
}

/// A hand entry of a `custom` challenge.
public struct ChallengeEntry: Hashable, Sendable {
    public var id: Int64
    public var challenge: Int64
    public var user: UserSummary
    public var amount: Double
    public var note: String?
    public var photo: Int64?
    public var at: Date

    public init(id: Int64, challenge: Int64, user: UserSummary, amount: Double, note: String?, photo: Int64?, at: Date) {
        self.id = id
        self.challenge = challenge
        self.user = user
        self.amount = amount
        self.note = note
        self.photo = photo
        self.at = at
    }
}

/// A participant's progress changed: for the live pushes.
public struct ChallengeMove: Hashable, Sendable {
    public var challenge: Int64
    public var name: String
    public var user: UserSummary
    /// Their progress and rank as everyone else sees them.
    public var shownProgress: Double
    public var shownRank: Int
    /// Their own progress and rank, as they see them.
    public var progress: Double
    public var rank: Int

    public init(challenge: Int64, name: String, user: UserSummary, shownProgress: Double, shownRank: Int, progress: Double, rank: Int) {
        self.challenge = challenge
        self.name = name
        self.user = user
        self.shownProgress = shownProgress
        self.shownRank = shownRank
        self.progress = progress
        self.rank = rank
    }
}

/// Which of a user's challenges.
public enum ChallengeList: String, Hashable, Sendable, CaseIterable, NamedCases {
    case ongoing, upcoming, completed, won
    /// Invitations not answered yet.
    case invited
}

/// Why a challenge operation was refused.
public enum ChallengeError: Error, Hashable, Sendable {
    /// No such challenge, or a private one the caller may not see: one answer, so that ids cannot be probed.
    case noSuchChallenge
    case notAuthor
    /// Only before the start may name and description change.
    case alreadyStarted
    /// It has ended: nothing joins, enters or ends it any more.
    case ended
    case unknownRide(RideID)
    /// `parks[index]` is not a loaded park.
    case unknownPark(index: Int)
    /// `userIds[index]` is not an accepted friend of the author.
    case notAFriend(index: Int)
    /// A private challenge takes invitees only.
    case notInvited
    case notAMember
    /// The author ends or deletes a challenge; they do not leave it.
    case authorCannotLeave
    case tooManyMemberships(limit: Int)
    case tooManyEntries(limit: Int)
    /// Hand entries are for `custom` challenges; the others count themselves.
    case notCustom
    /// The entry is outside the participant's window (before the start or their joining).
    case notStarted
    case noSuchEntry
    /// The proof is not a photo of the caller's.
    case noSuchPhoto
}
