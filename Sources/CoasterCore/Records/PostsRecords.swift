import Foundation

/// A park visit that backs a post's "I was there", as a viewer may see it.
public struct VerifiedVisit: Hashable, Sendable {
    public var park: CatalogPark
    /// When the visit began.
    public var at: Date

    public init(park: CatalogPark, at: Date) {
        self.park = park
        self.at = at
    }
}

/// A post as one viewer sees it (docs: Posts).
public struct PostView: Hashable, Sendable {
    public var id: Int64
    public var author: UserSummary
    public var text: String
    public var visibility: PostVisibility
    /// The author's photos, in order; a photo its owner deleted is gone from the post.
    public var photos: [Int64]
    /// The tagged parks, and the parks of the tagged rides, each once.
    public var parks: [CatalogPark]
    public var rides: [CatalogRide]
    public var hashtags: [String]
    /// Shown only while the visit exists, and to others only once
    /// ``LocationPrivacy/revealsPlace(at:now:)`` allows.
    public var verified: VerifiedVisit?
    public var ups: Int
    public var downs: Int
    public var comments: Int
    /// The viewer's own thumb.
    public var reaction: Reaction?
    public var createdAt: Date
    public var editedAt: Date?

    public init(id: Int64, author: UserSummary, text: String, visibility: PostVisibility, photos: [Int64], parks: [CatalogPark], rides: [CatalogRide],
                hashtags: [String], verified: VerifiedVisit?, ups: Int, downs: Int, comments: Int, reaction: Reaction?, createdAt: Date, editedAt: Date?) {
        self.id = id
        self.author = author
        self.text = text
        self.visibility = visibility
        self.photos = photos
        self.parks = parks
        self.rides = rides
        self.hashtags = hashtags
        self.verified = verified
        self.ups = ups
        self.downs = downs
        self.comments = comments
        self.reaction = reaction
        self.createdAt = createdAt
        self.editedAt = editedAt
    }
}

/// A comment on a post.
public struct CommentView: Hashable, Sendable {
    public var id: Int64
    public var post: Int64
    public var author: UserSummary
    public var text: String
    public var createdAt: Date

    public init(id: Int64, post: Int64, author: UserSummary, text: String, createdAt: Date) {
        self.id = id
        self.post = post
        self.author = author
        self.text = text
        self.createdAt = createdAt
    }
}

/// Why a post, comment or reaction write is refused.
public enum PostError: Error, Hashable, Sendable {
    /// No such post, or the caller may not see it (never "forbidden": that would say it exists).
    case noSuchPost
    /// The post is the caller's to read but not to change.
    case notAuthor
    case noSuchComment
    /// A photo that is not the author's (its index in `photos`).
    case noSuchPhoto(index: Int)
    /// A park or ride the catalogue does not know (the JSON pointer of the entry).
    case unknownTag(pointer: String)
    /// `verifiedAt` names a park without a validated visit of the author's that ended within
    /// ``PostRules/verificationWindow`` (or is going on).
    case noVisit(ParkID)
    /// An edit would leave the post with neither text nor photo.
    case emptyPost
    case noSuchUser
}

/// A search hit: the post, and whether its own text or one of its comments matched.
public struct PostHit: Hashable, Sendable {
    public var post: PostView
    public var inComment: Bool

    public init(post: PostView, inComment: Bool) {
        self.post = post
        self.inComment = inComment
    }
}
