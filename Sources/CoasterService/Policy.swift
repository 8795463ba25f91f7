import CoasterCore
import Foundation
import Synchronization

/// The location rules in force: plausibility, check-ins, privacy, waits and ride logs.
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
    /// How often `GET /v1/live` sends a heartbeat.
    public var liveHeartbeat: Duration = .seconds(20)

    public init() {}
}

/// How many requests of one kind a user (or a client address) may make: a sustained rate and a
/// burst, taken from a token bucket (``RateLimiter``).
public struct RateLimit: Hashable, Sendable {
    public var perSecond: Double
    public var burst: Int
    /// A rate set alone brings a burst of this many seconds' worth, but no fewer than `minimumBurst`.
    let burstSeconds: Double
    let minimumBurst: Int

    /// A limit of `perSecond` sustained and bursts of `burst`; a rate set later keeps their ratio.
    public init(perSecond: Double, burst: Int) {
        self.perSecond = perSecond
        self.burst = burst
        self.burstSeconds = Double(burst) / perSecond
        self.minimumBurst = 1
    }

    init(perSecond: Double, burstSeconds: Double, minimumBurst: Int) {
        self.perSecond = perSecond
        self.burst = max(minimumBurst, Int(perSecond * burstSeconds))
        self.burstSeconds = burstSeconds
        self.minimumBurst = minimumBurst
    }

    /// Sets the sustained rate and the burst that goes with it (what `serve`'s rate flags do).
    public mutating func setRate(_ perSecond: Double) {
        self = RateLimit(perSecond: perSecond, burstSeconds: self.burstSeconds, minimumBurst: self.minimumBurst)
    }
}

/// Every request-rate limit of the service, in one place.
public struct RateLimits: Hashable, Sendable {
    /// Fix requests per user (`POST /v1/fixes`, OwnTracks).
    public var fixes = RateLimit(perSecond: 5, burstSeconds: 6, minimumBurst: 1)
    /// Nearby queries per user. Low on purpose: every answer is a measurement an attacker could
    /// use to trilaterate.
    public var nearby = RateLimit(perSecond: 0.5, burstSeconds: 20, minimumBurst: 10)
    /// Messages a user may send.
    public var messages = RateLimit(perSecond: 2, burstSeconds: 10, minimumBurst: 1)
    /// Friend requests (and blocks) a user may send: a group's worth at once, then one every ten
    /// seconds. A request says whether a username exists, and each one lands in someone's list.
    public var friendRequests = RateLimit(perSecond: 0.1, burstSeconds: 300, minimumBurst: 30)
    /// Leaderboard pages a user may read.
    public var leaderboards = RateLimit(perSecond: 2, burstSeconds: 15, minimumBurst: 30)
    /// Accounts one client address may register.
    public var registrations = RateLimit(perSecond: 1.0 / 60, burstSeconds: 300, minimumBurst: 5)
    /// Shared-list reads (`GET /v1/shared-lists/{token}`, anyone may call it) one client address
    /// may make: enough for a group opening a link, far too few to guess tokens by trying them.
    public var sharedLists = RateLimit(perSecond: 1, burstSeconds: 60, minimumBurst: 30)
    /// People searches and suggestions a user may ask for (docs: People): a search is typed a
    /// letter at a time, but every answer names people, so no one may walk the directory by it.
    public var peopleSearches = RateLimit(perSecond: 1, burstSeconds: 30, minimumBurst: 30)
    /// Follows and unfollows a user may make: each lands in someone's follower count.
    public var follows = RateLimit(perSecond: 1, burstSeconds: 60, minimumBurst: 60)
    /// Posts, comments, thumbs and post searches a user may make (docs: Posts).
    public var posts = PostRateLimits()

    public init() {}
}

/// A request refused by its rate limit: what kind of request, and when one would be let through.
public struct RateLimited: Error, Hashable, Sendable {
    /// The kind of request, as a noun ("fix", "nearby", "registration").
    public var what: String
    public var retryAfter: TimeInterval
}

/// Per-user request rates, shared by the routes that limit them.
public final class RequestRates: Sendable {
    private let limiter: Mutex<RateLimiter>
    private let now: @Sendable () -> Date

    public init(_ limit: RateLimit, now: @escaping @Sendable () -> Date) {
        self.limiter = Mutex(RateLimiter(perSecond: limit.perSecond, burst: limit.burst))
        self.now = now
    }

    /// Throws ``RateLimited`` when `user` has no token left.
    public func take(_ user: UserID, what: String) throws {
        try self.take(key: String(user.rawValue), what: what)
    }

    /// Throws ``RateLimited`` when `key` (a client address) has no token left.
    public func take(key: String, what: String) throws {
        let now = self.now()
        // An address is at most 45 characters; anything longer shares one key.
        let key = key.utf8.count <= 45 ? key : "too-long"
        if let wait = self.limiter.withLock({ $0.take(key, now: now) }) {
            throw RateLimited(what: what, retryAfter: wait)
        }
    }
}

/// The rate limiters of a running service, one per limit of ``RateLimits``.
public struct Limiters: Sendable {
    public let fixes: RequestRates
    public let nearby: RequestRates
    public let messages: RequestRates
    public let friendRequests: RequestRates
    public let leaderboards: RequestRates
    public let registrations: RequestRates
    public let sharedLists: RequestRates
    public let peopleSearches: RequestRates
    public let follows: RequestRates
    /// The limits of posts, comments, thumbs and post searches, whose buckets ``Posts`` keeps.
    public let posts: PostRateLimits

    public init(_ limits: RateLimits, now: @escaping @Sendable () -> Date) {
        self.fixes = RequestRates(limits.fixes, now: now)
        self.nearby = RequestRates(limits.nearby, now: now)
        self.messages = RequestRates(limits.messages, now: now)
        self.friendRequests = RequestRates(limits.friendRequests, now: now)
        self.leaderboards = RequestRates(limits.leaderboards, now: now)
        self.registrations = RequestRates(limits.registrations, now: now)
        self.sharedLists = RequestRates(limits.sharedLists, now: now)
        self.peopleSearches = RequestRates(limits.peopleSearches, now: now)
        self.follows = RequestRates(limits.follows, now: now)
        self.posts = limits.posts
    }
}
