import CoasterCore
import CoasterHTTP
import CoasterService
import CoasterStore
import Foundation
import Hummingbird

struct PhotoWire: Encodable, Sendable, ResponseEncodable {
    var id: Int64
    var url: String
    var contentType: String
    var width: Int
    var height: Int
    var bytes: Int
    var caption: String?
    var park: ParkID?
    var ride: RideID?
    var createdAt: Date
    /// Metadata that could carry a location was removed on upload.
    var stripped: Bool?

    init(_ p: Photo, stripped: Bool? = nil) {
        self.id = p.id
        self.url = "/v1/photos/\(p.id)"
        self.contentType = p.format.contentType
        self.width = p.width
        self.height = p.height
        self.bytes = p.bytes
        self.caption = p.caption
        self.park = p.park
        self.ride = p.ride
        self.createdAt = p.createdAt
        self.stripped = stripped
    }
}

struct PhotoListResponse: ResponseEncodable, Sendable {
    var photos: [PhotoWire]
}

struct BadgeWire: Encodable, Sendable {
    var id: String
    var title: String
    var description: String
    var earnedAt: Date?
    /// 0…1.
    var progress: Double

    init(badge: Badge, earnedAt: Date?, progress: Double) {
        self.id = badge.id
        self.title = badge.title
        self.description = badge.description
        self.earnedAt = earnedAt
        self.progress = (progress * 100).rounded() / 100
    }
}

struct BadgesResponse: ResponseEncodable, Sendable {
    var earned: [BadgeWire]
    var available: [BadgeWire]
}

struct FriendProfileResponse: ResponseEncodable, Sendable {
    var user: UserWire
    /// The same text as `description`, by its first name.
    var bio: String
    var description: String
    var status: StatusWire?
    var homePark: CatalogParkWire?
    var favouriteRides: [CatalogRideWire]
    var photo: String?
    var stats: RiderStatsResponse
    var badges: [BadgeWire]
    var followers: Int
    var following: Int
    /// The caller follows this user's public posts.
    var followedByYou: Bool
}

/// `GET /v1/leaderboards/{metric}`, written by ``JSONWriter`` from its members' list (``JSONObject``).
struct LeaderboardResponse: JSONObject, JSONWritable, Sendable {
    struct Entry: JSONObject, Sendable {
        var rank: Int
        var user: UserWire
        var value: Int

        init(_ e: LeaderboardEntry) {
            self.rank = e.rank
            self.user = UserWire(e.user)
            self.value = e.value
        }

        static let members: [JSONMember<Self>] = [.init("rank", \.rank), .init("user", \.user), .init("value", \.value)]
    }

    var entries: [Entry]
    /// The caller's own place, when they are on this board at all.
    var me: Entry?
    /// Where the next page starts (`after=`), when this page is full.
    var next: String?

    static let members: [JSONMember<Self>] = [.init("entries", \.entries), .init("me", \.me), .init("next", \.next)]

    var jsonCapacity: Int { 96 + self.entries.reduce(0) { $0 + $1.user.username.utf8.count + $1.user.displayName.utf8.count + 96 } }
}

extension LeaderboardPosition {
    /// A place as text, `value_reachedAt_userId`, sealed (``CursorSeal``) before a client sees it
    /// as a page's `next`; the time's shortest decimal form reads back as the same `Double`.
    var cursor: String { "\(self.value)_\(self.reachedAt)_\(self.user.rawValue)" }

    init?(cursor: some StringProtocol) {
        let parts = cursor.split(separator: "_", omittingEmptySubsequences: false)
        guard parts.count == 3, let value = Int(parts[0]), let reachedAt = Double(parts[1]), reachedAt.isFinite,
              let user = Int64(parts[2]) else { return nil }
        self.init(value: value, reachedAt: reachedAt, user: UserID(user))
    }
}

struct MessageWire: JSONObject, Sendable, ResponseEncodable {
    var id: Int64
    var from: UserID
    var to: UserID
    var body: String
    var sentAt: Date
    var readAt: Date?

    init(_ m: Message) {
        self.id = m.id
        self.from = m.sender
        self.to = m.recipient
        self.body = m.body
        self.sentAt = m.sentAt
        self.readAt = m.readAt
    }
}

extension MessageWire {
    /// `readAt` is left out while unread.
    static let members: [JSONMember<Self>] = [
        .init("body", \.body), .init("from", \.from.rawValue), .init("id", \.id), .init("readAt", \.readAt), .init("sentAt", \.sentAt),
        .init("to", \.to.rawValue),
    ]

    /// About the bytes ``write(to:)`` takes: the body, and the rest of a message.
    var jsonLength: Int { self.body.utf8.count + 120 }
}

/// `GET /v1/messages`, written by ``JSONWriter`` from its members' list (``JSONObject``):
/// `JSONEncoder` was a fifth of the route's CPU.
struct ConversationListResponse: JSONObject, JSONWritable, Sendable {
    struct Item: JSONObject, Sendable {
        var user: UserWire
        var last: MessageWire
        var unread: Int

        static let members: [JSONMember<Self>] = [.init("last", \.last), .init("unread", \.unread), .init("user", \.user)]
    }

    var conversations: [Item]

    static let members: [JSONMember<Self>] = [.init("conversations", \.conversations)]

    var jsonCapacity: Int { self.conversations.reduce(32) { $0 + $1.last.jsonLength + 120 } }
}

/// A conversation's page (`GET /v1/messages/{userId}`), written like the list.
struct MessageListResponse: JSONObject, JSONWritable, Sendable {
    var messages: [MessageWire]

    static let members: [JSONMember<Self>] = [.init("messages", \.messages)]

    var jsonCapacity: Int { self.messages.reduce(32) { $0 + $1.jsonLength } }
}
