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
    /// Failed logins of one account from one address before each try must wait, twice as long
    /// each time (``LoginThrottle``).
    public var freeLoginFailures = 5
    /// Failed logins of one account from addresses it never logged in from, within `loginWindow`.
    public var failedLoginsPerAccount = 50
    /// Failed logins from one address on accounts it never logged in to, within `loginWindow`.
    public var failedLoginsPerAddress = 30
    /// Seconds over which failed logins count.
    public var loginWindow: TimeInterval = 15 * 60
    /// Seconds a verified Basic credential (OwnTracks) is trusted without bcrypt again.
    public var basicCredentialLifetime: TimeInterval = 5 * 60
    /// Seconds a session stays cached before the store is asked again (and last-seen updated).
    /// The first request after that is answered from the cache while the store is asked in the
    /// background; past twice this, a request waits for the store's answer.
    public var sessionRecheck: TimeInterval = 60

    public init() {}
}

/// Who is calling, once a bearer token (or OwnTracks' Basic credentials) has been checked.
public struct Identity: Hashable, Sendable {
    public var id: UserID
    public var username: String
    public var role: Role
    /// The SHA-256 of the bearer token, so logout can revoke exactly this session.
    public var tokenHash: Data?

    public init(id: UserID, username: String, role: Role, tokenHash: Data?) {
        self.id = id
        self.username = username
        self.role = role
        self.tokenHash = tokenHash
    }
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

    public let store: any Store
    public let policy: AccountPolicy
    public let now: @Sendable () -> Date
    /// Cached sessions by token digest: a fixed-size key, so that a request's check neither
    /// allocates nor hashes a `Data`.
    private let cache = Mutex<[Digest: Entry]>([:])
    private let throttle: Mutex<LoginThrottle>
    /// Basic credentials verified lately, by their keyed hash (``credentialKey``): OwnTracks sends
    /// the password with every request, and bcrypt on each one let a single account's phone, or
    /// sixteen requests at once, slow every login. Keyed with a secret of this process, so the
    /// map holds nothing a fast hash could be tried against.
    private let credentials = Mutex<[Digest: (identity: Identity, verifiedAt: Date)]>([:])
    private let credentialKey = SymmetricKey(size: .bits256)
    private static let maximumCredentials = 100_000
    /// Told of every revocation this process learns of (its own logouts, password and role
    /// changes, and those the store announces).
    private let observers = Mutex<[@Sendable (Revocation) -> Void]>([])
    /// Sessions due for a background recheck, and whether a recheck task is running.
    private let due = Mutex<(digests: [Digest], running: Bool)>(([], false))
    private static let maximumCached = 200_000
    /// A real bcrypt hash to check against when the user does not exist, so that an unknown user and
    /// a wrong password take the same time.
    private let decoyHash: String

    public init(store: any Store, policy: AccountPolicy, now: @escaping @Sendable () -> Date = Date.init) {
        self.store = store
        self.policy = policy
        self.now = now
        self.throttle = Mutex(LoginThrottle(freeFailures: policy.freeLoginFailures, accountLimit: policy.failedLoginsPerAccount,
                                            addressLimit: policy.failedLoginsPerAddress, window: policy.loginWindow))
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

    /// Checks a username and password without opening a session (OwnTracks' Basic auth). A
    /// credential verified in the last ``AccountPolicy/basicCredentialLifetime`` seconds is taken
    /// without bcrypt or the throttle; a password change or revocation forgets it.
    public func verify(username: String, password: String, clientAddress: String) async throws -> LoginResult {
        let key = self.credentialDigest(username: username, password: password)
        let now = self.now()
        let lifetime = self.policy.basicCredentialLifetime
        if let cached = self.credentials.withLock({ c in c[key].flatMap { now.timeIntervalSince($0.verifiedAt) < lifetime ? $0.identity : nil } }) {
            return .success(token: "", identity: cached, expiresAt: .distantFuture)
        }
        switch try await self.check(username: username, password: password, clientAddress: clientAddress) {
        case .throttled(let wait):
            return .throttled(retryAfter: wait)
        case .invalid:
            return .invalidCredentials
        case .valid(let credentials):
            guard let profile = try await self.store.profile(credentials.id) else { return .invalidCredentials }
            let identity = Identity(id: profile.id, username: profile.username, role: profile.role, tokenHash: nil)
            self.credentials.withLock { c in
                if c.count >= Self.maximumCredentials {
                    c = c.filter { now.timeIntervalSince($0.value.verifiedAt) < lifetime }
                    if c.count >= Self.maximumCredentials { c.removeAll(keepingCapacity: true) }
                }
                c[key] = (identity, now)
            }
            return .success(token: "", identity: identity, expiresAt: .distantFuture)
        }
    }

    /// The keyed hash a verified credential is cached under: the name as typed, a zero byte, the password.
    private func credentialDigest(username: String, password: String) -> Digest {
        var message = Data(username.lowercased().utf8)
        message.append(0)
        message.append(contentsOf: password.utf8)
        // A SHA-256 MAC is 32 bytes, as a digest is.
        return Digest(Data(HMAC<SHA256>.authenticationCode(for: message, using: self.credentialKey)))!
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
        let wait = self.throttle.withLock { $0.retryAfter(account: username, address: clientAddress, now: self.now()) }
        if let wait { return .throttled(wait) }
        let credentials = username.utf8.count <= 64 ? try await self.store.credentials(username: username) : nil
        let ok = try await self.verify(password, hash: credentials?.passwordHash ?? self.decoyHash)
        guard ok, let credentials else {
            self.throttle.withLock { $0.recordFailure(account: username, address: clientAddress, now: self.now()) }
            return .invalid
        }
        self.throttle.withLock { $0.recordSuccess(account: username, address: clientAddress, now: self.now()) }
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
    public func cachedIdentity(token: String) -> Identity? {
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

    /// Revokes the session of this token hash, at once and for good: its cache entry and its live
    /// sockets go now, in other processes when they read the store's announcement.
    public func logout(tokenHash: Data, user: UserID) async throws {
        try await self.store.revokeSession(tokenHash: tokenHash)
        self.apply(Revocation(seq: 0, tokenHash: tokenHash, user: user))
    }

    /// Forgets every cached session and credential of a user and closes their sockets (after a
    /// password or role change in this process; the store announced it to the others).
    public func forget(user: UserID) {
        self.apply(Revocation(seq: 0, tokenHash: nil, user: user))
    }

    /// Calls `observer` with every revocation this process applies.
    public func onRevocation(_ observer: @escaping @Sendable (Revocation) -> Void) {
        self.observers.withLock { $0.append(observer) }
    }

    /// Drops what a revocation ends from the caches, and tells the observers (the live hub).
    public func apply(_ revocation: Revocation) {
        if let hash = revocation.tokenHash {
            if let digest = Digest(hash) { _ = self.cache.withLock { $0.removeValue(forKey: digest) } }
        } else {
            let user = revocation.user
            self.cache.withLock { cache in cache = cache.filter { $0.value.identity.id != user } }
            self.credentials.withLock { c in c = c.filter { $0.value.identity.id != user } }
        }
        for observer in self.observers.withLock({ $0 }) { observer(revocation) }
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
        return "cl_" + Data(bytes).base64URLEncoded
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
