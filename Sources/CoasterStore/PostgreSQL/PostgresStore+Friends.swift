import CoasterCore
import Foundation
import PostgresNIO

/// Friendships, requests and blocks. Every change between two users takes both users' locks, in
/// id order: each reads how the two stand, decides and writes, as SQLite's single writer let it,
/// so two users asking each other at once make one friendship, and a sharing override never
/// outlives the friendship it was set for.
extension PostgresStore: FriendStore {
    /// How `me` stands to `them`.
    public func relationship(of me: UserID, to them: UserID) async throws -> Relationship {
        try await self.single { tx in try await Self.relationship(me, them, tx) }
    }

    /// How `me` stands to `them`, in one statement: blocks either way first, then the friendship
    /// or request between the two (at most one: a request to someone who asked first accepts theirs).
    static func relationship(_ me: UserID, _ them: UserID, _ tx: PostgresTransaction) async throws -> Relationship {
        let row = try await tx.one("""
            SELECT EXISTS (SELECT 1 FROM blocks WHERE blocker = \(me.rawValue) AND blocked = \(them.rawValue)),
                   EXISTS (SELECT 1 FROM blocks WHERE blocker = \(them.rawValue) AND blocked = \(me.rawValue)),
                   f.requester, f.status
            FROM (SELECT 1) one
            LEFT JOIN friendships f ON (f.requester = \(me.rawValue) AND f.addressee = \(them.rawValue))
                                    OR (f.requester = \(them.rawValue) AND f.addressee = \(me.rawValue))
            """)
        let (blocking, blockedBy, requester, status) = try row.decode((Bool, Bool, Int64?, String?).self)
        if blocking { return .blocking }
        if blockedBy { return .blockedBy }
        guard let requester, let status else { return .none }
        if status == "accepted" { return .friends }
        return requester == me.rawValue ? .requestSent : .requestReceived
    }

    /// Whether `viewer` may see `user`'s records (``Relationship/seesRecords(_:of:relationship:)``),
    /// read in the transaction that reads what it guards, so a friendship ended meanwhile cannot
    /// let it through. Oneself needs no read.
    static func isSelfOrFriend(_ user: UserID, of viewer: UserID, _ tx: PostgresTransaction) async throws -> Bool {
        let relationship = viewer == user ? Relationship.none : try await Self.relationship(viewer, user, tx)
        return Relationship.seesRecords(viewer, of: user) { relationship }
    }

    /// Throws unless `me` and `them` may become friends without either passing
    /// ``FriendRules/maximumFriends``.
    private static func checkRoomForFriendship(_ me: UserID, _ them: UserID, _ tx: PostgresTransaction) async throws {
        let row = try await tx.one("""
            SELECT (SELECT count(*) FROM friendships WHERE requester = \(me.rawValue) AND status = 'accepted')
                 + (SELECT count(*) FROM friendships WHERE addressee = \(me.rawValue) AND status = 'accepted'),
                   (SELECT count(*) FROM friendships WHERE requester = \(them.rawValue) AND status = 'accepted')
                 + (SELECT count(*) FROM friendships WHERE addressee = \(them.rawValue) AND status = 'accepted')
            """)
        let (mine, theirs) = try row.decode((Int, Int).self)
        if !FriendRules.hasRoomForFriend(friends: mine) { throw FriendshipError.tooManyFriends(yours: true) }
        if !FriendRules.hasRoomForFriend(friends: theirs) { throw FriendshipError.tooManyFriends(yours: false) }
    }

    private static func existingUser(_ id: UserID, _ tx: PostgresTransaction) async throws -> UserSummary? {
        try await tx.first("SELECT id, username, display_name FROM users WHERE id = \(id.rawValue)").map(Self.friendSummary)
    }

    /// A user's id, username and display name, the first three columns of `row`.
    private static func friendSummary(_ row: PostgresRow) throws -> UserSummary {
        let (id, username, displayName) = try row.decode((Int64, String, String).self)
        return UserSummary(id: UserID(id), username: username, displayName: displayName)
    }

