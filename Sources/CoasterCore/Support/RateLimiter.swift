import Foundation

/// Token buckets per key: `burst` requests at once, refilled at `perSecond`.
///
/// A value type with no clock: every call names `now`. Buckets that have refilled completely are
/// forgotten, so memory follows the number of active keys.
public struct RateLimiter: Sendable {
    public let perSecond: Double
    public let burst: Double
    private var buckets: [String: (tokens: Double, at: Date)] = [:]

    public init(perSecond: Double, burst: Int) {
        self.perSecond = perSecond
        self.burst = Double(burst)
    }

    /// Takes a token for `key`: `nil` if allowed, else the seconds until one is available.
    public mutating func take(_ key: String, now: Date) -> TimeInterval? {
        var (tokens, at) = self.buckets[key] ?? (self.burst, now)
        tokens = min(self.burst, tokens + max(0, now.timeIntervalSince(at)) * self.perSecond)
        guard tokens >= 1 else {
            self.buckets[key] = (tokens, now)
            return (1 - tokens) / self.perSecond
        }
        self.buckets[key] = (tokens - 1, now)
        if self.buckets.count > 100_000 { self.sweep(now: now) }
        return nil
    }

    private mutating func sweep(now: Date) {
        self.buckets = self.buckets.filter { _, b in b.tokens + now.timeIntervalSince(b.at) * self.perSecond < self.burst }
    }
}
