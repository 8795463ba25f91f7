import CoasterCore
import Foundation
import PostgresNIO

/// Accounts, sessions and their revocations, profiles and the service's secrets.
///
/// Nodes learn of revoked sessions by polling ``revocations(after:limit:)`` by sequence number, so
/// revocations are written under one store-wide lock: they commit in `seq` order, and a node that
/// has read a number never passes a smaller one still to commit.
extension PostgresStore: AccountStore {
    /// Creates an account. `username` must already be canonical (``AccountRules/username(_:)``).
    ///
    /// One statement inserts the user only if the name is free (a taken name costs no id, as on
    /// SQLite); another node taking the name in between meets the unique index instead.
    public func createUser(username: String, displayName: String, passwordHash: String, role: Role) async throws -> UserProfile {
        let now = self.now().timeIntervalSince1970
        do {
            return try await self.single { tx in
                guard let row = try await tx.first("""
                    INSERT INTO users (username, display_name, password_hash, role, created_at)
                    SELECT \(username), \(displayName), \(passwordHash), \(role.rawValue), \(now)
                    WHERE NOT EXISTS (SELECT 1 FROM users WHERE username = \(username))
                    RETURNING \(unescaped: Self.profileColumns)
                    """) else { throw AccountError.usernameTaken(username) }
                // A new account has no sharing overrides.
                return try Self.profile(row, overrides: [:])
            }
        } catch let error as PSQLError where Self.sqlState(error) == "23505" && error.serverInfo?[.constraintName] == "users_username_key" {
            throw AccountError.usernameTaken(username)
        }
    }

    /// Sets a user's password and role (the `user create` command on an existing name).
    public func resetUser(username: String, passwordHash: String, role: Role) async throws -> UserProfile {
        try await self.transaction { tx in
            // A new password (or role) ends every session of the old one, in every process.
            guard let row = try await tx.first("""
                WITH reset AS (
                    UPDATE users SET password_hash = \(passwordHash), role = \(role.rawValue) WHERE username = \(username) RETURNING id
                ), ended AS (
                    UPDATE sessions SET revoked_at = \(self.now().timeIntervalSince1970)
                    WHERE user_id IN (SELECT id FROM reset) AND revoked_at IS NULL
                )
                SELECT id FROM reset
                """) else { throw AccountError.noSuchUser }
            let id = UserID(try row.decode(Int64.self))
            guard let profile = try await Self.profile(id, tx) else { throw AccountError.noSuchUser }
            try await Self.announceRevocation(tokenHash: nil, user: id, at: self.now(), tx)
            return profile
        }
    }

    /// The password hash of a canonical username, or `nil` if there is no such user.
    public func credentials(username: String) async throws -> Credentials? {
        try await self.single { tx in
            try await tx.first("SELECT id, password_hash FROM users WHERE username = \(username)").map { row in
                let (id, hash) = try row.decode((Int64, String).self)
                return Credentials(id: UserID(id), passwordHash: hash)
            }
        }
    }

    /// Stores a new session under the hash of its token, noting that its user was seen now.
    public func createSession(user: UserID, tokenHash: Data, expiresAt: Date) async throws {
        let now = self.now().timeIntervalSince1970
        try await self.single { tx in
            try await tx.run("""
                WITH created AS (
                    INSERT INTO sessions (token_hash, user_id, created_at, expires_at)
                    VALUES (\(tokenHash), \(user.rawValue), \(now), \(expiresAt.timeIntervalSince1970))
                )
                UPDATE users SET last_seen_at = \(now) WHERE id = \(user.rawValue)
                """)
        }
    }

    /// The user of a live session (not revoked, not expired), noting that they were seen now.
    public func useSession(tokenHash: Data) async throws -> SessionUser? {
        try await self.useSessions(tokenHashes: [tokenHash])[tokenHash]
    }

    /// The users of those of these sessions that are live, by token hash, each noted as seen now:
    /// one statement for all of them (a server rechecks its cached sessions in batches).
    public func useSessions(tokenHashes: [Data]) async throws -> [Data: SessionUser] {
        guard !tokenHashes.isEmpty else { return [:] }
        let statement = LiveSessions(tokenHashes: Set(tokenHashes).map { ByteBuffer(bytes: $0) }, now: self.now().timeIntervalSince1970)
        return try await self.single { tx in
            var users: [Data: SessionUser] = [:]
            for try await (hash, user) in try await tx.connection.execute(statement, logger: tx.logger) {
                users[hash] = user
            }
            return users
        }
    }

