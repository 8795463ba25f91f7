import Foundation

public struct Message: Hashable, Sendable {
    public var id: Int64
    public var sender: UserID
    public var recipient: UserID
    public var body: String
    public var sentAt: Date
    public var readAt: Date?

    public init(id: Int64, sender: UserID, recipient: UserID, body: String, sentAt: Date, readAt: Date?) {
        self.id = id
        self.sender = sender
        self.recipient = recipient
        self.body = body
        self.sentAt = sentAt
        self.readAt = readAt
    }
}

public struct Conversation: Hashable, Sendable {
    public var with: UserSummary
    public var last: Message
    public var unread: Int

    public init(with: UserSummary, last: Message, unread: Int) {
        self.with = with
        self.last = last
        self.unread = unread
    }
}
