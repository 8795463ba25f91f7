import CoasterCore
import Foundation

// The bodies the challenge routes read, and their checks: pure, so that tools/fuzz compiles this
// file with CoasterCore alone (target `challenge-body`). A refused member is named by its JSON
// pointer, as every body problem names it; the routes turn refusals into 422 problems.

/// Members of a body refused by a rule, each with its JSON pointer and what would fit.
struct ChallengeBodyRefusal: Error, Sendable {
    var fields: [(pointer: String, reason: String)]

    init(_ fields: [(pointer: String, reason: String)]) { self.fields = fields }
    init(_ pointer: String, _ reason: String) { self.fields = [(pointer, reason)] }
}

/// `POST /v1/challenges`.
struct NewChallengeBody: Decodable, Sendable {
    var name: String
    var description: String?
    /// ``ChallengeUnit/name``: `rides`, `credits`, `ride:{rideId}`, `parks`, `visits`, `custom`.
    var unit: String
    /// The custom unit's words ("funnel cakes"); custom only, and required there.
    var unitLabel: String?
    var target: Double?
    var start: Date
    var end: Date
    /// `public` or `private` (the default).
    var visibility: String?
    /// Park ids; none or empty: every park.
    var parks: [String]?
    /// `in-park` (the default) or `at-ride`.
    var evidence: String?

    /// The draft this body proposes, or every member a rule refuses (``ChallengeRules/violations(_:now:)``
    /// and the wire's own: a unit, visibility or evidence that is none of the names).
    func draft(rules: ChallengeRules, now: Date) -> Result<ChallengeDraft, ChallengeBodyRefusal> {
        var refused: [(pointer: String, reason: String)] = []
        var unit = ChallengeUnit(name: self.unit, label: self.unitLabel)
        if unit == nil || self.unit.utf8.count > 200 {
            refused.append(("/unit", "one of rides, credits, ride:{rideId}, parks, visits, custom"))
            unit = nil
        } else if self.unitLabel != nil, unit?.label == nil {
            refused.append(("/unitLabel", "only a custom unit has a label"))
        }
        let visibility = ChallengeVisibility(rawValue: self.visibility ?? ChallengeVisibility.private.rawValue)
        if visibility == nil { refused.append(("/visibility", "public or private")) }
        let evidence = RideEvidence(rawValue: self.evidence ?? RideEvidence.inPark.rawValue)
        if evidence == nil { refused.append(("/evidence", "in-park or at-ride")) }
        let draft = ChallengeDraft(name: self.name, description: self.description ?? "", unit: unit ?? .rides, target: self.target,
                                   start: self.start, end: self.end, visibility: visibility ?? .private,
                                   parks: (self.parks ?? []).map { ParkID(rawValue: $0) }, evidence: evidence ?? .inPark)
        for (field, reason) in rules.violations(draft, now: now) {
            // The rules judge evidence against the unit; with no unit read, that says nothing.
            if field == "evidence", unit == nil { continue }
            refused.append(("/" + field, reason))
        }
        return refused.isEmpty ? .success(draft) : .failure(ChallengeBodyRefusal(refused))
    }
}

/// `PATCH /v1/challenges/{challengeId}`: name and description before the start; `completed: true`
/// ends a started challenge now.
struct ChallengePatchBody: Decodable, Sendable {
    var name: String?
    var description: String?
    var completed: Bool?

