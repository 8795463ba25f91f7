import CoasterCore
import Foundation
import GRDB

extension SpatiaLiteStore {
    /// Throws unless `me` and `them` may become friends without either passing
    /// ``FriendRules/maximumFriends``.
    static func checkRoomForFriendship(_ me: UserID, _ them: UserID, _ db: Database) throws {
        let count = try db.cachedStatement(sql: """
            SELECT (SELECT count(*) FROM friendships WHERE requester = :user AND status = 'accepted')
                 + (SELECT count(*) FROM friendships WHERE addressee = :user AND status = 'accepted')
            """)
        if try !FriendRules.hasRoomForFriend(friends: Int.fetchOne(count, arguments: ["user": me.rawValue])!) {
            throw FriendshipError.tooManyFriends(yours: true)
        }
        if try !FriendRules.hasRoomForFriend(friends: Int.fetchOne(count, arguments: ["user": them.rawValue])!) {
            throw FriendshipError.tooManyFriends(yours: false)
        }
    }

    /// How `me` stands to `them`.
    public func relationship(of me: UserID, to them: UserID) async throws -> Relationship {
        try await self.pool.read { db in try Self.relationship(me, them, db) }
    }

    /// Whether `viewer` may see `user`'s records (``Relationship/seesRecords(_:of:relationship:)``),
    /// read in the transaction that reads what it guards, so a friendship ended meanwhile cannot
    /// let it through.
    static func isSelfOrFriend(_ user: UserID, of viewer: UserID, _ db: Database) throws -> Bool {
        try Relationship.seesRecords(viewer, of: user) { try Self.relationship(viewer, user, db) }
    }