    /// Sends a friend request to a canonical username; accepts theirs if they asked first.
    public func requestFriend(from me: UserID, to username: String) async throws -> FriendRequestOutcome {
        let now = self.now().timeIntervalSince1970
        return try await self.transaction { tx in
            guard let them = try await tx.first("SELECT id, username, display_name FROM users WHERE username = \(username)")
                .map(Self.friendSummary)
            else { throw FriendshipError.noSuchUser }
            // Their id is known only now; the two locks are taken together, in id order.
            try await tx.lock(me, them.id)
            switch FriendRules.request(from: me, to: them.id, relationship: try await Self.relationship(me, them.id, tx)) {
            case .refuseSelf:
                throw FriendshipError.cannotBefriendSelf
            case .hide:
                throw FriendshipError.noSuchUser
            case .alreadyDone(.friends):
                return .alreadyFriends(them)
            case .alreadyDone:
                return .alreadyRequested(them)
            case .acceptTheirs:
                try await Self.checkRoomForFriendship(me, them.id, tx)
                try await tx.run("""
                    UPDATE friendships SET status = 'accepted', accepted_at = \(now)
                    WHERE requester = \(them.id.rawValue) AND addressee = \(me.rawValue)
                    """)
                return .accepted(them)
            case .create:
                // Checked when it is sent, as well as when it is accepted: a request the sender
                // could never see accepted is refused at once.
                try await Self.checkRoomForFriendship(me, them.id, tx)
                let pending = try await tx.one("SELECT count(*) FROM friendships WHERE requester = \(me.rawValue) AND status = 'pending'")
                if try !FriendRules.mayAsk(pending: pending.decode(Int.self)) {
                    throw FriendshipError.tooManyPendingRequests
                }
                try await tx.run("""
                    INSERT INTO friendships (requester, addressee, status, created_at) VALUES (\(me.rawValue), \(them.id.rawValue), 'pending', \(now))
                    """)
                return .requested(them)
            }
        }
    }

    /// Accepts or declines the pending request `them` sent to `me`.
    public func answerRequest(of me: UserID, from them: UserID, accept: Bool) async throws -> UserSummary {
        let now = self.now().timeIntervalSince1970
        return try await self.transaction(locking: [me, them]) { tx in
            guard try await Self.relationship(me, them, tx) == .requestReceived, let user = try await Self.existingUser(them, tx) else {
                throw FriendshipError.noPendingRequest
            }
            if accept {
                try await Self.checkRoomForFriendship(me, them, tx)
                try await tx.run("""
                    UPDATE friendships SET status = 'accepted', accepted_at = \(now) WHERE requester = \(them.rawValue) AND addressee = \(me.rawValue)
                    """)
            } else {
                try await tx.run("DELETE FROM friendships WHERE requester = \(them.rawValue) AND addressee = \(me.rawValue)")
            }
            return user
        }
    }

    /// Withdraws the pending request `me` sent to `them`.
    public func cancelRequest(of me: UserID, to them: UserID) async throws {
        try await self.transaction(locking: [me, them]) { tx in
            let deleted = try await tx.count("""
                DELETE FROM friendships WHERE requester = \(me.rawValue) AND addressee = \(them.rawValue) AND status = 'pending' RETURNING 1
                """)
            guard deleted == 1 else { throw FriendshipError.noPendingRequest }
        }
    }

    /// Ends a friendship, and the sharing overrides either side had for the other.
    public func removeFriend(of me: UserID, _ them: UserID) async throws {
        try await self.transaction(locking: [me, them]) { tx in
            guard try await Self.relationship(me, them, tx) == .friends else { throw FriendshipError.notFriends }
            try await tx.run("""
                WITH friendship AS (
                    DELETE FROM friendships WHERE (requester = \(me.rawValue) AND addressee = \(them.rawValue))
                                               OR (requester = \(them.rawValue) AND addressee = \(me.rawValue))
                )
                DELETE FROM sharing_overrides WHERE (user_id = \(me.rawValue) AND friend_id = \(them.rawValue))
                                                 OR (user_id = \(them.rawValue) AND friend_id = \(me.rawValue))
                """)
        }
    }

