import CoasterCore
import Foundation

/// One user of a bulk load (benchmarks, migrations from the old backend).
public struct BulkUser: Sendable {
    public var id: UserID
    public var username: String
    public var displayName: String
    public var passwordHash: String
    public var latest: AcceptedFix?
    public var zones: [ZoneID]
    /// Parks the user is on a visit to, with the visit's last evidence.
    public var visits: [(ParkID, Date)]
    /// A session to create, by token hash.
    public var tokenHash: Data?

    public init(id: UserID, username: String, displayName: String, passwordHash: String, latest: AcceptedFix?, zones: [ZoneID],
                visits: [(ParkID, Date)], tokenHash: Data?) {
        self.id = id
        self.username = username
        self.displayName = displayName
        self.passwordHash = passwordHash
        self.latest = latest
        self.zones = zones
        self.visits = visits
        self.tokenHash = tokenHash
    }
}

/// One ride of a bulk load's ride logs.
public struct BulkRide: Sendable {
    public var user: UserID
    public var ride: Ride
    public var at: Date

    public init(user: UserID, ride: Ride, at: Date) {
        self.user = user
        self.ride = ride
        self.at = at
    }
}

/// One message of a bulk load.
public struct BulkMessage: Sendable {
    public var sender: UserID
    public var recipient: UserID
    public var body: String
    public var sentAt: Date
    /// When the recipient read it; `nil` for unread.
    public var readAt: Date?

    public init(sender: UserID, recipient: UserID, body: String, sentAt: Date, readAt: Date?) {
        self.sender = sender
        self.recipient = recipient
        self.body = body
        self.sentAt = sentAt
        self.readAt = readAt
    }
}

/// One post of a bulk load: what ``PostStore/createPost(_:author:now:privacy:)`` stores of a
/// draft without photos or a visit.
public struct BulkPost: Sendable {
    public var author: UserID
    public var text: String
    public var visibility: PostVisibility
    public var createdAt: Date
    /// Catalogue parks and rides it is tagged with (a ride by its catalogue id or its fenced
    /// ride's); the parks it is about and the hashtags of its text follow, as for a draft.
    public var parks: [ParkID]
    public var rides: [RideID]

    public init(author: UserID, text: String, visibility: PostVisibility, createdAt: Date, parks: [ParkID] = [], rides: [RideID] = []) {
        self.author = author
        self.text = text
        self.visibility = visibility
        self.createdAt = createdAt
        self.parks = parks
        self.rides = rides
    }
}

/// One comment of a bulk load.
public struct BulkComment: Sendable {
    /// The post it is on: its index in the posts of the same load.
    public var post: Int
    public var author: UserID
    public var text: String
    public var createdAt: Date

    public init(post: Int, author: UserID, text: String, createdAt: Date) {
        self.post = post
        self.author = author
        self.text = text
        self.createdAt = createdAt
    }
}

/// Loading a generated world in bulk, for benchmarks and load tests.
public protocol BulkStore: Sendable {
    /// Writes users, their latest positions, visits, sessions and friendships straight into the
    /// store, in transactions of `chunk` users: for loading a generated world or an export, not for
    /// serving requests (no validation beyond the schema's).
    func bulkLoad(users: [BulkUser], friendships: [(UserID, UserID)], chunk: Int,
        progress: (@Sendable (String) -> Void)?) async throws

    /// Writes ride logs and counts them on the leaderboards by the ride log's own rule
    /// (``tally(user:ride:at:_:)``), in transactions of `chunk` rides; each user's rides in the
    /// order they were ridden (a coaster's first ride of a period is a credit). Badges are not
    /// awarded, nor visits or cooldowns checked: for loading a generated world or an export.
    func bulkLogRides(_ rides: [BulkRide], chunk: Int, progress: (@Sendable (String) -> Void)?) async throws

    /// Writes messages in the order given (their ids follow it), in transactions of `chunk`
    /// messages. Friendships are not checked, nor anyone told: for loading a generated world or
    /// an export.
    func bulkSendMessages(_ messages: [BulkMessage], chunk: Int, progress: (@Sendable (String) -> Void)?) async throws

    /// Writes posts, then comments on them, each in the order given (their ids follow it), in
    /// transactions of `chunk` rows, with the rows ``PostStore/createPost(_:author:now:privacy:)``
    /// and ``PostStore/addComment(to:author:text:now:)`` write: the folded search documents
    /// (``PostRules/searchDocument(_:)``), the tags with the parks the post is about and the
    /// hashtags of its text, and the counts (the schema's triggers keep them). Every tag and
    /// comment is checked before anything is written: a tag the catalogue does not know throws
    /// ``PostError/unknownTag(pointer:)`` (`/posts/{index}/rides/{index}`), a comment on no post
    /// of the load ``PostError/noSuchPost``. Nothing else is checked (the rules' bounds, who may
    /// read whose post): for loading a generated world or an export. Returns the posts' ids.
    @discardableResult
    func bulkLoadPosts(_ posts: [BulkPost], comments: [BulkComment], chunk: Int, progress: (@Sendable (String) -> Void)?) async throws -> [Int64]
}

extension BulkStore {
    public func bulkLoad(users: [BulkUser], friendships: [(UserID, UserID)], progress: (@Sendable (String) -> Void)? = nil) async throws {
        try await self.bulkLoad(users: users, friendships: friendships, chunk: 50_000, progress: progress)
    }

    public func bulkLogRides(_ rides: [BulkRide], progress: (@Sendable (String) -> Void)? = nil) async throws {
        try await self.bulkLogRides(rides, chunk: 20_000, progress: progress)
    }

    public func bulkSendMessages(_ messages: [BulkMessage], progress: (@Sendable (String) -> Void)? = nil) async throws {
        try await self.bulkSendMessages(messages, chunk: 50_000, progress: progress)
    }

    @discardableResult
    public func bulkLoadPosts(_ posts: [BulkPost], comments: [BulkComment], progress: (@Sendable (String) -> Void)? = nil) async throws -> [Int64] {
        try await self.bulkLoadPosts(posts, comments: comments, chunk: 20_000, progress: progress)
    }
}
