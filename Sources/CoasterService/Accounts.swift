import CoasterCore
import CoasterStore
import Foundation

/// Creating accounts, the one place their rules are enforced: the HTTP route and
/// `coasterlife user create` both come here.
public struct Accounts: Sendable {
    public let store: any Store
    public let sessions: Sessions

    public init(store: any Store, sessions: Sessions) {
        self.store = store
        self.sessions = sessions
    }

    /// Registers a user. Throws ``AccountRuleViolation`` for a bad field and
    /// ``CoasterStore/AccountError/usernameTaken(_:)`` for a name in use.
    public func register(username rawUsername: String, password: String, displayName: String?, role: Role = .member) async throws -> UserProfile {
        let username = try AccountRules.username(rawUsername)
        try AccountRules.password(password)
        let display = try AccountRules.displayName(displayName ?? username)
        let hash = try await self.sessions.hashPassword(password)
        return try await self.store.createUser(username: username, displayName: display, passwordHash: hash, role: role)
    }

    /// Sets the password and role of an existing user, ending their sessions.
    public func reset(username rawUsername: String, password: String, role: Role) async throws -> UserProfile {
        let username = try AccountRules.username(rawUsername)
        try AccountRules.password(password)
        let hash = try await self.sessions.hashPassword(password)
        let profile = try await self.store.resetUser(username: username, passwordHash: hash, role: role)
        self.sessions.forget(user: profile.id)
        return profile
    }
}
