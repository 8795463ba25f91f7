import CoasterCore
import CoasterHTTP
import Foundation
import Hummingbird

/// A post as the caller sees it (docs: Posts).
struct PostWire: Encodable, Sendable, ResponseEncodable {
    struct PhotoRef: Encodable, Sendable {
        var id: Int64
        var url: String
    }

    struct ParkRef: Encodable, Sendable {
        var id: String
        var name: String
    }

    struct RideRef: Encodable, Sendable {
        var id: String
        var name: String
        var park: ParkRef
    }

    /// The validated visit behind "I was there": the park and when the visit began.
    struct Verified: Encodable, Sendable {
        var park: ParkRef
        var visitStartedAt: Date
    }

    struct Counts: Encodable, Sendable {
        var up: Int
        var down: Int
        var comments: Int
    }

    var id: Int64
    var author: UserWire
    var text: String
    var visibility: String
    var photos: [PhotoRef]
    var parks: [ParkRef]
    var rides: [RideRef]
    var hashtags: [String]
    var verified: Verified?
    var counts: Counts
    /// The caller's own thumb: `up`, `down` or null.
    var reaction: String?
    var createdAt: Date
    var edited: Bool
    var editedAt: Date?

    init(_ view: PostView) {
        self.id = view.id
        self.author = UserWire(view.author)
        self.text = view.text
        self.visibility = view.visibility.rawValue
        self.photos = view.photos.map { PhotoRef(id: $0, url: "/v1/photos/\($0)") }
        self.parks = view.parks.map { ParkRef(id: $0.id.rawValue, name: $0.name) }
        self.rides = view.rides.map { RideRef(id: $0.id.rawValue, name: $0.name, park: ParkRef(id: $0.park.id.rawValue, name: $0.park.name)) }
        self.hashtags = view.hashtags
        self.verified = view.verified.map { Verified(park: ParkRef(id: $0.park.id.rawValue, name: $0.park.name), visitStartedAt: $0.at) }
        self.counts = Counts(up: view.ups, down: view.downs, comments: view.comments)
        self.reaction = view.reaction?.rawValue
        self.createdAt = view.createdAt
        self.edited = view.editedAt != nil
        self.editedAt = view.editedAt
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(self.id, forKey: .id)
        try c.encode(self.author, forKey: .author)
        try c.encode(self.text, forKey: .text)
        try c.encode(self.visibility, forKey: .visibility)
        try c.encode(self.photos, forKey: .photos)
        try c.encode(self.parks, forKey: .parks)
        try c.encode(self.rides, forKey: .rides)
        try c.encode(self.hashtags, forKey: .hashtags)
        // Present as null: clients tell "no claim shown" from an old server.
        try c.encode(self.verified, forKey: .verified)
        try c.encode(self.counts, forKey: .counts)
        try c.encode(self.reaction, forKey: .reaction)
        try c.encode(self.createdAt, forKey: .createdAt)
        try c.encode(self.edited, forKey: .edited)
        try c.encode(self.editedAt, forKey: .editedAt)
    }

    enum CodingKeys: String, CodingKey { case id, author, text, visibility, photos, parks, rides, hashtags, verified, counts, reaction, createdAt, edited, editedAt }
}

/// A page of a feed: `next` asks for older posts (`after=`), `newest` for newer ones
/// (`since=`, pull to refresh); both opaque.
struct FeedResponse: Encodable, Sendable, ResponseEncodable {
    var posts: [PostWire]
    var next: String?
    var newest: String?

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(self.posts, forKey: .posts)
        try c.encode(self.next, forKey: .next)
        try c.encode(self.newest, forKey: .newest)
    }

    enum CodingKeys: String, CodingKey { case posts, next, newest }
}

struct CommentWire: Encodable, Sendable, ResponseEncodable {
    var id: Int64
    var post: Int64
    var author: UserWire
    var text: String
    var createdAt: Date

    init(_ view: CommentView) {
        self.id = view.id
        self.post = view.post
        self.author = UserWire(view.author)
        self.text = view.text
        self.createdAt = view.createdAt
    }
}

struct CommentsResponse: Encodable, Sendable, ResponseEncodable {
    var comments: [CommentWire]
    var next: String?

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(self.comments, forKey: .comments)
        try c.encode(self.next, forKey: .next)
    }

    enum CodingKeys: String, CodingKey { case comments, next }
}

/// A page of a post search: each hit with where it matched (`post` or `comment`).
struct PostSearchResponse: Encodable, Sendable, ResponseEncodable {
    struct Hit: Encodable, Sendable {
        var post: PostWire
        var matchedIn: String
    }

    var query: [String]
    var results: [Hit]
    var next: String?

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(self.query, forKey: .query)
        try c.encode(self.results, forKey: .results)
        try c.encode(self.next, forKey: .next)
    }

    enum CodingKeys: String, CodingKey { case query, results, next }
}
