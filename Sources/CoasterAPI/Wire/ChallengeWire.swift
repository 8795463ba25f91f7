import CoasterCore
import CoasterHTTP
import Foundation
import Hummingbird

/// A challenge as the caller sees it (docs: Challenges). `membership` is `null` for a caller
/// outside it; `final` says the winners are fixed.
struct ChallengeWire: Encodable, Sendable, ResponseEncodable {
    var id: Int64
    var name: String
    var description: String
    var unit: String
    var unitLabel: String?
    var target: Double?
    var start: Date
    var end: Date
    var visibility: String
    var parks: [String]
    var evidence: String
    var author: UserWire
    var status: String
    var final: Bool
    var participants: Int
    var likes: Int
    var liked: Bool
    var membership: String?
    var winners: [UserWire]

    init(_ view: ChallengeView, now: Date) {
        let c = view.challenge
        self.id = c.id
        self.name = c.name
        self.description = c.description
        self.unit = c.unit.name
        self.unitLabel = c.unit.label
        self.target = c.target
        self.start = c.start
        self.end = c.end
        self.visibility = c.visibility.rawValue
        self.parks = c.parks.map(\.rawValue)
        self.evidence = c.evidence.rawValue
        self.author = UserWire(c.author)
        self.status = c.status(at: now).rawValue
        self.final = c.finalizedAt != nil
        self.participants = c.participants
        self.likes = c.likes
        self.liked = view.liked
        self.membership = view.membership?.rawValue
        self.winners = view.winners.map(UserWire.init)
    }

    enum CodingKeys: String, CodingKey {
        case id, name, description, unit, unitLabel, target, start, end, visibility, parks, evidence, author, status, final, participants, likes,
             liked, membership, winners
    }

    /// As synthesized, but `membership` is written even when `null`: the contract says "none" out loud.
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(self.id, forKey: .id)
        try c.encode(self.name, forKey: .name)
        try c.encode(self.description, forKey: .description)
        try c.encode(self.unit, forKey: .unit)
        try c.encodeIfPresent(self.unitLabel, forKey: .unitLabel)
        try c.encodeIfPresent(self.target, forKey: .target)
        try c.encode(self.start, forKey: .start)
        try c.encode(self.end, forKey: .end)
        try c.encode(self.visibility, forKey: .visibility)
        try c.encode(self.parks, forKey: .parks)
        try c.encode(self.evidence, forKey: .evidence)
        try c.encode(self.author, forKey: .author)
        try c.encode(self.status, forKey: .status)
        try c.encode(self.final, forKey: .final)
        try c.encode(self.participants, forKey: .participants)
        try c.encode(self.likes, forKey: .likes)
        try c.encode(self.liked, forKey: .liked)
        try c.encode(self.membership, forKey: .membership)
        try c.encode(self.winners, forKey: .winners)
    }
}

struct ChallengeListResponse: ResponseEncodable, Sendable {
    var challenges: [ChallengeWire]
}

/// One line of a ranking. `share` is the progress bar, min(1, progress / target), with a target.
struct ChallengeRankingLine: Encodable, Sendable {
    var rank: Int
    var user: UserWire
    var progress: Double
    var share: Double?
    var lastActivity: Date?

    init(_ e: ChallengeRankingEntry, target: Double?) {
        self.rank = e.rank
        self.user = UserWire(e.user)
        self.progress = e.progress
        self.share = target.map { min(1, e.progress / $0) }
        self.lastActivity = e.lastActivity
    }
}

/// What counted towards the caller's progress: a ride log, a visit or a hand entry.
struct ChallengeCountedWire: Encodable, Sendable {
    var source: String
    var id: Int64
    var amount: Double
    var at: Date
    var park: String?
    var ride: String?
    var evidence: String?

    init(_ item: ChallengeCountedItem) {
        self.source = item.source
        self.id = item.id
        self.amount = item.amount
        self.at = item.at
        self.park = item.park?.rawValue
        self.ride = item.ride?.rawValue
        self.evidence = item.evidence?.rawValue
    }
}

/// The caller's own line: their progress at once (others see counted progress after the location
/// time-to-live), how much of it others do not see yet, and what counted.
struct ChallengeOwnLine: Encodable, Sendable {
    var line: ChallengeRankingLine
    var pending: Double
    var counted: [ChallengeCountedWire]

    enum CodingKeys: String, CodingKey { case pending, counted }

    func encode(to encoder: any Encoder) throws {
        try self.line.encode(to: encoder)
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(self.pending, forKey: .pending)
        try c.encode(self.counted, forKey: .counted)
    }
}

/// `GET /v1/challenges/{challengeId}/ranking`; `me` is `null` for a caller who does not take part.
struct ChallengeRankingResponse: ResponseEncodable, Sendable {
    var challenge: ChallengeWire
    var entries: [ChallengeRankingLine]
    var me: ChallengeOwnLine?

    init(_ r: ChallengeRanking, now: Date) {
        let target = r.view.challenge.target
        self.challenge = ChallengeWire(r.view, now: now)
        self.entries = r.entries.map { ChallengeRankingLine($0, target: target) }
        self.me = r.mine.map { ChallengeOwnLine(line: ChallengeRankingLine($0, target: target), pending: r.pending, counted: r.counted.map(ChallengeCountedWire.init)) }
    }

    enum CodingKeys: String, CodingKey { case challenge, entries, me }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(self.challenge, forKey: .challenge)
        try c.encode(self.entries, forKey: .entries)
        try c.encode(self.me, forKey: .me)
    }
}

/// A hand entry; `photo` is the proof's URL (its bytes, without GPS, to anyone who may see the challenge).
struct ChallengeEntryWire: Encodable, Sendable {
    var id: Int64
    var challenge: Int64
    var user: UserWire
    var amount: Double
    var note: String?
    var photoId: Int64?
    var photo: String?
    var at: Date

    init(_ e: ChallengeEntry) {
        self.id = e.id
        self.challenge = e.challenge
        self.user = UserWire(e.user)
        self.amount = e.amount
        self.note = e.note
        self.photoId = e.photo
        self.photo = e.photo.map { "/v1/photos/\($0)" }
        self.at = e.at
    }
}

/// `POST /v1/challenges/{challengeId}/entries`: the entry and the caller's own progress and rank.
struct ChallengeEntryResponse: ResponseEncodable, Sendable {
    var entry: ChallengeEntryWire
    var progress: Double
    var rank: Int
}

struct ChallengeGalleryResponse: ResponseEncodable, Sendable {
    var entries: [ChallengeEntryWire]
}

struct InvitationsResponse: ResponseEncodable, Sendable {
    var invited: [UserWire]
}
