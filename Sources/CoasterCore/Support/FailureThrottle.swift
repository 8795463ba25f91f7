import Foundation

/// Counts failures per key in a sliding window and says when a key must wait.
///
/// A value type with no clock of its own: every call names `now`, so tests move time by hand.
/// Memory stays bounded: keys with no recent failures are dropped as they are seen, and the
/// oldest keys go first when ``maximumKeys`` is reached.
public struct FailureThrottle: Sendable {
    public let limit: Int
    public let window: TimeInterval
    public let maximumKeys: Int
    private var failures: [String: [Date]] = [:]

    /// - Parameters:
    ///   - limit: failures allowed within `window` before the key is refused.
    ///   - window: seconds.
    public init(limit: Int, window: TimeInterval, maximumKeys: Int = 100_000) {
        self.limit = limit
        self.window = window
        self.maximumKeys = maximumKeys
    }

    /// Seconds until `key` may try again, or `nil` if it may try now.
    public mutating func retryAfter(_ key: String, now: Date) -> TimeInterval? {
        guard var times = self.failures[key] else { return nil }
        times.removeAll { now.timeIntervalSince($0) >= self.window }
        if times.isEmpty {
            self.failures[key] = nil
            return nil
        }
        self.failures[key] = times
        guard times.count >= self.limit else { return nil }
        return max(1, self.window - now.timeIntervalSince(times[times.count - self.limit]))
    }

    public mutating func recordFailure(_ key: String, now: Date) {
        if self.failures[key] == nil, self.failures.count >= self.maximumKeys {
            self.evictOldest(now: now)
        }
        var times = self.failures[key] ?? []
        times.removeAll { now.timeIntervalSince($0) >= self.window }
        times.append(now)
        if times.count > self.limit { times.removeFirst(times.count - self.limit) }
        self.failures[key] = times
    }

    /// Keys held now.
    public var keyCount: Int { self.failures.count }

    public mutating func reset(_ key: String) {
        self.failures[key] = nil
    }

    private mutating func evictOldest(now: Date) {
        self.failures = self.failures.filter { _, times in times.contains { now.timeIntervalSince($0) < self.window } }
        if self.failures.count >= self.maximumKeys, let oldest = self.failures.min(by: { ($0.value.last ?? now) < ($1.value.last ?? now) }) {
            self.failures[oldest.key] = nil
        }
    }
}
