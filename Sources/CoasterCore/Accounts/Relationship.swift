/// How one user stands to another, seen from the first.
public enum Relationship: Hashable, Sendable {
    case none
    case friends
    /// I asked them; they have not answered.
    case requestSent
    /// They asked me; I have not answered.
    case requestReceived
    /// I blocked them.
    case blocking
    /// They blocked me. Shown to nobody: to me it looks like `none` where that matters.
    case blockedBy

    /// Whether location and profile may flow to the other side.
    public var isFriend: Bool { self == .friends }

    /// Whether `viewer` may see `owner`'s profile, photos and ride log: they are `owner`, or an
    /// accepted friend of theirs. Oneself needs no relationship read (`relationship` is asked
    /// only for someone else).
    public static func seesRecords(_ viewer: UserID, of owner: UserID, relationship: () throws -> Relationship) rethrows -> Bool {
        try viewer == owner || relationship() == .friends
    }
}

/// What a friend request does, decided from the relationship the request finds.
public enum FriendRequestDecision: Hashable, Sendable {
    /// A new pending request.
    case create
    /// They had already asked me: the request accepts theirs.
    case acceptTheirs
    /// Already friends or already asked: nothing changes.
    case alreadyDone(Relationship)
    /// Blocked either way: the requester is told the user does not exist.
    case hide
    /// Asking oneself.
    case refuseSelf
}

public enum FriendRules {
    /// The most accepted friends a user can have: the friend list, the nearby query, the park's
    /// friends and the friends' board all cost what a user's friends are.
    public static let maximumFriends = 5_000
    /// The most requests a user can have waiting on others: the request lists cost them.
    public static let maximumPendingRequests = 1_000

    /// Whether someone with `friends` accepted friends may take one more.
    public static func hasRoomForFriend(friends: Int) -> Bool { friends < Self.maximumFriends }

    /// Whether someone with `pending` requests waiting on others may send one more.
    public static func mayAsk(pending: Int) -> Bool { pending < Self.maximumPendingRequests }

    /// The decision for a request from `me` to `them`, given how I stand to them.
    public static func request(from me: UserID, to them: UserID, relationship: Relationship) -> FriendRequestDecision {
        guard me != them else { return .refuseSelf }
        switch relationship {
        case .none: return .create
        case .requestReceived: return .acceptTheirs
        case .friends, .requestSent: return .alreadyDone(relationship)
        case .blocking, .blockedBy: return .hide
        }
    }
}
