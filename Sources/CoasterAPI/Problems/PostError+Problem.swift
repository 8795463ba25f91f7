import CoasterCore
import CoasterHTTP
import Foundation
import HTTPTypes

extension Problem {
    /// The problem of a refused post, comment or thumb (docs: Posts, "Errors"): a post the caller
    /// may not read is 404, never 403, so that ids cannot be probed; one they read but did not
    /// write is 403 to a change; what names a member of the body is 422 with its pointer.
    init(_ error: PostError) {
        switch error {
        case .noSuchPost:
            self = Problem(.noSuchPost, status: .notFound, title: "No such post", detail: "There is no post with that id that you may read.")
        case .notAuthor:
            self = Problem(.forbidden, status: .forbidden, title: "Not yours", detail: "Only its author may change or delete it.")
        case .noSuchComment:
            self = Problem(.noSuchComment, status: .notFound, title: "No such comment", detail: "There is no comment with that id that you may read.")
        case .noSuchPhoto(let index):
            self = Problem(PostBodyRefusal("/photos/\(index)", "not a photo of yours"))
        case .unknownTag(let pointer):
            self = Problem(PostBodyRefusal(pointer, pointer.hasPrefix("/parks") ? "no park of the catalogue has that id" : "no ride of the catalogue has that id"))
        case .noVisit(let park):
            let days = Int(PostRules.verificationWindow / 86_400)
            self = Problem(PostBodyRefusal("/verifiedAt", "you have no validated visit to \(park.rawValue) going on or ended in the last \(days) days"))
        case .emptyPost:
            self = Problem(PostBodyRefusal("/text", "a post needs some text or at least one photo"))
        case .noSuchUser:
            self = Problem(.noSuchUser, status: .notFound, title: "No such user", detail: "There is no such user.")
        }
    }

    /// 422 naming each refused member of a post body.
    init(_ refusal: PostBodyRefusal) {
        let detail = refusal.fields.map { $0.pointer.isEmpty ? $0.reason : "\($0.pointer): \($0.reason)" }.joined(separator: "; ")
        self = Problem(.invalidPost, status: .unprocessableContent, title: "Invalid post request", detail: detail,
                       errors: refusal.fields.map { BodyError(pointer: $0.pointer, feature: nil, detail: $0.reason) })
    }
}
