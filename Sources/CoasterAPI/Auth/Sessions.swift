import CoasterCore
import CoasterStore
import Crypto
import Foundation
import HummingbirdBcrypt
import NIOPosix
import Synchronization

/// How accounts and sessions behave; tests lower the bcrypt cost.
public struct AccountPolicy: Sendable {
    /// bcrypt work factor (4…31); 12 takes a few hundred ms on a 2-core machine.
    public var bcryptCost: UInt8 = 12
    /// How long a session lives, seconds.
    public var sessionLifetime: TimeInterval = 30 * 24 * 3600
    /// Failed logins per username allowed within `loginWindow`.
    public var failedLoginsPerUsername = 5
    /// Failed logins per client address allowed within `loginWindow`.
    public var failedLoginsPerAddress = 30
    /// Seconds over which failed logins count.
    public var loginWindow: TimeInterval = 15 * 60
    /// Seconds a session stays cached before the store is asked again (and last-seen updated).
    /// The first request after that is answered from the cache while the store is asked in the
    /// background; past twice this, a request waits for the store's answer.
    public var sessionRecheck: TimeInterval = 60

    public init() {}
}

/// Issues, checks and revokes bearer sessions.
///
/// Tokens are 256 random bits; only their SHA-256 is stored. An in-memory cache answers for a
/// session it has checked with the store in the last ``AccountPolicy/sessionRecheck`` seconds, so
/// authenticated hot paths pay no database hop. A session due for its recheck is still answered
/// from the cache (up to twice that age), and rechecked in the background with every other session
/// due at the time, in one write that also records their last-seen: a request never waits on the
/// store for a session it used in the last two recheck periods, and the sessions in use cost one
/// write per batch instead of one each (a million, each used every minute, would be 16,700 writes a
/// second on SQLite's one writer, beside the fixes). A session revoked by another
/// process stops working once the recheck after its first use past ``AccountPolicy/sessionRecheck``
/// has run (milliseconds); logout through this process takes effect at once.
public final class Sessions: Sendable {
    private struct Entry: Sendable {
        var identity: Identity
        var expiresAt: Date
        var checkedAt: Date
        /// Queued for (or in) a background recheck.
        var rechecking = false
    }

    let store: Store
    let policy: AccountPolicy
    let now: @Sendable () -> Date
    /// Cached sessions by token digest: a fixed-size key, so that a request's check neither
    /// allocates nor hashes a `Data`.
    private let cache = Mutex<[Digest: Entry]>([:])
    private let throttle: Mutex<(users: FailureThrottle, addresses: FailureThrottle)>
    /// Sessions due for a background recheck, and whether a recheck task is running.
    private let due = Mutex<(digests: [Digest], running: Bool)>(([], false))
    private static let maximumCached = 200_000
    /// A real bcrypt hash to check against when the user does not exist, so that an unknown user and
    /// a wrong password take the same time.
    private let decoyHash: String

    public init(store: Store, policy: AccountPolicy, now: @escaping @Sendable () -> Date = Date.init) {
        self.store = store
        self.policy = policy
        self.now = now
        self.throttle = Mutex((
            FailureThrottle(limit: policy.failedLoginsPerUsername, window: policy.loginWindow),
            FailureThrottle(limit: policy.failedLoginsPerAddress, window: policy.loginWindow)))
        self.decoyHash = Bcrypt.hash(UUID().uuidString, cost: policy.bcryptCost)
    }

    /// Hashes a password off the cooperative thread pool (bcrypt is deliberately slow).
    public func hashPassword(_ password: String) async throws -> String {
        let cost = self.policy.bcryptCost
        return try await NIOThreadPool.singleton.runIfActive { Bcrypt.hash(password, cost: cost) }
    }

    private func verify(_ password: String, hash: String) async throws -> Bool {
        try await NIOThreadPool.singleton.runIfActive { Bcrypt.verify(password, hash: hash) }
    }

    public enum LoginResult: Sendable {
        case success(token: String, identity: Identity, expiresAt: Date)
        case invalidCredentials
        case throttled(retryAfter: TimeInterval)
    }

