import CoasterCore
import Foundation

// The bodies the post routes read, and their checks: pure, so that tools/fuzz compiles this file
// with CoasterCore alone (target `post-body`). A refused member is named by its JSON pointer; the
// routes turn refusals into 422 `invalid-post` problems.

/// Members of a post body refused by a rule, each with its JSON pointer and what would fit.
struct PostBodyRefusal: Error, Sendable {
    var fields: [(pointer: String, reason: String)]

    init(_ fields: [(pointer: String, reason: String)]) { self.fields = fields }
    init(_ pointer: String, _ reason: String) { self.fields = [(pointer, reason)] }
}

enum PostBodies {
    static let visibilities = PostVisibility.allCases.map(\.rawValue).joined(separator: ", ")

    /// Ids of the wire's shape, or a refusal naming each entry that is not one.
    static func ids<ID>(_ texts: [String]?, at pointer: String, valid: (String) -> Bool, what: String, make: (String) -> ID,
                        into refused: inout [(pointer: String, reason: String)]) -> [ID]? {
        guard let texts else { return nil }
        var out: [ID] = []
        for (index, text) in texts.enumerated() {
            if valid(text) { out.append(make(text)) } else { refused.append(("\(pointer)/\(index)", what)) }
        }
        return out
    }


    static func photos(_ ids: [Int64]?, into refused: inout [(pointer: String, reason: String)]) {
        for (index, id) in (ids ?? []).enumerated() where id <= 0 { refused.append(("/photos/\(index)", "a photo's id, 1…\(Int64.max)")) }
    }
}

/// `POST /v1/posts`.
struct NewPostBody: Decodable, Sendable {
    var text: String?
    /// Ids of the author's photos (uploaded with `POST /v1/me/photos`), in order.
    var photos: [Int64]?
    /// Catalogue park ids.
    var parks: [String]?
    /// Catalogue ride ids, `<park>.<slug>`.
    var rides: [String]?
    /// `public` (the default) or `friends`.
    var visibility: String?
    /// A park id: the author was there, on a validated visit.
    var verifiedAt: String?

    /// The draft this body proposes, or every member a rule refuses.
    func draft() -> Result<PostDraft, PostBodyRefusal> {
        var refused: [(pointer: String, reason: String)] = []
        let visibility = self.visibility == nil ? PostVisibility.public : self.visibility.flatMap(PostVisibility.init(rawValue:))
        if visibility == nil { refused.append(("/visibility", "one of \(PostBodies.visibilities)")) }
        PostBodies.photos(self.photos, into: &refused)
        let parks = PostBodies.ids(self.parks, at: "/parks", valid: Slug.isValid, what: "a catalogue park's id", make: ParkID.init(rawValue:), into: &refused)
        let rides = PostBodies.ids(self.rides, at: "/rides", valid: Slug.isRideID, what: "a catalogue ride's id, <park>.<slug>",
                                   make: RideID.init(rawValue:), into: &refused)
        var verified: ParkID?
        if let park = self.verifiedAt {
            if Slug.isValid(park) { verified = ParkID(rawValue: park) } else { refused.append(("/verifiedAt", "a park's id")) }
        }
        let draft = PostDraft(text: self.text ?? "", photos: self.photos ?? [], parks: parks ?? [], rides: rides ?? [], visibility: visibility ?? .public,
                              verifiedAt: verified)
        for violation in PostRules.violations(draft) where !refused.contains(where: { $0.pointer == violation.pointer }) { refused.append(violation) }
        return refused.isEmpty ? .success(draft) : .failure(PostBodyRefusal(refused))
    }
}

/// `PATCH /v1/posts/{postId}`: any of the members of a new post but `verifiedAt` (a claim is
/// made once, with the post).
struct PostPatchBody: Decodable, Sendable {
    var text: String?
    var photos: [Int64]?
    var parks: [String]?
    var rides: [String]?
    var visibility: String?

    func edit() -> Result<PostEdit, PostBodyRefusal> {
        var refused: [(pointer: String, reason: String)] = []
        let visibility = self.visibility.flatMap(PostVisibility.init(rawValue:))
        if self.visibility != nil, visibility == nil { refused.append(("/visibility", "one of \(PostBodies.visibilities)")) }
        PostBodies.photos(self.photos, into: &refused)
        let parks = PostBodies.ids(self.parks, at: "/parks", valid: Slug.isValid, what: "a catalogue park's id", make: ParkID.init(rawValue:), into: &refused)
        let rides = PostBodies.ids(self.rides, at: "/rides", valid: Slug.isRideID, what: "a catalogue ride's id, <park>.<slug>",
                                   make: RideID.init(rawValue:), into: &refused)
        let edit = PostEdit(text: self.text, photos: self.photos, parks: parks, rides: rides, visibility: visibility)
        for violation in PostRules.violations(edit) where !refused.contains(where: { $0.pointer == violation.pointer }) {
            if violation.pointer.isEmpty, !refused.isEmpty { continue }
            refused.append(violation)
        }
        return refused.isEmpty ? .success(edit) : .failure(PostBodyRefusal(refused))
    }
}

/// `PUT /v1/posts/{postId}/reaction`.
struct ReactionBody: Decodable, Sendable {
    var value: String?

    func reaction() -> Result<Reaction, PostBodyRefusal> {
        guard let value, let reaction = Reaction(rawValue: value) else {
            return .failure(PostBodyRefusal("/value", "one of " + Reaction.allCases.map(\.rawValue).joined(separator: ", ")))
        }
        return .success(reaction)
    }
}

/// `POST /v1/posts/{postId}/comments`.
struct NewCommentBody: Decodable, Sendable {
    var text: String?

    func checked() -> Result<String, PostBodyRefusal> {
        guard let text, PostRules.comment.violation(text) == nil, !PostRules.isBlank(text) else {
            return .failure(PostBodyRefusal("/text", PostRules.comment.rule + ", not only spaces"))
        }
        return .success(text)
    }
}
