import CoasterCore
import CoasterHTTP
import Foundation
import Synchronization

/// The location rules in force: plausibility, check-ins, privacy, and request rates.
public struct LocationPolicy: Sendable {
    public var fixes = FixPolicy()
    public var checkins = CheckinPolicy()
    public var privacy = LocationPrivacy()
    public var waits = WaitReportPolicy()
    public var estimator = WaitEstimator()
    public var statusRules = RideStatusRules()
    public var rideLogs = RideLogPolicy()
    /// Fixes a `POST /v1/fixes` may carry.
    public var maximumBatch = 100
    /// Fix requests per user: sustained per second, and burst.
    public var fixRequestsPerSecond = 5.0
    public var fixRequestBurst = 30
    /// Nearby queries per user: sustained per second, and burst. Low on purpose: every answer is
    /// a measurement an attacker could use to trilaterate.
    public var nearbyRequestsPerSecond = 0.5
    public var nearbyRequestBurst = 10
    /// How often `GET /v1/live` sends a heartbeat.
    public var liveHeartbeat: Duration = .seconds(20)

    public init() {}
}

/// Per-user request rates, shared by the routes that limit them.
final class RequestRates: Sendable {
    private let limiter: Mutex<RateLimiter>
    private let now: @Sendable () -> Date

    init(perSecond: Double, burst: Int, now: @escaping @Sendable () -> Date) {
        self.limiter = Mutex(RateLimiter(perSecond: perSecond, burst: burst))
        self.now = now
    }

    /// Throws a 429 problem when `user` has no token left.
    func take(_ user: UserID, what: String) throws {
        try self.take(key: String(user.rawValue), what: what)
    }

    /// Throws a 429 problem when `key` (a client address) has no token left.
    func take(key: String, what: String) throws {
        let now = self.now()
        // An address is at most 45 characters; anything longer shares one key.
        let key = key.utf8.count <= 45 ? key : "too-long"
        if let wait = self.limiter.withLock({ $0.take(key, now: now) }) {
            throw Problem.tooManyRequests("Too many \(what) requests; slow down.", retryAfter: wait)
        }
    }
}