    /// What the patch asks, checked: the new name and description (`nil`: unchanged) and whether
    /// to end the challenge.
    func change() -> Result<(name: String?, description: String?, end: Bool), ChallengeBodyRefusal> {
        var refused: [(pointer: String, reason: String)] = []
        if let name, ChallengeRules.name.violation(name) != nil { refused.append(("/name", ChallengeRules.name.rule)) }
        if let description, ChallengeRules.description.violation(description) != nil {
            refused.append(("/description", ChallengeRules.description.rule))
        }
        if self.completed == false {
            refused.append(("/completed", "only true: a challenge ends early, it does not start again"))
        } else if self.completed == true, self.name != nil || self.description != nil {
            // Never both in one request: a challenge is renamed before its start and ended after
            // it, and a rename that stood beside a refused end would be half a patch.
            refused.append(("/completed", "alone: name and description change before the start, and only a started challenge ends"))
        }
        if refused.isEmpty, self.name == nil, self.description == nil, self.completed == nil {
            refused.append(("", "nothing to change: give name, description or completed"))
        }
        return refused.isEmpty ? .success((self.name, self.description, self.completed == true)) : .failure(ChallengeBodyRefusal(refused))
    }
}

/// `POST /v1/challenges/{challengeId}/invitations`.
struct InvitationsBody: Decodable, Sendable {
    var userIds: [Int64]

    /// The users to invite, each once, 1…`rules.maximumInvitees` of them.
    func users(rules: ChallengeRules) -> Result<[UserID], ChallengeBodyRefusal> {
        guard (1...rules.maximumInvitees).contains(self.userIds.count) else {
            return .failure(ChallengeBodyRefusal("/userIds", "1 to \(rules.maximumInvitees) user ids"))
        }
        var seen = Set<Int64>()
        for (i, id) in self.userIds.enumerated() {
            guard id > 0 else { return .failure(ChallengeBodyRefusal("/userIds/\(i)", "a user's id, 1…\(Int64.max)")) }
            guard seen.insert(id).inserted else { return .failure(ChallengeBodyRefusal("/userIds/\(i)", "each user once")) }
        }
        return .success(self.userIds.map { UserID($0) })
    }
}

/// `POST /v1/challenges/{challengeId}/entries`: a hand entry of a custom challenge.
struct ChallengeEntryBody: Decodable, Sendable {
    var amount: Double
    var note: String?
    var photoId: Int64?

    func checked(rules: ChallengeRules) -> Result<ChallengeEntryBody, ChallengeBodyRefusal> {
        var refused: [(pointer: String, reason: String)] = []
        if let reason = rules.amountViolation(self.amount) { refused.append(("/amount", reason)) }
        if let note, ChallengeRules.note.violation(note) != nil { refused.append(("/note", ChallengeRules.note.rule)) }
        if let photoId, photoId <= 0 { refused.append(("/photoId", "a photo's id, 1…\(Int64.max)")) }
        return refused.isEmpty ? .success(self) : .failure(ChallengeBodyRefusal(refused))
    }
}

enum ChallengeBodies {
    /// The top-level member whose value begins before `offset` of a JSON object's bytes, as a JSON
    /// pointer (`/amount`), or `nil`: for a number the syntax check refused as out of range
    /// (`1e400`), which the decoder never reaches, so that the problem still names the member.
    /// A member is a string at depth 1 followed by a colon.
    static func member(before offset: Int, in bytes: [UInt8]) -> String? {
        var depth = 0, i = 0, last: String?
        var inString = false, start = 0
        while i < min(offset, bytes.count) {
            let b = bytes[i]
            if inString {
                if b == UInt8(ascii: "\\") {
                    i += 2
                    continue
                }
                if b == UInt8(ascii: "\"") {
                    inString = false
                    if depth == 1 {
                        var j = i + 1
                        while j < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[j]) { j += 1 }
                        if j < bytes.count, bytes[j] == UInt8(ascii: ":") {
                            last = String(decoding: bytes[(start + 1)..<i], as: UTF8.self)
                        }
                    }
                }
            } else if b == UInt8(ascii: "\"") {
                inString = true
                start = i
            } else if b == UInt8(ascii: "{") || b == UInt8(ascii: "[") {
                depth += 1
            } else if b == UInt8(ascii: "}") || b == UInt8(ascii: "]") {
                depth -= 1
            }
            i += 1
        }
        guard let last else { return nil }
        return "/" + last.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
    }
}
