import CoasterCore
import Foundation

/// Direct messages between friends.
public protocol MessageStore: Sendable {
    /// Sends a message to a friend (never to anyone else: blocking ends the friendship).
    func sendMessage(from sender: UserID, to recipient: UserID, body: String) async throws -> Message

    /// The user's conversations with people they have not blocked and who have not blocked them,
    /// newest first, with the last message and the unread count: one row a conversation, kept by
    /// triggers (migration "2026-11-24 conversations kept by triggers"), not the user's history.
    /// `before` pages by the last message's id (each conversation of a user has its own); a page
    /// costs its length, however many conversations there are.
    func conversations(of me: UserID, limit: Int, before: Int64?) async throws -> [Conversation]

    /// One conversation, newest first; `before` pages by message id. A page costs its length,
    /// however long the conversation (``conversationPage``). `nil` when `other` has blocked `me`
    /// (read in the same transaction as the page).
    func messages(of me: UserID, with other: UserID, limit: Int, before: Int64?) async throws -> [Message]?

    /// Marks every message from `other` to `me` read. Returns how many were unread.
    @discardableResult
    func markRead(of me: UserID, from other: UserID) async throws -> Int
}
