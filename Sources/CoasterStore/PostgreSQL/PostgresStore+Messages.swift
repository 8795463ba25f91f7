import CoasterCore
import Foundation
import PostgresNIO

extension PostgresStore: MessageStore {
    /// Sends a message to a friend (never to anyone else: blocking ends the friendship).
    ///
    /// Both users' locks: the friendship is read, then the message written, and every change of a
    /// friendship takes the same two locks (``FriendStore``), so none ends in between.
    public func sendMessage(from sender: UserID, to recipient: UserID, body: String) async throws -> Message {
        let now = self.now()
        return try await self.transaction(locking: [sender, recipient]) { tx in
            guard try await Self.relationship(sender, recipient, tx) == .friends else { throw FriendshipError.notFriends }
            let id = try await tx.one("""
                INSERT INTO messages (sender, recipient, body, sent_at)
                VALUES (\(sender.rawValue), \(recipient.rawValue), \(body), \(now.timeIntervalSince1970)) RETURNING id
                """).decode(Int64.self)
            return Message(id: id, sender: sender, recipient: recipient, body: body, sentAt: now, readAt: nil)
        }
    }

    /// The user's conversations with people they have not blocked and who have not blocked them,
    /// newest first, with the last message and the unread count: one row a conversation, kept by
    /// triggers (``PostgresSchema``: `conversations_on_insert`, `_on_read`, `_on_delete`), not the
    /// user's history. `before` pages by the last message's id (each conversation of a user has
    /// its own); a page costs its length, however many conversations there are.
    public func conversations(of me: UserID, limit: Int, before: Int64?) async throws -> [Conversation] {
        let before = before ?? Int64.max
        let rows = try await self.single { tx in
            try await tx.rows("""
                SELECT m.id, m.sender, m.recipient, m.body, m.sent_at, m.read_at, u.id, u.username, u.display_name, c.unread
                FROM conversations c
                JOIN messages m ON m.id = c.last_id
                JOIN users u ON u.id = c.other_id
                WHERE c.user_id = \(me.rawValue) AND c.last_id < \(before)
                  AND c.other_id NOT IN (SELECT blocked FROM blocks WHERE blocker = \(me.rawValue)
                                         UNION SELECT blocker FROM blocks WHERE blocked = \(me.rawValue))
                ORDER BY c.last_id DESC LIMIT \(limit)
                """)
        }
        return try rows.map { row in
            let (id, sender, recipient, body, sentAt, readAt, otherID, username, displayName, unread) =
                try row.decode((Int64, Int64, Int64, String, Double, Double?, Int64, String, String, Int).self)
            return Conversation(with: UserSummary(id: UserID(otherID), username: username, displayName: displayName),
                                last: Self.message(id, sender, recipient, body, sentAt, readAt), unread: unread)
        }
    }

    /// One conversation, newest first; `before` pages by message id: the two directions, each
    /// newest first on the pair index with a `LIMIT` of its own (the planner does not stop a range
    /// of a bare `UNION ALL` early), merged until the page is full (the second direction is the
    /// first when the two are one person). A page costs its length, however long the
    /// conversation. `nil` when `other` has blocked `me` (read in the same snapshot as the page).
    public func messages(of me: UserID, with other: UserID, limit: Int, before: Int64?) async throws -> [Message]? {
        let before = before ?? Int64.max
        return try await self.read { tx in
            if try await Self.relationship(me, other, tx) == .blockedBy { return nil }
            return try await tx.rows("""
                (SELECT id, sender, recipient, body, sent_at, read_at FROM messages
                 WHERE sender = \(me.rawValue) AND recipient = \(other.rawValue) AND id < \(before) ORDER BY id DESC LIMIT \(limit))
                UNION ALL
                (SELECT id, sender, recipient, body, sent_at, read_at FROM messages
                 WHERE sender = \(other.rawValue) AND recipient = \(me.rawValue) AND id < \(before) AND \(me.rawValue) <> \(other.rawValue)
                 ORDER BY id DESC LIMIT \(limit))
                ORDER BY id DESC LIMIT \(limit)
                """).map { row in
                let (id, sender, recipient, body, sentAt, readAt) = try row.decode((Int64, Int64, Int64, String, Double, Double?).self)
                return Self.message(id, sender, recipient, body, sentAt, readAt)
            }
        }
    }

    /// Marks every message from `other` to `me` read. Returns how many were unread (the rows the
    /// update changed; the `conversations_on_read` trigger takes them off the unread count).
    @discardableResult
    public func markRead(of me: UserID, from other: UserID) async throws -> Int {
        let now = self.now().timeIntervalSince1970
        return try await self.transaction { tx in
            try await tx.count("""
                UPDATE messages SET read_at = \(now) WHERE recipient = \(me.rawValue) AND read_at IS NULL AND sender = \(other.rawValue) RETURNING 1
                """)
        }
    }

    private static func message(_ id: Int64, _ sender: Int64, _ recipient: Int64, _ body: String, _ sentAt: Double, _ readAt: Double?) -> Message {
        Message(id: id, sender: UserID(sender), recipient: UserID(recipient), body: body, sentAt: Date(timeIntervalSince1970: sentAt),
                readAt: readAt.map(Date.init(timeIntervalSince1970:)))
    }
}
