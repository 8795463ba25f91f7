import CoasterCore
import Foundation

/// Accounts, sessions and their revocations, profiles and the service's secrets.
public protocol AccountStore: Sendable {
    /// Creates an account. `username` must already be canonical (``AccountRules/username(_:)``).
    func createUser(username: String, displayName: String, passwordHash: String, role: Role) async throws -> UserProfile

    /// Sets a user's password and role (the `user create` command on an existing name).
    func resetUser(username: String, passwordHash: String, role: Role) async throws -> UserProfile

    /// The password hash of a canonical username, or `nil` if there is no such user.
    func credentials(username: String) async throws -> Credentials?

    /// Stores a new session under the hash of its token.
    func createSession(user: UserID, tokenHash: Data, expiresAt: Date) async throws

    /// The user of a live session (not revoked, not expired), noting that they were seen now.
    func useSession(tokenHash: Data) async throws -> SessionUser?

    /// The users of those of these sessions that are live, by token hash, each noted as seen now:
    /// one transaction for all of them (a server rechecks its cached sessions in batches).
    func useSessions(tokenHashes: [Data]) async throws -> [Data: SessionUser]

    /// Ends a session. Returns whether a live session was revoked.
    @discardableResult
    func revokeSession(tokenHash: Data) async throws -> Bool

    /// Revocations written after `seq`, oldest first, at most `limit`; with the last sequence
    /// number read. Rows older than `keep` seconds are deleted by ``pruneRevocations(olderThan:)``.
    func revocations(after seq: Int64, limit: Int) async throws -> [Revocation]

    /// The newest revocation's sequence number (0 for none): where a starting process begins to read.
    func lastRevocation() async throws -> Int64

    /// Forgets revocations older than `age` seconds: every process has read them by then, and a
    /// revoked session stays revoked in `sessions` itself.
    func pruneRevocations(olderThan age: TimeInterval) async throws

    /// A named 32-byte secret of this database, the same for every process serving it.
    func secret(_ name: String) async throws -> Data

    /// A user's own profile and sharing settings.
    func profile(_ id: UserID) async throws -> UserProfile?

    /// Applies profile changes and returns the result.
    func updateProfile(_ id: UserID, _ changes: ProfileChanges) async throws -> UserProfile

    /// The user with this canonical username, if any.
    func user(named username: String) async throws -> UserSummary?
}
