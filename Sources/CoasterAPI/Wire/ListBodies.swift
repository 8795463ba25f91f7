import CoasterCore
import Foundation

// The bodies the list routes read, and their checks: pure, so that tools/fuzz compiles this file
// with CoasterCore alone (target `list-body`). A refused member is named by its JSON pointer, as
// every body problem names it; the routes turn refusals into 422 `invalid-list` problems.

/// Members of a list body refused by a rule, each with its JSON pointer and what would fit.
struct ListBodyRefusal: Error, Sendable {
    var fields: [(pointer: String, reason: String)]

    init(_ fields: [(pointer: String, reason: String)]) { self.fields = fields }
    init(_ pointer: String, _ reason: String) { self.fields = [(pointer, reason)] }
}

/// A member that may be absent, `null` or a value: a patch tells "leave it" from "remove it".
enum PatchMember<Value: Decodable & Sendable>: Sendable {
    case absent
    case null
    case value(Value)

    /// `nil` absent, `.some(nil)` null, `.some(v)` a value: the shape the core's edits take.
    var edit: Value?? {
        switch self {
        case .absent: nil
        case .null: .some(nil)
        case .value(let v): .some(v)
        }
    }

    var isAbsent: Bool { if case .absent = self { true } else { false } }

    static func decode<Key: CodingKey>(_ key: Key, in container: KeyedDecodingContainer<Key>) throws -> Self {
        guard container.contains(key) else { return .absent }
        if try container.decodeNil(forKey: key) { return .null }
        return .value(try container.decode(Value.self, forKey: key))
    }
}

enum ListBodies {
    /// The visibility a body names, or `nil`.
    static func visibility(_ text: String?) -> ListVisibility? { text.flatMap(ListVisibility.init(rawValue:)) }
    static let visibilities = ListVisibility.allCases.map(\.rawValue).joined(separator: ", ")

}

/// `POST /v1/lists`.
struct NewListBody: Decodable, Sendable {
    var title: String
    var description: String?
    /// `private` (the default), `friends`, `public` or `link`.
    var visibility: String?
    var coverPhotoId: Int64?

    /// The draft this body proposes, or every member a rule refuses (``ListRules/violations(_:)-(ListDraft)``
    /// and the wire's own: a visibility that is none of the names, a photo id that is no id).
    func draft(rules: ListRules) -> Result<ListDraft, ListBodyRefusal> {
        var refused: [(pointer: String, reason: String)] = []
        let visibility = self.visibility == nil ? ListVisibility.private : ListBodies.visibility(self.visibility)
        if visibility == nil { refused.append(("/visibility", "one of \(ListBodies.visibilities)")) }
        if let id = self.coverPhotoId, id <= 0 { refused.append(("/coverPhotoId", "a photo's id, 1…\(Int64.max)")) }
        let draft = ListDraft(title: self.title, description: self.description ?? "", visibility: visibility ?? .private, cover: self.coverPhotoId)
        for (field, reason) in rules.violations(draft) { refused.append(("/" + field, reason)) }
        return refused.isEmpty ? .success(draft) : .failure(ListBodyRefusal(refused))
    }
}

/// `PATCH /v1/lists/{listId}`: `coverPhotoId: null` removes the cover; `newLink: true` revokes the
/// share link and issues a new one.
struct ListPatchBody: Decodable, Sendable {
    var title: String?
    var description: String?
    var visibility: String?
    var coverPhotoId: PatchMember<Int64>
    var newLink: Bool?

