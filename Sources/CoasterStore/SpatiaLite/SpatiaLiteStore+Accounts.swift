import CoasterCore
import Foundation
import GRDB

extension SpatiaLiteStore {
    /// Creates an account. `username` must already be canonical (``AccountRules/username(_:)``).
    public func createUser(username: String, displayName: String, passwordHash: String, role: Role) async throws -> UserProfile {
        let now = self.now()
        return try await self.pool.write { db in
            guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM users WHERE username = ?)", arguments: [username]) == false else {
                throw AccountError.usernameTaken(username)
            }
            try db.execute(
                sql: "INSERT INTO users (username, display_name, password_hash, role, created_at) VALUES (?, ?, ?, ?, ?)",
                arguments: [username, displayName, passwordHash, role.rawValue, now.timeIntervalSince1970])
            return try Self.profile(UserID(db.lastInsertedRowID), db)!
        }
    }

    /// Sets a user's password and role (the `user create` command on an existing name).
    public func resetUser(username: String, passwordHash: String, role: Role) async throws -> UserProfile {
        try await self.pool.write { db in
            try db.execute(sql: "UPDATE users SET password_hash = ?, role = ? WHERE username = ?",
                           arguments: [passwordHash, role.rawValue, username])
            guard db.changesCount == 1, let id = try Int64.fetchOne(db, sql: "SELECT id FROM users WHERE username = ?", arguments: [username])
            else { throw AccountError.noSuchUser }
            // A new password (or role) ends every session of the old one, in every process.
            try db.execute(sql: "UPDATE sessions SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL",
                           arguments: [self.now().timeIntervalSince1970, id])
            try Self.announceRevocation(tokenHash: nil, user: UserID(id), at: self.now(), db)
            return try Self.profile(UserID(id), db)!
        }
    }

    /// The password hash of a canonical username, or `nil` if there is no such user.
    public func credentials(username: String) async throws -> Credentials? {
        try await self.pool.read { db in
            try Row.fetchOne(db, sql: "SELECT id, password_hash FROM users WHERE username = ?", arguments: [username]).map {
                Credentials(id: UserID($0["id"]), passwordHash: $0["password_hash"])
            }
        }
    }

    /// Stores a new session under the hash of its token.
    public func createSession(user: UserID, tokenHash: Data, expiresAt: Date) async throws {
        let now = self.now().timeIntervalSince1970
        try await self.pool.write { db in
            try db.execute(
                sql: "INSERT INTO sessions (token_hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)",
                arguments: [tokenHash, user.rawValue, now, expiresAt.timeIntervalSince1970])
            try db.execute(sql: "UPDATE users SET last_seen_at = ? WHERE id = ?", arguments: [now, user.rawValue])
        }
    }

    /// The user of a live session (not revoked, not expired), noting that they were seen now.
    public func useSession(tokenHash: Data) async throws -> SessionUser? {
        try await self.useSessions(tokenHashes: [tokenHash])[tokenHash]
    }

    /// The users of those of these sessions that are live, by token hash, each noted as seen now:
    /// one transaction for all of them (a server rechecks its cached sessions in batches).
    public func useSessions(tokenHashes: [Data]) async throws -> [Data: SessionUser] {
        let now = self.now().timeIntervalSince1970
        return try await self.pool.write { db in
            let find = try db.cachedStatement(sql: """
                SELECT u.id, u.username, u.role, s.expires_at FROM sessions s JOIN users u ON u.id = s.user_id
                WHERE s.token_hash = ? AND s.revoked_at IS NULL AND s.expires_at > ?
                """)
            let seen = try db.cachedStatement(sql: "UPDATE users SET last_seen_at = ? WHERE id = ?")
            var users: [Data: SessionUser] = [:]
            for hash in Set(tokenHashes) {
                guard let row = try Row.fetchOne(find, arguments: [hash, now]) else { continue }
                try seen.execute(arguments: [now, row["id"] as Int64])
                users[hash] = SessionUser(id: UserID(row["id"]), username: row["username"], role: Role(rawValue: row["role"]) ?? .member,
                                          expiresAt: Date(timeIntervalSince1970: row["expires_at"]))
            }
            return users
        }
    }

    /// Ends a session. Returns whether a live session was revoked.
    @discardableResult
    public func revokeSession(tokenHash: Data) async throws -> Bool {
        let now = self.now()
        return try await self.pool.write { db in
            guard let user = try Int64.fetchOne(db, sql: "SELECT user_id FROM sessions WHERE token_hash = ? AND revoked_at IS NULL",
                                                arguments: [tokenHash])
            else { return false }
            try db.execute(sql: "UPDATE sessions SET revoked_at = ? WHERE token_hash = ? AND revoked_at IS NULL",
                           arguments: [now.timeIntervalSince1970, tokenHash])
            try Self.announceRevocation(tokenHash: tokenHash, user: UserID(user), at: now, db)
            return true
        }
    }

    /// Writes a revocation where every serving process reads it (``revocations(after:limit:)``): one
    /// session's, or with no token every session and cached credential of `user`.
    static func announceRevocation(tokenHash: Data?, user: UserID, at: Date, _ db: Database) throws {
        try db.execute(sql: "INSERT INTO session_revocations (token_hash, user_id, at) VALUES (?, ?, ?)",
                       arguments: [tokenHash, user.rawValue, at.timeIntervalSince1970])
    }

    /// Revocations written after `seq`, oldest first, at most `limit`; with the last sequence
    /// number read. Rows older than `keep` seconds are deleted by ``pruneRevocations(olderThan:)``.
    public func revocations(after seq: Int64, limit: Int) async throws -> [Revocation] {
        try await self.pool.read { db in
            try Row.fetchAll(db.cachedStatement(sql: "SELECT seq, token_hash, user_id FROM session_revocations WHERE seq > ? ORDER BY seq LIMIT ?"),
                             arguments: [seq, limit]).map {
                Revocation(seq: $0["seq"], tokenHash: $0["token_hash"], user: UserID($0["user_id"] as Int64))
            }
        }
    }

    /// The newest revocation's sequence number (0 for none): where a starting process begins to read.
    public func lastRevocation() async throws -> Int64 {
        try await self.pool.read { db in try Int64.fetchOne(db, sql: "SELECT coalesce(max(seq), 0) FROM session_revocations") ?? 0 }
    }

    /// Forgets revocations older than `age` seconds: every process has read them by then, and a
    /// revoked session stays revoked in `sessions` itself.
    public func pruneRevocations(olderThan age: TimeInterval) async throws {
        let cutoff = self.now().timeIntervalSince1970 - age
        try await self.pool.write { db in
            try db.execute(sql: "DELETE FROM session_revocations WHERE at < ?", arguments: [cutoff])
        }
    }

    /// A named 32-byte secret of this database, the same for every process serving it.
    public func secret(_ name: String) async throws -> Data {
        try await self.pool.write { db in
            if let value = try Data.fetchOne(db, sql: "SELECT value FROM secrets WHERE name = ?", arguments: [name]) { return value }
            try db.execute(sql: "INSERT INTO secrets (name, value) VALUES (?, randomblob(32))", arguments: [name])
            return try Data.fetchOne(db, sql: "SELECT value FROM secrets WHERE name = ?", arguments: [name])!
        }
    }

    /// A user's own profile and sharing settings.
    public func profile(_ id: UserID) async throws -> UserProfile? {
        try await self.pool.read { db in try Self.profile(id, db) }
    }

    /// Applies profile changes and returns the result.
    public func updateProfile(_ id: UserID, _ changes: ProfileChanges) async throws -> UserProfile {
        try await self.pool.write { db in
            var assignments: [String] = []
            var arguments: StatementArguments = []
            if let name = changes.displayName {
                assignments.append("display_name = ?")
                _ = arguments.append(contentsOf: [name])
            }
            if let bio = changes.bio {
                assignments.append("bio = ?")
                _ = arguments.append(contentsOf: [bio])
            }
            if let ghost = changes.ghost {
                assignments.append("ghost = ?, ghost_until = ?")
                let columns = GhostColumns.columns(ghost)
                _ = arguments.append(contentsOf: [columns.ghost, columns.until])
            }
            if let precision = changes.precision {
                assignments.append("precision = ?")
                _ = arguments.append(contentsOf: [precision.rawValue])
            }
            if let discoverable = changes.discoverable {
                assignments.append("discoverable = ?")
                _ = arguments.append(contentsOf: [discoverable])
            }
            if !assignments.isEmpty {
                _ = arguments.append(contentsOf: [id.rawValue])
                try db.execute(sql: "UPDATE users SET \(assignments.joined(separator: ", ")) WHERE id = ?", arguments: arguments)
            }
            guard try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM users WHERE id = ?)"), arguments: [id.rawValue]) == true
            else { throw AccountError.noSuchUser }
            try Self.applyPeopleChanges(id, changes, db)
            guard let profile = try Self.profile(id, db) else { throw AccountError.noSuchUser }
            return profile
        }
    }

    /// The user with this canonical username, if any.
    public func user(named username: String) async throws -> UserSummary? {
        try await self.pool.read { db in
            try Row.fetchOne(db, sql: "SELECT id, username, display_name FROM users WHERE username = ?", arguments: [username])
                .map(Self.summary)
        }
    }

    static func summary(_ row: Row) -> UserSummary {
        UserSummary(id: UserID(row["id"]), username: row["username"], displayName: row["display_name"])
    }

    static func profile(_ id: UserID, _ db: Database) throws -> UserProfile? {
        guard let row = try Row.fetchOne(db, sql: "SELECT * FROM users WHERE id = ?", arguments: [id.rawValue]) else { return nil }
        return UserProfile(
            id: id, username: row["username"], displayName: row["display_name"], bio: row["bio"],
            role: Role(rawValue: row["role"]) ?? .member, createdAt: Date(timeIntervalSince1970: row["created_at"]),
            sharing: try Self.sharing(row, db), discoverable: row["discoverable"], card: try Self.card(id, row, db), findable: row["findable"],
            follows: Self.followCounts(row))
    }

    /// Ghost mode from a users row's `ghost` and `ghost_until` columns.
    static func ghostMode(_ row: Row) -> GhostMode {
        GhostColumns.mode(row["ghost"], until: row["ghost_until"])
    }

    /// A user's sharing with every override they have set, read from `sharing_overrides`.
    static func sharing(_ user: Row, _ db: Database) throws -> SharingSettings {
        var overrides: [UserID: SharingOverride] = [:]
        let statement = try db.cachedStatement(sql: "SELECT friend_id, precision, hidden FROM sharing_overrides WHERE user_id = ?")
        for row in try Row.fetchAll(statement, arguments: [user["id"] as Int64]) {
            overrides[UserID(row["friend_id"])] = Self.override(row)
        }
        return Self.sharing(user, overrides: overrides)
    }

    /// A user's sharing from a users row's `ghost`, `ghost_until` and `precision` columns, with
    /// the overrides given.
    static func sharing(_ user: Row, overrides: [UserID: SharingOverride] = [:]) -> SharingSettings {
        SharingSettings(ghost: Self.ghostMode(user), precision: Precision(rawValue: user["precision"]) ?? .exact, overrides: overrides)
    }

    /// An override from a row's columns (a `sharing_overrides` row's `precision` and `hidden`,
    /// unless named otherwise).
    static func override(_ row: Row, precision: String = "precision", hidden: String = "hidden") -> SharingOverride {
        SharingOverride(precision: (row[precision] as String?).flatMap(Precision.init(rawValue:)), hidden: row[hidden])
    }
}
