import CoasterCore
import CoasterHTTP
import Foundation
import HTTPTypes

extension Problem {
    /// The problem of a refused challenge operation (docs: Challenges, "Errors"): a challenge the
    /// caller may not see is 404, never 403, so that ids cannot be probed; a refusal of what it
    /// is now (started, ended, not a member…) is 409 with a `reason`; what names a member of the
    /// body is 422 with its pointer.
    init(_ error: ChallengeError) {
        func refused(_ reason: String, _ detail: String) -> Problem {
            var p = Problem(.challengeRefused, status: .conflict, title: "Challenge refused", detail: detail)
            p.reason = reason
            return p
        }
        switch error {
        case .noSuchChallenge:
            self = Problem(.noSuchChallenge, status: .notFound, title: "No such challenge", detail: "There is no challenge with that id that you may see.")
        case .notAuthor:
            self = Problem(.forbidden, status: .forbidden, title: "Not your challenge", detail: "Only its author may change, invite to or delete a challenge.")
        case .alreadyStarted:
            self = refused("already_started", "A challenge's name and description change only before its start.")
        case .ended:
            self = refused("ended", "The challenge has ended: nothing joins, enters or ends it any more.")
        case .notStarted:
            self = refused("not_started", "The challenge has not started (for you: entries count from the start or your joining, whichever is later).")
        case .authorCannotLeave:
            self = refused("author_cannot_leave", "The author does not leave a challenge; they end or delete it.")
        case .notInvited:
            self = refused("not_invited", "You have no open invitation to this challenge.")
        case .notAMember:
            self = refused("not_a_member", "You do not take part in this challenge; join it first.")
        case .tooManyMemberships(let limit):
            self = refused("too_many_memberships", "You take part in \(limit) challenges that have not ended, the most anyone can.")
        case .tooManyEntries(let limit):
            self = refused("too_many_entries", "You have logged \(limit) entries in this challenge, the most anyone can.")
        case .notCustom:
            self = refused("not_custom", "Hand entries are for custom units; this challenge counts validated ride logs or visits itself.")
        case .unknownRide(let ride):
            self = Problem(ChallengeBodyRefusal("/unit", "no listed ride \"\(ride.rawValue.prefix(100))\""))
        case .unknownPark(let index):
            self = Problem(ChallengeBodyRefusal("/parks/\(index)", "no loaded park with that id"))
        case .notAFriend(let index):
            self = Problem(ChallengeBodyRefusal("/userIds/\(index)", "not a friend of yours: only friends are invited"))
        case .noSuchEntry:
            self = Problem(.noSuchEntry, status: .notFound, title: "No such entry", detail: "You have no entry with that id in this challenge.")
        case .noSuchPhoto:
            self = Problem(ChallengeBodyRefusal("/photoId", "not a photo of yours"))
        }
    }

    /// 422 naming each refused member of a challenge body.
    init(_ refusal: ChallengeBodyRefusal) {
        let detail = refusal.fields.map { $0.pointer.isEmpty ? $0.reason : "\($0.pointer): \($0.reason)" }.joined(separator: "; ")
        self = Problem(.invalidChallenge, status: .unprocessableContent, title: "Invalid challenge request", detail: detail,
                       errors: refusal.fields.map { BodyError(pointer: $0.pointer, feature: nil, detail: $0.reason) })
    }
}