    /// Ends a session. Returns whether a live session was revoked.
    @discardableResult
    public func revokeSession(tokenHash: Data) async throws -> Bool {
        let now = self.now()
        return try await self.transaction { tx in
            guard let row = try await tx.first("""
                UPDATE sessions SET revoked_at = \(now.timeIntervalSince1970) WHERE token_hash = \(tokenHash) AND revoked_at IS NULL
                RETURNING user_id
                """) else { return false }
            try await Self.announceRevocation(tokenHash: tokenHash, user: UserID(try row.decode(Int64.self)), at: now, tx)
            return true
        }
    }

    /// Writes a revocation where every serving process reads it (``revocations(after:limit:)``): one
    /// session's, or with no token every session and cached credential of `user`. Its `seq` is
    /// drawn under the revocations lock, held until the transaction ends, so revocations commit in
    /// `seq` order. Call it last in the transaction: every other revocation waits meanwhile.
    static func announceRevocation(tokenHash: Data?, user: UserID, at: Date, _ tx: PostgresTransaction) async throws {
        try await tx.lock(.revocations)
        try await tx.run("""
            INSERT INTO session_revocations (token_hash, user_id, at) VALUES (\(tokenHash), \(user.rawValue), \(at.timeIntervalSince1970))
            """)
    }

    /// Revocations written after `seq`, oldest first, at most `limit`; with the last sequence
    /// number read. Rows older than `keep` seconds are deleted by ``pruneRevocations(olderThan:)``.
    public func revocations(after seq: Int64, limit: Int) async throws -> [Revocation] {
        try await self.single { tx in
            try await tx.rows("SELECT seq, token_hash, user_id FROM session_revocations WHERE seq > \(seq) ORDER BY seq LIMIT \(limit)").map { row in
                let (seq, hash, user) = try row.decode((Int64, Data?, Int64).self)
                return Revocation(seq: seq, tokenHash: hash, user: UserID(user))
            }
        }
    }

    /// The newest revocation's sequence number (0 for none): where a starting process begins to read.
    public func lastRevocation() async throws -> Int64 {
        try await self.single { tx in
            try await tx.one("SELECT coalesce(max(seq), 0) FROM session_revocations").decode(Int64.self)
        }
    }

    /// Forgets revocations older than `age` seconds: every process has read them by then, and a
    /// revoked session stays revoked in `sessions` itself.
    public func pruneRevocations(olderThan age: TimeInterval) async throws {
        let cutoff = self.now().timeIntervalSince1970 - age
        try await self.single { tx in
            try await tx.run("DELETE FROM session_revocations WHERE at < \(cutoff)")
        }
    }

