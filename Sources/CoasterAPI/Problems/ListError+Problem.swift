import CoasterCore
import CoasterHTTP
import CoasterService
import Foundation
import HTTPTypes

extension Problem {
    /// The problem of a refused list operation (docs: Lists, "Errors"): a list the caller may not
    /// read is 404, never 403, so that ids cannot be probed; one they read but do not own is 403;
    /// a refusal of what the list is now (full, holding it already, one's own) is 409 with a
    /// `reason` and the number to act on; what names a member of the body is 422 with its pointer.
    init(_ error: ListError) {
        func refused(_ reason: String, _ detail: String, _ numbers: [String: Int64]) -> Problem {
            var p = Problem(.listRefused, status: .conflict, title: "List change refused", detail: detail)
            p.reason = reason
            p.numbers = numbers
            return p
        }
        switch error {
        case .noSuchList:
            self = Problem(.noSuchList, status: .notFound, title: "No such list", detail: "There is no list with that id that you may read.")
        case .notOwner:
            self = Problem(.forbidden, status: .forbidden, title: "Not your list", detail: "Only its owner may change a list or its items.")
        case .noSuchItem:
            self = Problem(.noSuchListItem, status: .notFound, title: "No such item", detail: "The list has no item with that id.")
        case .unknownTarget(let pointer):
            self = Problem(ListBodyRefusal(pointer, pointer == "/park" ? "no park of the catalogue has that id" : "no ride of the catalogue has that id"))
        case .duplicateItem(let existing):
            self = refused("duplicate_item", "The list holds it already, as item \(existing).", ["existingItem": existing])
        case .positionOutOfRange(let largest):
            var p = Problem(ListBodyRefusal("/position", "past the end of the list: at most \(largest)"))
            p.numbers = ["largest": Int64(largest)]
            self = p
        case .tooManyItems(let limit):
            self = refused("too_many_items", "The list holds \(limit) items, the most a list can; remove one first.", ["limit": Int64(limit)])
        case .tooManyLists(let limit):
            self = refused("too_many_lists", "You have \(limit) lists, the most anyone can; delete one first.", ["limit": Int64(limit)])
        case .tooManyFollows(let limit):
            self = refused("too_many_follows", "You follow \(limit) lists or users' lists, the most anyone can; unfollow one first.", ["limit": Int64(limit)])
        case .noSuchPhoto:
            self = Problem(ListBodyRefusal("/coverPhotoId", "not a photo of yours"))
        case .ownList:
            self = refused("own_list", "Your own lists are yours already: you follow other people's.", [:])
        case .noSuchUser:
            self = Problem(.noSuchUser, status: .notFound, title: "No such user", detail: "There is no such user.")
        }
    }

    /// 422 naming each refused member of a list body.
    init(_ refusal: ListBodyRefusal) {
        let detail = refusal.fields.map { $0.pointer.isEmpty ? $0.reason : "\($0.pointer): \($0.reason)" }.joined(separator: "; ")
        self = Problem(.invalidList, status: .unprocessableContent, title: "Invalid list request", detail: detail,
                       errors: refusal.fields.map { BodyError(pointer: $0.pointer, feature: nil, detail: $0.reason) })
    }

    /// 422 naming every problem of a refused catalogue file; nothing of it was written.
    init(_ refusal: CatalogFiles.Refusal) {
        let first = refusal.problems.first.map { $0.pointer.isEmpty ? $0.reason : "\($0.pointer): \($0.reason)" } ?? "invalid catalogue file"
        let more = refusal.problems.count > 1 ? " (and \(refusal.problems.count - 1) more)" : ""
        self = Problem(.invalidCatalogFile, status: .unprocessableContent, title: "Invalid catalogue file", detail: "Nothing was written. \(first)\(more)",
                       errors: refusal.problems.map { BodyError(pointer: $0.pointer, feature: nil, detail: $0.reason) })
    }

    /// 422 naming each catalogue search parameter out of its bounds.
    static func invalidSearch(_ parameters: [InvalidParameter]) -> Problem {
        Problem(.invalidSearch, status: .unprocessableContent, title: "Invalid search",
                detail: parameters.map { "\($0.name): \($0.reason)" }.joined(separator: "; "), invalidParams: parameters)
    }
}
