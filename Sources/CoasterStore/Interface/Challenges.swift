import CoasterCore
import Foundation

/// Challenges among friends (docs: Challenges). Each operation is one transaction; each that
/// answers with a challenge first fixes its winners if it is due (``finalizeChallenges(limit:)``),
/// so a read never shows a completed challenge without them.
///
/// Counted units are credited by the stores' own ride-log and visit writes, in the same
/// transaction as the log or the visit (`challenge_credits`, one row a piece of evidence and
/// challenge, unique, so nothing counts twice): ``ChallengeRules/credit(_:challenge:joinedAt:)``
/// decides.
public protocol ChallengeStore: Sendable {
    /// Stores a checked draft (``ChallengeRules/violations(_:now:)``); the author is its first
    /// member. Refuses an unknown ride or park, and an author at their membership limit.
    func createChallenge(_ draft: ChallengeDraft, author: UserID, rules: ChallengeRules, timeToLive: TimeInterval) async throws -> ChallengeView

    /// The challenge as `viewer` sees it, or `nil`: none, or private and the viewer neither a
    /// member nor invited.
    func challenge(_ id: Int64, viewer: UserID) async throws -> ChallengeView?

    /// The author changes name or description (`nil`: unchanged), before the start only.
    func editChallenge(_ id: Int64, author: UserID, name: String?, description: String?) async throws -> ChallengeView

    /// The author ends a started challenge now.
    func endChallenge(_ id: Int64, author: UserID, timeToLive: TimeInterval) async throws -> ChallengeView

    /// The author deletes it, for everyone: members, credits, entries, likes.
    func deleteChallenge(_ id: Int64, author: UserID) async throws

    /// The author invites accepted friends (``ChallengeError/notAFriend(index:)`` names the first
    /// who is not); members and pending invitees are left as they are; one who declined is
    /// invited again. Returns those newly invited.
    func invite(_ id: Int64, author: UserID, users: [UserID]) async throws -> [UserSummary]

    /// Joins: accepts an invitation, or joins a public challenge. Counting starts now (or at the start).
    func join(_ id: Int64, user: UserID, rules: ChallengeRules) async throws -> ChallengeView

    /// Declines an invitation.
    func decline(_ id: Int64, user: UserID) async throws

    /// Leaves: the membership, its credits and entries go, and with them the progress.
    func leave(_ id: Int64, user: UserID) async throws

    /// A page of the ranking as `viewer` sees it (``ChallengeRanking``), `limit` entries
    /// `offset` in; `nil` when the viewer may not see the challenge. What it costs: a range of
    /// the ranking index (`offset + limit` entries) and counts of those ahead of the first line
    /// and of the viewer.
    func ranking(_ id: Int64, viewer: UserID, limit: Int, offset: Int) async throws -> ChallengeRanking?

    /// A member logs a hand entry in a `custom` challenge, within their window.
    func addEntry(_ id: Int64, user: UserID, amount: Double, note: String?, photo: Int64?, rules: ChallengeRules) async throws
        -> (entry: ChallengeEntry, move: ChallengeMove)

    /// A participant deletes an entry of theirs.
    func deleteEntry(_ id: Int64, entry: Int64, user: UserID) async throws -> ChallengeMove

    /// Entries with photo proof, newest first; `before` pages by entry id. `nil` when the viewer
    /// may not see the challenge.
    func gallery(_ id: Int64, viewer: UserID, limit: Int, before: Int64?) async throws -> [ChallengeEntry]?

    /// The user's challenges in `list`, newest first; `before` pages by challenge id.
    func challenges(of user: UserID, list: ChallengeList, limit: Int, before: Int64?) async throws -> [ChallengeView]

    /// Public challenges not yet final whose name or description holds every word of `query`
    /// (as a prefix; FTS5 on SQLite, `tsvector` on PostgreSQL) and, with `park`, scoped to it;
    /// most participants first, then newest.
    func searchChallenges(_ query: String?, park: ParkID?, viewer: UserID, limit: Int, offset: Int) async throws -> [ChallengeView]

    /// Public challenges not yet final with the most joins and likes since `since`, most first.
    func trendingChallenges(since: Date, viewer: UserID, limit: Int) async throws -> [ChallengeView]

    /// Likes or unlikes a challenge the user may see.
    func setChallengeLike(_ id: Int64, user: UserID, liked: Bool) async throws -> ChallengeView

    /// Shows counted progress made before `cutoff` (``LocationPrivacy/placesShownBefore(_:)``) to
    /// everyone, oldest first, at most `limit` credits in this transaction; returns who moved. A
    /// visit's credit waits until the visit's last evidence is before `cutoff` too: until then it
    /// says where its rider may still be.
    func settleChallengeCredits(through cutoff: Date, limit: Int) async throws -> [ChallengeMove]

    /// Fixes the winners of at most `limit` challenges whose final time has passed; returns their ids.
    @discardableResult
    func finalizeChallenges(limit: Int) async throws -> [Int64]

    /// What a ride log or visit of `user` just credited (`source` `ride-log` or `visit`, its id):
    /// for the live pushes after it committed.
    func challengeMoves(of user: UserID, source: String, id: Int64) async throws -> [ChallengeMove]

    /// The members of challenge `id` among `users` (those with live connections).
    func challengeMembers(_ id: Int64, among users: [UserID]) async throws -> [UserID]
}