    enum CodingKeys: String, CodingKey { case title, description, visibility, coverPhotoId, newLink }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.title = try c.decodeIfPresent(String.self, forKey: .title)
        self.description = try c.decodeIfPresent(String.self, forKey: .description)
        self.visibility = try c.decodeIfPresent(String.self, forKey: .visibility)
        self.coverPhotoId = try .decode(.coverPhotoId, in: c)
        self.newLink = try c.decodeIfPresent(Bool.self, forKey: .newLink)
    }

    func edit(rules: ListRules) -> Result<ListEdit, ListBodyRefusal> {
        var refused: [(pointer: String, reason: String)] = []
        let visibility = ListBodies.visibility(self.visibility)
        if self.visibility != nil, visibility == nil { refused.append(("/visibility", "one of \(ListBodies.visibilities)")) }
        if case .value(let id) = self.coverPhotoId, id <= 0 { refused.append(("/coverPhotoId", "a photo's id, 1…\(Int64.max), or null to remove the cover")) }
        if self.newLink == false {
            refused.append(("/newLink", "only true: it issues a new share link"))
        } else if self.newLink == true, let visibility, visibility != .link {
            refused.append(("/newLink", "only for a link list: a \(visibility.rawValue) list has no share link"))
        }
        let edit = ListEdit(title: self.title, description: self.description, visibility: visibility, cover: self.coverPhotoId.edit,
                            newLink: self.newLink == true)
        for (field, reason) in rules.violations(edit) { refused.append(("/" + field, reason)) }
        if refused.isEmpty, self.title == nil, self.description == nil, self.visibility == nil, self.coverPhotoId.isAbsent, self.newLink == nil {
            refused.append(("", "nothing to change: give title, description, visibility, coverPhotoId or newLink"))
        }
        return refused.isEmpty ? .success(edit) : .failure(ListBodyRefusal(refused))
    }
}

/// `POST /v1/lists/{listId}/items`: `ride` or `park` (exactly one), with a note and a place.
struct NewItemBody: Decodable, Sendable {
    var ride: String?
    var park: String?
    var note: String?
    /// 0-based; absent: the end.
    var position: Int?

    struct Checked: Hashable, Sendable {
        var target: ListItemTarget
        var note: String?
        var position: Int?
    }

    func checked(rules: ListRules) -> Result<Checked, ListBodyRefusal> {
        var refused: [(pointer: String, reason: String)] = []
        var target: ListItemTarget?
        switch (self.ride, self.park) {
        case (let ride?, nil):
            if Slug.isRideID(ride) { target = .ride(RideID(rawValue: ride)) } else { refused.append(("/ride", "a catalogue ride's id, <park>.<slug>")) }
        case (nil, let park?):
            if Slug.isValid(park) { target = .park(ParkID(rawValue: park)) } else { refused.append(("/park", "a catalogue park's id")) }
        case (.some, .some):
            refused.append(("/park", "one item is a ride or a park: give ride or park, not both"))
        case (nil, nil):
            refused.append(("", "give ride (a catalogue ride's id) or park (a catalogue park's id)"))
        }
        if let note, let reason = rules.noteViolation(note) { refused.append(("/note", reason)) }
        if let position, !(0..<rules.maximumItems).contains(position) {
            refused.append(("/position", "a place in the list, 0…\(rules.maximumItems - 1)"))
        }
        guard refused.isEmpty, let target else { return .failure(ListBodyRefusal(refused)) }
        return .success(Checked(target: target, note: self.note, position: self.position))
    }
}

/// `PATCH /v1/lists/{listId}/items/{itemId}`: `note: null` removes the note; `checked: false`
/// unchecks it, and evidence leaves it unchecked until it is checked by hand again.
struct ItemPatchBody: Decodable, Sendable {
    var position: Int?
    var note: PatchMember<String>
    var checked: Bool?

    enum CodingKeys: String, CodingKey { case position, note, checked }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.position = try c.decodeIfPresent(Int.self, forKey: .position)
        self.note = try .decode(.note, in: c)
        self.checked = try c.decodeIfPresent(Bool.self, forKey: .checked)
    }

    func edit(rules: ListRules) -> Result<ListItemEdit, ListBodyRefusal> {
        var refused: [(pointer: String, reason: String)] = []
        if let position, !(0..<rules.maximumItems).contains(position) {
            refused.append(("/position", "a place in the list, 0…\(rules.maximumItems - 1)"))
        }
        if case .value(let note) = self.note, let reason = rules.noteViolation(note) { refused.append(("/note", reason)) }
        if refused.isEmpty, self.position == nil, self.note.isAbsent, self.checked == nil {
            refused.append(("", "nothing to change: give position, note or checked"))
        }
        return refused.isEmpty ? .success(ListItemEdit(position: self.position, note: self.note.edit, checked: self.checked))
            : .failure(ListBodyRefusal(refused))
    }
}
