import Foundation

/// Decides when a password check may be tried, so that guessing is slow and an attacker's
/// failures cannot lock the account's owner out.
///
/// Three keys are counted:
/// - **account and address**: after ``freeFailures`` failures, each further try waits twice as long
///   as the one before (``baseDelay``, doubling, at most ``maximumDelay``). A success resets it.
///   This is the only key that can stop a login from an address the account has logged in from
///   before (a *known* address), so failures from elsewhere never lock the owner out.
/// - **account**: at most `accountLimit` failures within ``window`` from unknown addresses, which
///   slows a guesser spread over many addresses.
/// - **address**: at most `addressLimit` failures within ``window`` across accounts, which slows
///   one address trying many accounts; it too spares known addresses, so the people behind a shared
///   address (a NAT, a proxy not marked as trusted) who have logged in before keep logging in.
///
/// A value type with no clock of its own: every call names `now`. Memory stays bounded: each map
/// holds at most ``maximumKeys`` keys, and keys are at most ``maximumKeyBytes`` long (a longer
/// username cannot exist and is counted under one shared key).
public struct LoginThrottle: Sendable {
    public let freeFailures: Int
    /// Seconds of the first wait after the free failures; each failure after doubles it.
    public let baseDelay: TimeInterval = 1
    public let maximumDelay: TimeInterval = 15 * 60
    public let window: TimeInterval
    /// How long an address stays known to an account after a successful login.
    public let knownFor: TimeInterval = 30 * 24 * 3600
    public let maximumKeys: Int
    public static let maximumKeyBytes = 64

    private struct Backoff {
        var failures: Int
        var until: Date
        var last: Date
    }

    private var pairs: [String: Backoff] = [:]
    private var accounts: FailureThrottle
    private var addresses: FailureThrottle
    private var known: [String: Date] = [:]

    /// - Parameters:
    ///   - freeFailures: failures of one account from one address before the waits begin.
    ///   - accountLimit: failures of one account from unknown addresses within `window`.
    ///   - addressLimit: failures from one address, on accounts it is unknown to, within `window`.
    ///   - window: seconds.
    public init(freeFailures: Int = 5, accountLimit: Int = 50, addressLimit: Int = 30, window: TimeInterval = 15 * 60,
                maximumKeys: Int = 100_000) {
        self.freeFailures = freeFailures
        self.window = window
        self.maximumKeys = maximumKeys
        self.accounts = FailureThrottle(limit: accountLimit, window: window, maximumKeys: maximumKeys)
        self.addresses = FailureThrottle(limit: addressLimit, window: window, maximumKeys: maximumKeys)
    }

    /// Seconds `account` must wait before trying from `address`, or `nil` if it may try now.
    /// `account` is the canonical (lower-cased) username.
    public mutating func retryAfter(account: String, address: String, now: Date) -> TimeInterval? {
        let (a, ip) = (Self.key(account), Self.key(address))
        var waits: [TimeInterval] = []
        if let b = self.pairs[Self.pair(a, ip)], b.until > now { waits.append(b.until.timeIntervalSince(now)) }
        if !self.isKnown(a, ip, now: now) {
            if let w = self.accounts.retryAfter(a, now: now) { waits.append(w) }
            if let w = self.addresses.retryAfter(ip, now: now) { waits.append(w) }
        }
        return waits.max()
    }

    /// A wrong password (or an unknown account) tried from `address`.
    public mutating func recordFailure(account: String, address: String, now: Date) {
        let (a, ip) = (Self.key(account), Self.key(address))
        let key = Self.pair(a, ip)
        if self.pairs[key] == nil, self.pairs.count >= self.maximumKeys { self.evictPairs(now: now) }
        var b = self.pairs[key] ?? Backoff(failures: 0, until: .distantPast, last: now)
        // A pair quiet for a whole window starts over.
        if now.timeIntervalSince(b.last) >= self.window { b.failures = 0 }
        b.failures += 1
        b.last = now
        if b.failures >= self.freeFailures {
            let doublings = min(b.failures - self.freeFailures, 30)
            b.until = now.addingTimeInterval(min(self.maximumDelay, self.baseDelay * pow(2, Double(doublings))))
        }
        self.pairs[key] = b
        if !self.isKnown(a, ip, now: now) {
            self.accounts.recordFailure(a, now: now)
            self.addresses.recordFailure(ip, now: now)
        }
    }

    /// The right password from `address`: its pair starts over and the address becomes known.
    public mutating func recordSuccess(account: String, address: String, now: Date) {
        let (a, ip) = (Self.key(account), Self.key(address))
        let key = Self.pair(a, ip)
        self.pairs[key] = nil
        if self.known[key] == nil, self.known.count >= self.maximumKeys {
            self.known = self.known.filter { now.timeIntervalSince($0.value) < self.knownFor }
            if self.known.count >= self.maximumKeys, let oldest = self.known.min(by: { $0.value < $1.value }) { self.known[oldest.key] = nil }
        }
        self.known[key] = now
    }

    /// Keys held, in all maps (for tests of the bound).
    public var keyCount: Int { self.pairs.count + self.known.count + self.accounts.keyCount + self.addresses.keyCount }

    private func isKnown(_ account: String, _ address: String, now: Date) -> Bool {
        guard let at = self.known[Self.pair(account, address)] else { return false }
        return now.timeIntervalSince(at) < self.knownFor
    }

    private mutating func evictPairs(now: Date) {
        self.pairs = self.pairs.filter { $0.value.until > now || now.timeIntervalSince($0.value.last) < self.window }
        if self.pairs.count >= self.maximumKeys, let oldest = self.pairs.min(by: { $0.value.last < $1.value.last }) {
            self.pairs[oldest.key] = nil
        }
    }

    /// At most ``maximumKeyBytes``: a longer text is no real username or address, and all of
    /// them share one key rather than each holding memory of its own size.
    static func key(_ text: String) -> String {
        text.utf8.count <= Self.maximumKeyBytes ? text : "\u{1}too-long"
    }

    private static func pair(_ account: String, _ address: String) -> String { account + "\u{0}" + address }
}