    /// Checks a username and password and opens a session.
    public func login(username: String, password: String, clientAddress: String) async throws -> LoginResult {
        switch try await self.check(username: username, password: password, clientAddress: clientAddress) {
        case .throttled(let wait):
            return .throttled(retryAfter: wait)
        case .invalid:
            return .invalidCredentials
        case .valid(let credentials):
            let token = Self.newToken()
            let digest = Digest(token)
            let hash = digest.data
            let expiresAt = self.now().addingTimeInterval(self.policy.sessionLifetime)
            try await self.store.createSession(user: credentials.id, tokenHash: hash, expiresAt: expiresAt)
            guard let user = try await self.store.useSession(tokenHash: hash) else { return .invalidCredentials }
            let identity = Identity(id: user.id, username: user.username, role: user.role, tokenHash: hash)
            self.remember(Entry(identity: identity, expiresAt: expiresAt, checkedAt: self.now()), digest)
            return .success(token: token, identity: identity, expiresAt: expiresAt)
        }
    }

    /// Checks a username and password without opening a session (OwnTracks' Basic auth).
    public func verify(username: String, password: String, clientAddress: String) async throws -> LoginResult {
        switch try await self.check(username: username, password: password, clientAddress: clientAddress) {
        case .throttled(let wait):
            return .throttled(retryAfter: wait)
        case .invalid:
            return .invalidCredentials
        case .valid(let credentials):
            guard let profile = try await self.store.profile(credentials.id) else { return .invalidCredentials }
            return .success(token: "", identity: Identity(id: profile.id, username: profile.username, role: profile.role, tokenHash: nil),
                            expiresAt: .distantFuture)
        }
    }

    private enum Check {
        case valid(Credentials)
        case invalid
        case throttled(TimeInterval)
    }

    /// The shared password check: throttled per username and per client address, and as slow for
    /// an unknown user as for a wrong password, so neither reveals whether an account exists.
    private func check(username rawUsername: String, password: String, clientAddress: String) async throws -> Check {
        let username = rawUsername.lowercased()
        let userKey = "u:" + username
        let addressKey = "a:" + clientAddress
        let wait = self.throttle.withLock { t -> TimeInterval? in
            let now = self.now()
            return [t.users.retryAfter(userKey, now: now), t.addresses.retryAfter(addressKey, now: now)].compactMap { $0 }.max()
        }
        if let wait { return .throttled(wait) }
        let credentials = username.utf8.count <= 64 ? try await self.store.credentials(username: username) : nil
        let ok = try await self.verify(password, hash: credentials?.passwordHash ?? self.decoyHash)
        guard ok, let credentials else {
            self.throttle.withLock { t in
                t.users.recordFailure(userKey, now: self.now())
                t.addresses.recordFailure(addressKey, now: self.now())
            }
            return .invalid
        }
        self.throttle.withLock { t in t.users.reset(userKey) }
        return .valid(credentials)
    }

    /// The identity behind a bearer token, or `nil` if it is unknown, expired or revoked.
    public func authenticate(token: String) async throws -> Identity? {
        guard token.utf8.count <= 128 else { return nil }
        let digest = Digest(token)
        let now = self.now()
        if let identity = self.cached(digest, now: now) { return identity }
        let hash = digest.data
        guard let user = try await self.store.useSession(tokenHash: hash) else {
            _ = self.cache.withLock { $0.removeValue(forKey: digest) }
            return nil
        }
        let identity = Identity(id: user.id, username: user.username, role: user.role, tokenHash: hash)
        self.remember(Entry(identity: identity, expiresAt: user.expiresAt, checkedAt: now), digest)
        return identity
    }

    /// The identity behind a bearer token when the cache can tell without the store: `nil` when
    /// the store must be asked (unknown to the cache, due for its recheck, or too long to be one).
    /// The fast lane's check, which never waits on the store.
    func cachedIdentity(token: String) -> Identity? {
        guard token.utf8.count <= 128 else { return nil }
        return self.cached(Digest(token), now: self.now())
    }

    private func cached(_ digest: Digest, now: Date) -> Identity? {
        let recheck = self.policy.sessionRecheck
        let (identity, due) = self.cache.withLock { cache -> (Identity?, Bool) in
            guard let entry = cache[digest], entry.expiresAt > now else { return (nil, false) }
            let age = now.timeIntervalSince(entry.checkedAt)
            if age < recheck { return (entry.identity, false) }
            guard age < 2 * recheck else { return (nil, false) }
            guard !entry.rechecking else { return (entry.identity, false) }
            cache[digest]?.rechecking = true
            return (entry.identity, true)
        }
        if due { self.recheckLater(digest) }
        return identity
    }

