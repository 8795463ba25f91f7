import CoasterCore
import Foundation
import GRDB

extension SpatiaLiteStore {
    /// Writes users, their latest positions, visits, sessions and friendships straight into the
    /// store, in transactions of `chunk` users: for loading a generated world or an export, not for
    /// serving requests (no validation beyond the schema's).
    public func bulkLoad(users: [BulkUser], friendships: [(UserID, UserID)], chunk: Int,
                         progress: (@Sendable (String) -> Void)? = nil) async throws {
        let now = self.now().timeIntervalSince1970
        try await self.writeInChunks(users, of: chunk, "users", progress: progress) { db, slice in
            let user = try db.cachedStatement(sql: """
                INSERT INTO users (id, username, display_name, password_hash, role, created_at) VALUES (?, ?, ?, ?, 'member', ?)
                """)
            let state = try db.cachedStatement(sql: """
                INSERT INTO track_state (user_id, lat, lon, accuracy, recorded_at, parks, zones) VALUES (?, ?, ?, ?, ?, ?, ?)
                """)
            let visit = try db.cachedStatement(sql: """
                INSERT INTO visits (user_id, park_id, how, entered_at, last_evidence_at) VALUES (?, ?, 'automatic', ?, ?)
                """)
            let session = try db.cachedStatement(sql: "INSERT INTO sessions (token_hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)")
            for u in slice {
                try user.execute(arguments: [u.id.rawValue, u.username, u.displayName, u.passwordHash, now])
                if let fix = u.latest {
                    try state.execute(arguments: [u.id.rawValue, fix.position.lat, fix.position.lon, fix.accuracy, fix.recordedAt.timeIntervalSince1970,
                                                  u.visits.map(\.0.rawValue).sorted().joined(separator: "\n"),
                                                  u.zones.map(\.rawValue).sorted().joined(separator: "\n")])
                }
                for (park, at) in u.visits {
                    try visit.execute(arguments: [u.id.rawValue, park.rawValue, at.timeIntervalSince1970, at.timeIntervalSince1970])
                }
                if let hash = u.tokenHash {
                    try session.execute(arguments: [hash, u.id.rawValue, now, now + 30 * 24 * 3600])
                }
            }
        }
        try await self.writeInChunks(friendships, of: chunk * 10, "friendships", progress: progress) { db, slice in
            let insert = try db.cachedStatement(sql: """
                INSERT OR IGNORE INTO friendships (requester, addressee, status, created_at, accepted_at) VALUES (?, ?, 'accepted', ?, ?)
                """)
            for (a, b) in slice { try insert.execute(arguments: [a.rawValue, b.rawValue, now, now]) }
        }
    }

    /// Writes `items` in transactions of `chunk`, each by `write`, reporting "`what` n/total"
    /// after each.
    private func writeInChunks<Item: Sendable>(_ items: [Item], of chunk: Int, _ what: String, progress: (@Sendable (String) -> Void)?,
                                               _ write: @escaping @Sendable (Database, ArraySlice<Item>) throws -> Void) async throws {
        for start in stride(from: 0, to: items.count, by: chunk) {
            let end = min(start + chunk, items.count)
            let slice = items[start..<end]
            try await self.pool.write { db in try write(db, slice) }
            progress?("\(what) \(end)/\(items.count)")
        }
    }
}

extension SpatiaLiteStore {
    /// Writes ride logs and counts them on the leaderboards by the ride log's own rule
    /// (``tally(user:ride:at:_:)``), in transactions of `chunk` rides; each user's rides in the
    /// order they were ridden (a coaster's first ride of a period is a credit). Badges are not
    /// awarded, nor visits or cooldowns checked: for loading a generated world or an export.
    public func bulkLogRides(_ rides: [BulkRide], chunk: Int, progress: (@Sendable (String) -> Void)? = nil) async throws {
        try await self.writeInChunks(rides, of: chunk, "ride logs", progress: progress) { db, slice in
            let insert = try db.cachedStatement(sql: "INSERT INTO ride_logs (user_id, ride_id, ridden_at) VALUES (?, ?, ?)")
            for r in slice {
                try Self.tally(user: r.user, ride: r.ride, at: r.at, db)
                try insert.execute(arguments: [r.user.rawValue, r.ride.id.rawValue, r.at.timeIntervalSince1970])
            }
            try Self.markTalliesSettled(db)
        }
    }
}

extension SpatiaLiteStore {
    /// Writes messages in the order given (their ids follow it), in transactions of `chunk`
    /// messages. Friendships are not checked, nor anyone told: for loading a generated world or
    /// an export.
    public func bulkSendMessages(_ messages: [BulkMessage], chunk: Int, progress: (@Sendable (String) -> Void)? = nil) async throws {
        try await self.writeInChunks(messages, of: chunk, "messages", progress: progress) { db, slice in
            let insert = try db.cachedStatement(sql: "INSERT INTO messages (sender, recipient, body, sent_at, read_at) VALUES (?, ?, ?, ?, ?)")
            for m in slice {
                try insert.execute(arguments: [m.sender.rawValue, m.recipient.rawValue, m.body, m.sentAt.timeIntervalSince1970,
                                               m.readAt?.timeIntervalSince1970])
            }
        }
    }
}