    static func relationship(_ me: UserID, _ them: UserID, _ db: Database) throws -> Relationship {
        let blocks = try db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM blocks WHERE blocker = ? AND blocked = ?)")
        if try Bool.fetchOne(blocks, arguments: [me.rawValue, them.rawValue]) == true { return .blocking }
        if try Bool.fetchOne(blocks, arguments: [them.rawValue, me.rawValue]) == true { return .blockedBy }
        guard let row = try Row.fetchOne(db.cachedStatement(sql: """
            SELECT requester, status FROM friendships
            WHERE (requester = :me AND addressee = :them) OR (requester = :them AND addressee = :me)
            """), arguments: ["me": me.rawValue, "them": them.rawValue]) else { return .none }
        if row["status"] as String == "accepted" { return .friends }
        return (row["requester"] as Int64) == me.rawValue ? .requestSent : .requestReceived
    }

    private static func existingUser(_ id: UserID, _ db: Database) throws -> UserSummary? {
        try Row.fetchOne(db, sql: "SELECT id, username, display_name FROM users WHERE id = ?", arguments: [id.rawValue]).map(Self.summary)
    }

    /// Sends a friend request to a canonical username; accepts theirs if they asked first.
    public func requestFriend(from me: UserID, to username: String) async throws -> FriendRequestOutcome {
        let now = self.now().timeIntervalSince1970
        return try await self.pool.write { db in
            guard let them = try Row.fetchOne(db, sql: "SELECT id, username, display_name FROM users WHERE username = ?",
                                              arguments: [username]).map(Self.summary)
            else { throw FriendshipError.noSuchUser }
            switch FriendRules.request(from: me, to: them.id, relationship: try Self.relationship(me, them.id, db)) {
            case .refuseSelf:
                throw FriendshipError.cannotBefriendSelf
            case .hide:
                throw FriendshipError.noSuchUser
            case .alreadyDone(.friends):
                return .alreadyFriends(them)
            case .alreadyDone:
                return .alreadyRequested(them)
            case .acceptTheirs:
                try Self.checkRoomForFriendship(me, them.id, db)
                try db.execute(sql: "UPDATE friendships SET status = 'accepted', accepted_at = ? WHERE requester = ? AND addressee = ?",
                               arguments: [now, them.id.rawValue, me.rawValue])
                return .accepted(them)
            case .create:
                // Checked when it is sent, as well as when it is accepted: a request the sender
                // could never see accepted is refused at once.
                try Self.checkRoomForFriendship(me, them.id, db)
                let pending = try db.cachedStatement(sql: "SELECT count(*) FROM friendships WHERE requester = ? AND status = 'pending'")
                if try !FriendRules.mayAsk(pending: Int.fetchOne(pending, arguments: [me.rawValue])!) {
                    throw FriendshipError.tooManyPendingRequests
                }
                try db.execute(sql: "INSERT INTO friendships (requester, addressee, status, created_at) VALUES (?, ?, 'pending', ?)",
                               arguments: [me.rawValue, them.id.rawValue, now])
                return .requested(them)
            }
        }
    }

    /// Accepts or declines the pending request `them` sent to `me`.
    public func answerRequest(of me: UserID, from them: UserID, accept: Bool) async throws -> UserSummary {
        let now = self.now().timeIntervalSince1970
        return try await self.pool.write { db in
            guard try Self.relationship(me, them, db) == .requestReceived, let user = try Self.existingUser(them, db) else {
                throw FriendshipError.noPendingRequest
            }
            if accept {
                try Self.checkRoomForFriendship(me, them, db)
                try db.execute(sql: "UPDATE friendships SET status = 'accepted', accepted_at = ? WHERE requester = ? AND addressee = ?",
                               arguments: [now, them.rawValue, me.rawValue])
            } else {
                try db.execute(sql: "DELETE FROM friendships WHERE requester = ? AND addressee = ?", arguments: [them.rawValue, me.rawValue])
            }
            return user
        }
    }

    /// Withdraws the pending request `me` sent to `them`.
    public func cancelRequest(of me: UserID, to them: UserID) async throws {
        try await self.pool.write { db in
            try db.execute(sql: "DELETE FROM friendships WHERE requester = ? AND addressee = ? AND status = 'pending'",
                           arguments: [me.rawValue, them.rawValue])
            guard db.changesCount == 1 else { throw FriendshipError.noPendingRequest }
        }
    }

    /// Ends a friendship, and the sharing overrides either side had for the other.
    public func removeFriend(of me: UserID, _ them: UserID) async throws {
        try await self.pool.write { db in
            guard try Self.relationship(me, them, db) == .friends else { throw FriendshipError.notFriends }
            try Self.unlink(me, them, db)
        }
    }

    /// Blocks a user: any friendship or request between the two ends, and each is hidden from the
    /// other everywhere. Blocking twice is harmless.
    public func block(of me: UserID, _ them: UserID) async throws -> UserSummary {
        let now = self.now().timeIntervalSince1970
        return try await self.pool.write { db in
            guard me != them, let user = try Self.existingUser(them, db) else { throw FriendshipError.noSuchUser }
            try Self.unlink(me, them, db)
            try Self.unfollowBothWays(me, them, db)
            try db.execute(sql: "INSERT OR IGNORE INTO blocks (blocker, blocked, created_at) VALUES (?, ?, ?)",
                           arguments: [me.rawValue, them.rawValue, now])
            return user
        }
    }

    public func unblock(of me: UserID, _ them: UserID) async throws {
        try await self.pool.write { db in
            try db.execute(sql: "DELETE FROM blocks WHERE blocker = ? AND blocked = ?", arguments: [me.rawValue, them.rawValue])
            guard db.changesCount == 1 else { throw FriendshipError.notBlocked }
        }
    }

    private static func unlink(_ a: UserID, _ b: UserID, _ db: Database) throws {
        try db.execute(sql: """
            DELETE FROM friendships WHERE (requester = :a AND addressee = :b) OR (requester = :b AND addressee = :a);
            DELETE FROM sharing_overrides WHERE (user_id = :a AND friend_id = :b) OR (user_id = :b AND friend_id = :a);
            """, arguments: ["a": a.rawValue, "b": b.rawValue])
    }

    /// A page of `limit` accepted friends by display name (``NamePosition``), after `after`.
    /// `lastSeen` respects each friend's sharing towards `me`. A page sorts every friend (at most
    /// ``FriendRules/maximumFriends``): no index orders another person's names.
    public func friends(of me: UserID, limit: Int = FriendRules.maximumFriends, after: NamePosition? = nil) async throws -> [FriendListing] {
        let now = self.now()
        let arguments: StatementArguments = ["me": me.rawValue, "limit": limit,
                                             "name": after?.displayName ?? "", "username": after?.username ?? ""]
        return try await self.pool.read { db in
            try Row.fetchAll(db.cachedStatement(sql: Self.friendList), arguments: arguments).map { row in
                let towardsMe = row["o_hidden"] == nil ? [:] : [me: Self.override(row, precision: "o_precision", hidden: "o_hidden")]
                let visible = Self.sharing(row, overrides: towardsMe).visibility(to: me, at: now) != nil
                return FriendListing(
                    user: Self.summary(row), since: Date(timeIntervalSince1970: row["accepted_at"] ?? 0),
                    lastSeen: visible ? (row["last_seen_at"] as Double?).map(Date.init(timeIntervalSince1970:)) : nil)
            }
        }
    }

    /// A page of the friend list (``friends(of:limit:after:)``): each friend with their sharing
    /// and their override towards `:me` alone, in one statement (it read every friend's overrides,
    /// towards everyone, one statement a friend); after (`:name`, `:username`), which the first
    /// page gives as ('', ''), before every username.
    static let friendList = """
        SELECT u.id, u.username, u.display_name, u.ghost, u.ghost_until, u.precision, u.last_seen_at, f.accepted_at,
               o.precision AS o_precision, o.hidden AS o_hidden
        FROM friendships f
        JOIN users u ON u.id = CASE WHEN f.requester = :me THEN f.addressee ELSE f.requester END
        LEFT JOIN sharing_overrides o ON o.user_id = u.id AND o.friend_id = :me
        WHERE (f.requester = :me OR f.addressee = :me) AND f.status = 'accepted'
          AND (u.display_name > :name COLLATE NOCASE OR (u.display_name = :name COLLATE NOCASE AND u.username > :username))
        ORDER BY u.display_name COLLATE NOCASE, u.username LIMIT :limit
        """

    /// Pending requests to and from `me`, newest first: a page of `limit` incoming requests (after
    /// `after`), a range of the index by recipient and time however many there are; every outgoing
    /// one (at most ``FriendRules/maximumPendingRequests``).
    public func friendRequests(of me: UserID, limit: Int, after: ListPosition?)
        async throws -> (incoming: [FriendRequestListing], outgoing: [FriendRequestListing]) {
        let arguments: StatementArguments = ["me": me.rawValue, "limit": limit,
                                             "at": after?.at ?? Double.infinity, "user": after?.user.rawValue ?? Int64.max]
        return try await self.pool.read { db in
            func listing(_ sql: String) throws -> [FriendRequestListing] {
                try Row.fetchAll(db.cachedStatement(sql: sql), arguments: arguments).map { row in
                    let user = Self.summary(row), sentAt: Double = row["created_at"]
                    return FriendRequestListing(user: user, sentAt: Date(timeIntervalSince1970: sentAt),
                                                position: ListPosition(at: sentAt, user: user.id))
                }
            }
            return (try listing(Self.incomingRequests), try listing(Self.outgoingRequests))
        }
    }

    /// A page of the requests waiting on `:me`, newest first, after (`:at`, `:user`).
    static let incomingRequests = """
        SELECT u.id, u.username, u.display_name, f.created_at FROM friendships f JOIN users u ON u.id = f.requester
        WHERE f.addressee = :me AND f.status = 'pending' AND (f.created_at, f.requester) < (:at, :user)
        ORDER BY f.created_at DESC, f.requester DESC LIMIT :limit
        """

    /// Every request `:me` has waiting on others, newest first.
    static let outgoingRequests = """
        SELECT u.id, u.username, u.display_name, f.created_at FROM friendships f JOIN users u ON u.id = f.addressee
        WHERE f.requester = :me AND f.status = 'pending' ORDER BY f.created_at DESC, f.addressee DESC
        """

    /// A page of `limit` users `me` has blocked, newest first, after `after`: a range of the index
    /// by blocker and time, however many they have blocked.
    public func blocks(of me: UserID, limit: Int, after: ListPosition?) async throws -> [BlockListing] {
        try await self.pool.read { db in
            try Row.fetchAll(db.cachedStatement(sql: Self.blockList), arguments: [
                "me": me.rawValue, "limit": limit, "at": after?.at ?? Double.infinity, "user": after?.user.rawValue ?? Int64.max,
            ]).map { row in
                let user = Self.summary(row)
                return BlockListing(user: user, position: ListPosition(at: row["created_at"], user: user.id))
            }
        }
    }

    /// A page of the users `:me` has blocked, newest first, after (`:at`, `:user`).
    static let blockList = """
        SELECT u.id, u.username, u.display_name, b.created_at FROM blocks b JOIN users u ON u.id = b.blocked
        WHERE b.blocker = :me AND (b.created_at, b.blocked) < (:at, :user)
        ORDER BY b.created_at DESC, b.blocked DESC LIMIT :limit
        """

    /// Sets (or with `nil` clears) what `me` shows one friend.
    public func setSharingOverride(of me: UserID, for friend: UserID, _ override: SharingOverride?) async throws {
        try await self.pool.write { db in
            guard try Self.relationship(me, friend, db) == .friends else { throw FriendshipError.notFriends }
            if let override {
                try db.execute(sql: """
                    INSERT INTO sharing_overrides (user_id, friend_id, precision, hidden) VALUES (?, ?, ?, ?)
                    ON CONFLICT (user_id, friend_id) DO UPDATE SET precision = excluded.precision, hidden = excluded.hidden
                    """, arguments: [me.rawValue, friend.rawValue, override.precision?.rawValue, override.hidden])
            } else {
                try db.execute(sql: "DELETE FROM sharing_overrides WHERE user_id = ? AND friend_id = ?", arguments: [me.rawValue, friend.rawValue])
            }
        }
    }
}
