import CoasterCore
import CoasterHTTP
import Foundation
import HTTPTypes

extension Problem {
    /// The problem of a refused people operation (docs: People, "Errors"): a profile member the
    /// catalogue does not know is a 400 `invalid-field` naming its JSON pointer, as every refused
    /// member of `PATCH /v1/me` is; following oneself is a 400; past the follow limit a 409.
    init(_ error: PeopleError) {
        switch error {
        case .unknownPark:
            self = .invalidField("/homePark", "no park of the catalogue has that id")
        case .unknownRide(let index):
            self = .invalidField("/favouriteRides/\(index)", "no ride of the catalogue has that id")
        case .duplicateRide(let index):
            self = .invalidField("/favouriteRides/\(index)", "the same ride as an earlier one (a fenced ride's id names its catalogue entry)")
        case .cannotFollowSelf:
            self = Problem(.cannotFollowSelf, status: .badRequest, title: "Cannot follow yourself", detail: "Your own posts are yours already.")
        case .tooManyFollows(let limit):
            var p = Problem(.followLimit, status: .conflict, title: "Too many follows",
                            detail: "You follow \(limit) users, the most anyone can; unfollow one first.")
            p.numbers = ["limit": Int64(limit)]
            self = p
        }
    }

    /// 400 `invalid-field` naming every refused member of a profile body.
    init(_ refusal: ProfileBodyRefusal) {
        if refusal.fields.count == 1, let field = refusal.fields.first {
            self = .invalidField(field.pointer, field.reason)
            return
        }
        let detail = refusal.fields.map { "\($0.pointer): \($0.reason)" }.joined(separator: "; ")
        self = Problem(.invalidField, status: .badRequest, title: "Invalid field", detail: detail,
                       errors: refusal.fields.map { BodyError(pointer: $0.pointer, feature: nil, detail: $0.reason) })
    }
}