    /// Blocks a user: any friendship or request between the two ends, and each is hidden from the
    /// other everywhere. Blocking twice is harmless.
    public func block(of me: UserID, _ them: UserID) async throws -> UserSummary {
        let now = self.now().timeIntervalSince1970
        return try await self.transaction(locking: [me, them]) { tx in
            guard me != them, let user = try await Self.existingUser(them, tx) else { throw FriendshipError.noSuchUser }
            // One statement: the friendship or request, both sides' overrides and follows go, the block comes.
            try await tx.run("""
                WITH friendship AS (
                    DELETE FROM friendships WHERE (requester = \(me.rawValue) AND addressee = \(them.rawValue))
                                               OR (requester = \(them.rawValue) AND addressee = \(me.rawValue))
                ), overrides AS (
                    DELETE FROM sharing_overrides WHERE (user_id = \(me.rawValue) AND friend_id = \(them.rawValue))
                                                     OR (user_id = \(them.rawValue) AND friend_id = \(me.rawValue))
                ), follows AS (
                    DELETE FROM user_follows WHERE (follower_id = \(me.rawValue) AND followee_id = \(them.rawValue))
                                                OR (follower_id = \(them.rawValue) AND followee_id = \(me.rawValue))
                )
                INSERT INTO blocks (blocker, blocked, created_at) VALUES (\(me.rawValue), \(them.rawValue), \(now))
                ON CONFLICT (blocker, blocked) DO NOTHING
                """)
            return user
        }
    }

    public func unblock(of me: UserID, _ them: UserID) async throws {
        try await self.transaction(locking: [me, them]) { tx in
            let deleted = try await tx.count("DELETE FROM blocks WHERE blocker = \(me.rawValue) AND blocked = \(them.rawValue) RETURNING 1")
            guard deleted == 1 else { throw FriendshipError.notBlocked }
        }
    }

    /// A page of `limit` accepted friends by display name (``NamePosition``), after `after`.
    /// `lastSeen` respects each friend's sharing towards `me`. A page sorts every friend (at most
    /// ``FriendRules/maximumFriends``): no index orders another person's names.
    ///
    /// SQLite's `NOCASE` is `lower()` here: on the `COLLATE "C"` column it folds ASCII letters
    /// alone, as `NOCASE` does; the name given is folded under `"C"` too, not under the
    /// database's locale. The first page starts after ('', ''), before every username.
    public func friends(of me: UserID, limit: Int = FriendRules.maximumFriends, after: NamePosition? = nil) async throws -> [FriendListing] {
        let now = self.now()
        let name = after?.displayName ?? "", username = after?.username ?? ""
        let rows = try await self.single { tx in
            try await tx.rows("""
                SELECT u.id, u.username, u.display_name, u.ghost, u.ghost_until, u.precision, u.last_seen_at, f.accepted_at,
                       o.precision, o.hidden
                FROM friendships f
                JOIN users u ON u.id = CASE WHEN f.requester = \(me.rawValue) THEN f.addressee ELSE f.requester END
                LEFT JOIN sharing_overrides o ON o.user_id = u.id AND o.friend_id = \(me.rawValue)
                WHERE (f.requester = \(me.rawValue) OR f.addressee = \(me.rawValue)) AND f.status = 'accepted'
                  AND (lower(u.display_name), u.username) > (lower(\(name) COLLATE "C"), \(username))
                ORDER BY lower(u.display_name), u.username LIMIT \(limit)
                """)
        }
        return try rows.map { row in
            let (id, username, displayName, ghost, ghostUntil, precision, lastSeen, acceptedAt, overridePrecision, overrideHidden) =
                try row.decode((Int64, String, String, String, Double?, String, Double?, Double?, String?, Bool?).self)
            let ghostMode: GhostMode = switch ghost {
            case "on": .on
            case "until": .until(Date(timeIntervalSince1970: ghostUntil ?? 0))
            default: .off
            }
            let towardsMe = overrideHidden.map {
                [me: SharingOverride(precision: overridePrecision.flatMap(Precision.init(rawValue:)), hidden: $0)]
            } ?? [:]
            let sharing = SharingSettings(ghost: ghostMode, precision: Precision(rawValue: precision) ?? .exact, overrides: towardsMe)
            let visible = sharing.visibility(to: me, at: now) != nil
            return FriendListing(user: UserSummary(id: UserID(id), username: username, displayName: displayName),
                                 since: Date(timeIntervalSince1970: acceptedAt ?? 0),
                                 lastSeen: visible ? lastSeen.map(Date.init(timeIntervalSince1970:)) : nil)
        }
    }

