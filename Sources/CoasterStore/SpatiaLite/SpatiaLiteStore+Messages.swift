import CoasterCore
import Foundation
import GRDB

extension SpatiaLiteStore {
    /// Sends a message to a friend (never to anyone else: blocking ends the friendship).
    public func sendMessage(from sender: UserID, to recipient: UserID, body: String) async throws -> Message {
        let now = self.now()
        return try await self.pool.write { db in
            guard try Self.relationship(sender, recipient, db) == .friends else { throw FriendshipError.notFriends }
            try db.execute(sql: "INSERT INTO messages (sender, recipient, body, sent_at) VALUES (?, ?, ?, ?)",
                           arguments: [sender.rawValue, recipient.rawValue, body, now.timeIntervalSince1970])
            return Message(id: db.lastInsertedRowID, sender: sender, recipient: recipient, body: body, sentAt: now, readAt: nil)
        }
    }

    /// The user's conversations with people they have not blocked and who have not blocked them,
    /// newest first, with the last message and the unread count: one row a conversation, kept by
    /// triggers (migration "2026-11-24 conversations kept by triggers"), not the user's history.
    /// `before` pages by the last message's id (each conversation of a user has its own); a page
    /// costs its length, however many conversations there are.
    public func conversations(of me: UserID, limit: Int, before: Int64?) async throws -> [Conversation] {
        let arguments: StatementArguments = ["me": me.rawValue, "before": before ?? Int64.max, "limit": limit]
        return try await self.pool.read { db in
            try Row.fetchAll(try db.cachedStatement(sql: Self.conversationList), arguments: arguments).map { row in
                Conversation(with: UserSummary(id: UserID(row["other_id"] as Int64), username: row["username"], displayName: row["display_name"]),
                             last: Self.message(row), unread: row["unread"])
            }
        }
    }

    /// One conversation, newest first; `before` pages by message id. A page costs its length,
    /// however long the conversation (``conversationPage``). `nil` when `other` has blocked `me`
    /// (read in the same transaction as the page).
    public func messages(of me: UserID, with other: UserID, limit: Int, before: Int64?) async throws -> [Message]? {
        try await self.pool.read { db in
            if try Self.relationship(me, other, db) == .blockedBy { return nil }
            let arguments: StatementArguments = ["me": me.rawValue, "other": other.rawValue, "before": before ?? Int64.max, "limit": limit]
            return try Row.fetchAll(try db.cachedStatement(sql: Self.conversationPage), arguments: arguments).map(Self.message)
        }
    }

    /// Marks every message from `other` to `me` read. Returns how many were unread.
    @discardableResult
    public func markRead(of me: UserID, from other: UserID) async throws -> Int {
        let now = self.now().timeIntervalSince1970
        return try await self.pool.write { db in
            try db.cachedStatement(sql: Self.markRead).execute(arguments: ["now": now, "me": me.rawValue, "other": other.rawValue])
            return db.changesCount
        }
    }

    /// A page of the viewer's conversations (``conversations(of:limit:before:)``), newest first
    /// on the index by last message.
    static let conversationList = """
        SELECT m.*, u.id AS other_id, u.username, u.display_name, c.unread
        FROM conversations c
        JOIN messages m ON m.id = c.last_id
        JOIN users u ON u.id = c.other_id
        WHERE c.user_id = :me AND c.last_id < :before AND c.other_id NOT IN (\(SpatiaLiteStore.blockedEitherWay))
        ORDER BY c.last_id DESC LIMIT :limit
        """

    /// A page of one conversation (``messages(of:with:limit:before:)``): the two directions, each
    /// newest first on the pair index, merged until the page is full. The second direction is the
    /// first when the two are one person.
    static let conversationPage = """
        SELECT * FROM messages WHERE sender = :me AND recipient = :other AND id < :before
        UNION ALL
        SELECT * FROM messages WHERE sender = :other AND recipient = :me AND id < :before AND :me != :other
        ORDER BY id DESC LIMIT :limit
        """

    /// Every unread message from `:other` to `:me` marked read (``markRead(of:from:)``).
    static let markRead = "UPDATE messages SET read_at = :now WHERE recipient = :me AND read_at IS NULL AND sender = :other"

    static func message(_ row: Row) -> Message {
        Message(id: row["id"], sender: UserID(row["sender"] as Int64), recipient: UserID(row["recipient"] as Int64), body: row["body"],
                sentAt: Date(timeIntervalSince1970: row["sent_at"]), readAt: (row["read_at"] as Double?).map(Date.init(timeIntervalSince1970:)))
    }
}