    /// A named 32-byte secret of this database, the same for every process serving it: the first
    /// process to ask stores the one it made; any other, even at the same moment, reads that one.
    public func secret(_ name: String) async throws -> Data {
        var random = SystemRandomNumberGenerator()
        let made = Data((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &random) })
        return try await self.transaction { tx in
            try await tx.run("INSERT INTO secrets (name, value) VALUES (\(name), \(made)) ON CONFLICT (name) DO NOTHING")
            // A statement of its own: it sees the row of another process that committed first.
            return try await tx.one("SELECT value FROM secrets WHERE name = \(name)").decode(Data.self)
        }
    }

    /// A user's own profile and sharing settings.
    public func profile(_ id: UserID) async throws -> UserProfile? {
        // One snapshot: the profile is read in three statements.
        try await self.read { tx in try await Self.profile(id, tx) }
    }

    /// Applies profile changes and returns the result.
    public func updateProfile(_ id: UserID, _ changes: ProfileChanges) async throws -> UserProfile {
        // The user's lock: a ride log's new count reads the opt-in this may change (its trigger).
        try await self.transaction(locking: [id]) { tx in
            let ghost = changes.ghost.map(GhostColumns.columns)
            if changes.displayName != nil || changes.bio != nil || ghost != nil || changes.precision != nil || changes.discoverable != nil {
                // A column without a change is set to itself.
                try await tx.run("""
                    UPDATE users SET display_name = coalesce(\(changes.displayName)::text, display_name),
                                     bio = coalesce(\(changes.bio)::text, bio),
                                     ghost = CASE WHEN \(ghost != nil) THEN \(ghost?.ghost ?? "off") ELSE ghost END,
                                     ghost_until = CASE WHEN \(ghost != nil) THEN \(ghost?.until)::float8 ELSE ghost_until END,
                                     precision = coalesce(\(changes.precision?.rawValue)::text, precision),
                                     discoverable = coalesce(\(changes.discoverable)::boolean, discoverable)
                    WHERE id = \(id.rawValue)
                    """)
            }
            guard try await tx.first("SELECT 1 FROM users WHERE id = \(id.rawValue)") != nil else { throw AccountError.noSuchUser }
            try await Self.applyPeopleChanges(id, changes, tx)
            guard let profile = try await Self.profile(id, tx) else { throw AccountError.noSuchUser }
            return profile
        }
    }

    /// The user with this canonical username, if any.
    public func user(named username: String) async throws -> UserSummary? {
        try await self.single { tx in
            try await tx.first("SELECT id, username, display_name FROM users WHERE username = \(username)").map { row in
                let (id, username, displayName) = try row.decode((Int64, String, String).self)
                return UserSummary(id: UserID(id), username: username, displayName: displayName)
            }
        }
    }

    // MARK: Profiles as rows

    /// The columns of a `users` row that ``profile(_:overrides:)`` reads, in its order.
    static let profileColumns = "id, username, display_name, bio, role, created_at, ghost, ghost_until, precision, discoverable"

    /// A user's profile with every sharing override they have set, in one statement.
    static func profile(_ id: UserID, _ tx: PostgresTransaction) async throws -> UserProfile? {
        guard let row = try await tx.first("""
            SELECT \(unescaped: Self.profileColumns),
                   ARRAY(SELECT friend_id FROM sharing_overrides WHERE user_id = \(id.rawValue) ORDER BY friend_id),
                   ARRAY(SELECT coalesce(precision, '') FROM sharing_overrides WHERE user_id = \(id.rawValue) ORDER BY friend_id),
                   ARRAY(SELECT hidden FROM sharing_overrides WHERE user_id = \(id.rawValue) ORDER BY friend_id)
            FROM users WHERE id = \(id.rawValue)
            """) else { return nil }
        let (_, _, _, _, _, _, _, _, _, _, friends, precisions, hidden) = try row.decode(
            (Int64, String, String, String, String, Double, String, Double?, String, Bool, [Int64], [String], [Bool]).self)
        var overrides: [UserID: SharingOverride] = [:]
        for (friend, (precision, hidden)) in zip(friends, zip(precisions, hidden)) {
            // An empty word is a NULL precision: the user's own applies.
            overrides[UserID(friend)] = SharingOverride(precision: Precision(rawValue: precision), hidden: hidden)
        }
        var profile = try Self.profile(row, overrides: overrides)
        guard let people = try await Self.peopleColumns(id, tx) else { return nil }
        profile.card = people.card
        profile.findable = people.findable
        profile.follows = people.follows
        return profile
    }

    /// A profile from the first columns of `row` (``profileColumns``).
    static func profile(_ row: PostgresRow, overrides: [UserID: SharingOverride]) throws -> UserProfile {
        let (id, username, displayName, bio, role, createdAt, ghost, ghostUntil, precision, discoverable) = try row.decode(
            (Int64, String, String, String, String, Double, String, Double?, String, Bool).self)
        return UserProfile(
            id: UserID(id), username: username, displayName: displayName, bio: bio, role: Role(rawValue: role) ?? .member,
            createdAt: Date(timeIntervalSince1970: createdAt),
            sharing: SharingSettings(ghost: GhostColumns.mode(ghost, until: ghostUntil), precision: Precision(rawValue: precision) ?? .exact,
                                     overrides: overrides),
            discoverable: discoverable)
    }
}

/// The live sessions among some token hashes, each one's user noted as seen now: the session
/// check of every request that has no cached session, prepared once per connection.
private struct LiveSessions: PostgresPreparedStatement {
    static let name = "coasterlife_live_sessions"
    static let sql = """
        WITH live AS (
            SELECT s.token_hash, u.id, u.username, u.role, s.expires_at FROM sessions s JOIN users u ON u.id = s.user_id
            WHERE s.token_hash = ANY($1::bytea[]) AND s.revoked_at IS NULL AND s.expires_at > $2
        ), seen AS (
            UPDATE users SET last_seen_at = $2 WHERE id IN (SELECT id FROM live)
        )
        SELECT token_hash, id, username, role, expires_at FROM live
        """
    typealias Row = (Data, SessionUser)

    var tokenHashes: [ByteBuffer]
    var now: Double

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings()
        bindings.append(self.tokenHashes)
        bindings.append(self.now)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        let (hash, id, username, role, expiresAt) = try row.decode((Data, Int64, String, String, Double).self)
        return (hash, SessionUser(id: UserID(id), username: username, role: Role(rawValue: role) ?? .member,
                                  expiresAt: Date(timeIntervalSince1970: expiresAt)))
    }
}
