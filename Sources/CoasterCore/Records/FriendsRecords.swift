import Foundation

/// Why a friend-graph change was refused.
public enum FriendshipError: Error, Equatable, Sendable {
    /// No such user, or one that blocked the caller (the two are told apart by nobody).
    case noSuchUser
    case cannotBefriendSelf
    case noPendingRequest
    case notFriends
    case notBlocked
    /// A friendship would take the caller (`yours`) or the other user past ``FriendRules/maximumFriends``.
    case tooManyFriends(yours: Bool)
    /// The caller has ``FriendRules/maximumPendingRequests`` requests waiting on others already.
    case tooManyPendingRequests
}

/// What a friend request did.
public enum FriendRequestOutcome: Hashable, Sendable {
    case requested(UserSummary)
    /// They had asked first: now friends.
    case accepted(UserSummary)
    case alreadyFriends(UserSummary)
    case alreadyRequested(UserSummary)
}

/// A friend as the friend list shows them.
public struct FriendListing: Hashable, Sendable {
    public var user: UserSummary
    public var since: Date
    /// The last time the friend used the service, `nil` when their sharing hides it from the viewer.
    public var lastSeen: Date?

    /// Where the friend stands in the list.
    public var position: NamePosition { NamePosition(displayName: self.user.displayName, username: self.user.username) }

    public init(user: UserSummary, since: Date, lastSeen: Date?) {
        self.user = user
        self.since = since
        self.lastSeen = lastSeen
    }
}

/// A place in a list by name: by display name, ASCII letters alike in either case (SQLite's
/// `NOCASE`), then by username, which is unique.
public struct NamePosition: Hashable, Sendable {
    public var displayName: String
    public var username: String

    public init(displayName: String, username: String) {
        self.displayName = displayName
        self.username = username
    }
}

/// A pending request, from the viewer's side.
public struct FriendRequestListing: Hashable, Sendable {
    public var user: UserSummary
    public var sentAt: Date
    /// Where the request stands in its list (newest first): its time as stored, not as a `Date`
    /// (seconds since 2001) gives it back, since the next page compares it with the stored times.
    public var position: ListPosition

    public init(user: UserSummary, sentAt: Date, position: ListPosition) {
        self.user = user
        self.sentAt = sentAt
        self.position = position
    }
}

/// A place in a list of users newest first (the requests waiting on a user, the users they
/// blocked): when the user entered the list, as stored, and the user, where two came at once. A
/// page after it starts with the next older one.
public struct ListPosition: Hashable, Sendable {
    public var at: Double
    public var user: UserID

    public init(at: Double, user: UserID) {
        self.at = at
        self.user = user
    }
}

/// A user the viewer has blocked, and where the block stands in their list (newest first).
public struct BlockListing: Hashable, Sendable {
    public var user: UserSummary
    public var position: ListPosition

    public init(user: UserSummary, position: ListPosition) {
        self.user = user
        self.position = position
    }
}
