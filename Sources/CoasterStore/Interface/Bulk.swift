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
}