    /// Pending requests to and from `me`, newest first: a page of `limit` incoming requests (after
    /// `after`), a range of the index by recipient and time however many there are; every outgoing
    /// one (at most ``FriendRules/maximumPendingRequests``). Both lists in one statement (one
    /// snapshot), told apart by `kind`.
    public func friendRequests(of me: UserID, limit: Int, after: ListPosition?)
        async throws -> (incoming: [FriendRequestListing], outgoing: [FriendRequestListing]) {
        let at = after?.at ?? Double.infinity, user = after?.user.rawValue ?? Int64.max
        let rows = try await self.single { tx in
            try await tx.rows("""
                (SELECT 0 AS kind, u.id, u.username, u.display_name, f.created_at FROM friendships f JOIN users u ON u.id = f.requester
                 WHERE f.addressee = \(me.rawValue) AND f.status = 'pending' AND (f.created_at, f.requester) < (\(at), \(user))
                 ORDER BY f.created_at DESC, f.requester DESC LIMIT \(limit))
                UNION ALL
                (SELECT 1 AS kind, u.id, u.username, u.display_name, f.created_at FROM friendships f JOIN users u ON u.id = f.addressee
                 WHERE f.requester = \(me.rawValue) AND f.status = 'pending')
                ORDER BY kind, created_at DESC, id DESC
                """)
        }
        var incoming: [FriendRequestListing] = [], outgoing: [FriendRequestListing] = []
        for row in rows {
            let (kind, id, username, displayName, sentAt) = try row.decode((Int, Int64, String, String, Double).self)
            let listing = FriendRequestListing(user: UserSummary(id: UserID(id), username: username, displayName: displayName),
                                               sentAt: Date(timeIntervalSince1970: sentAt), position: ListPosition(at: sentAt, user: UserID(id)))
            if kind == 0 { incoming.append(listing) } else { outgoing.append(listing) }
        }
        return (incoming, outgoing)
    }

    /// A page of `limit` users `me` has blocked, newest first, after `after`: a range of the index
    /// by blocker and time, however many they have blocked.
    public func blocks(of me: UserID, limit: Int, after: ListPosition?) async throws -> [BlockListing] {
        let at = after?.at ?? Double.infinity, user = after?.user.rawValue ?? Int64.max
        let rows = try await self.single { tx in
            try await tx.rows("""
                SELECT u.id, u.username, u.display_name, b.created_at FROM blocks b JOIN users u ON u.id = b.blocked
                WHERE b.blocker = \(me.rawValue) AND (b.created_at, b.blocked) < (\(at), \(user))
                ORDER BY b.created_at DESC, b.blocked DESC LIMIT \(limit)
                """)
        }
        return try rows.map { row in
            let (id, username, displayName, createdAt) = try row.decode((Int64, String, String, Double).self)
            return BlockListing(user: UserSummary(id: UserID(id), username: username, displayName: displayName),
                                position: ListPosition(at: createdAt, user: UserID(id)))
        }
    }

    /// Sets (or with `nil` clears) what `me` shows one friend.
    public func setSharingOverride(of me: UserID, for friend: UserID, _ override: SharingOverride?) async throws {
        try await self.transaction(locking: [me, friend]) { tx in
            guard try await Self.relationship(me, friend, tx) == .friends else { throw FriendshipError.notFriends }
            if let override {
                try await tx.run("""
                    INSERT INTO sharing_overrides (user_id, friend_id, precision, hidden)
                    VALUES (\(me.rawValue), \(friend.rawValue), \(override.precision?.rawValue), \(override.hidden))
                    ON CONFLICT (user_id, friend_id) DO UPDATE SET precision = excluded.precision, hidden = excluded.hidden
                    """)
            } else {
                try await tx.run("DELETE FROM sharing_overrides WHERE user_id = \(me.rawValue) AND friend_id = \(friend.rawValue)")
            }
        }
    }
}