    /// Queues a session for the background recheck, starting the task that runs it if none is.
    private func recheckLater(_ digest: Digest) {
        let start = self.due.withLock { due -> Bool in
            due.digests.append(digest)
            guard !due.running else { return false }
            due.running = true
            return true
        }
        if start { Task { await self.recheckDue() } }
    }

    /// Rechecks the queued sessions with the store, all that are queued at a time in one write,
    /// until none are left: a live one's entry is renewed (its user's name and role as the store
    /// has them now), one the store no longer vouches for is forgotten. If the store fails, the
    /// entries stay as they were and are queued again by their next use; past twice the recheck
    /// period a request asks the store itself and meets the failure. An entry removed or renewed
    /// while its recheck ran (a logout, a password change, a request that asked the store) keeps
    /// what happened to it.
    private func recheckDue() async {
        while true {
            let batch = self.due.withLock { due -> [Digest] in
                let batch = due.digests
                due.digests.removeAll(keepingCapacity: true)
                if batch.isEmpty { due.running = false }
                return batch
            }
            if batch.isEmpty { return }
            let users = try? await self.store.useSessions(tokenHashes: batch.map(\.data))
            let now = self.now()
            self.cache.withLock { cache in
                // Only entries still waiting for this answer: one forgotten meanwhile (a logout, a
                // password change) is never brought back, one renewed meanwhile is newer than it.
                for digest in batch where cache[digest]?.rechecking == true {
                    guard let users else {
                        cache[digest]?.rechecking = false
                        continue
                    }
                    if let user = users[digest.data] {
                        let identity = Identity(id: user.id, username: user.username, role: user.role, tokenHash: digest.data)
                        cache[digest] = Entry(identity: identity, expiresAt: user.expiresAt, checkedAt: now)
                    } else {
                        cache.removeValue(forKey: digest)
                    }
                }
            }
        }
    }

    /// Revokes the session of this token hash, at once and for good.
    public func logout(tokenHash: Data) async throws {
        if let digest = Digest(tokenHash) { _ = self.cache.withLock { $0.removeValue(forKey: digest) } }
        try await self.store.revokeSession(tokenHash: tokenHash)
    }

    /// Forgets cached sessions of a user (after a password or role change in this process).
    public func forget(user: UserID) {
        self.cache.withLock { cache in cache = cache.filter { $0.value.identity.id != user } }
    }

    private func remember(_ entry: Entry, _ digest: Digest) {
        self.cache.withLock { cache in
            if cache.count >= Self.maximumCached {
                let now = self.now()
                cache = cache.filter { now.timeIntervalSince($0.value.checkedAt) < self.policy.sessionRecheck }
                if cache.count >= Self.maximumCached { cache.removeAll(keepingCapacity: true) }
            }
            cache[digest] = entry
        }
    }

    /// `cl_` and 43 base64url characters: 256 bits from the system's CSPRNG.
    public static func newToken() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let base64 = Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        return "cl_" + base64
    }

    public static func hash(_ token: String) -> Data {
        Digest(token).data
    }

    /// A token's SHA-256 as four words.
    private struct Digest: Hashable, Sendable {
        var words: (UInt64, UInt64, UInt64, UInt64)

        init(_ token: String) {
            var token = token
            self = token.withUTF8 { SHA256.hash(data: UnsafeRawBufferPointer($0)) }.withUnsafeBytes(Digest.init(bytes:))
        }

        /// The digest of a stored hash, or `nil` if it is not 32 bytes.
        init?(_ hash: Data) {
            guard hash.count == 32 else { return nil }
            self = hash.withUnsafeBytes(Digest.init(bytes:))
        }

        /// From 32 bytes.
        private init(bytes: UnsafeRawBufferPointer) {
            self.words = (bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self), bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
                          bytes.loadUnaligned(fromByteOffset: 16, as: UInt64.self), bytes.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
        }

        /// The 32 bytes, as the store keeps them.
        var data: Data { withUnsafeBytes(of: self.words) { Data($0) } }

        static func == (a: Digest, b: Digest) -> Bool { a.words == b.words }

        func hash(into hasher: inout Hasher) {
            hasher.combine(self.words.0)
            hasher.combine(self.words.1)
            hasher.combine(self.words.2)
            hasher.combine(self.words.3)
        }
    }
}
