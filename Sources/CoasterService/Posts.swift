import CoasterCore
import CoasterStore
import Foundation

/// How many post requests of each kind one user may make (docs: Posts, "Limits").
public struct PostRateLimits: Hashable, Sendable {
    /// Posts and edits: a trip report's worth at once, then one a minute.
    public var posts = RateLimit(perSecond: 1.0 / 60, burst: 20)
    /// Comments: a conversation's pace.
    public var comments = RateLimit(perSecond: 0.5, burst: 30)
    /// Thumbs: each lands in someone's counts.
    public var reactions = RateLimit(perSecond: 2, burst: 100)
    /// Searches: each ranks up to ``PostRules/searchCandidates`` matches.
    public var searches = RateLimit(perSecond: 2, burst: 30)

    public init() {}
}

/// Trip reports (docs: Posts): the rules, the rate limits and the clock and privacy rule the
/// store is handed. The store does the rest, each operation one transaction (``PostStore``).
public final class Posts: Sendable {
    public let store: any Store
    /// Whose location rule decides when others see the visit behind a post's "I was there".
    public let privacy: LocationPrivacy
    public let posts: RequestRates
    public let comments: RequestRates
    public let reactions: RequestRates
    public let searches: RequestRates
    public let now: @Sendable () -> Date

    public init(store: any Store, privacy: LocationPrivacy, limits: PostRateLimits = PostRateLimits(), now: @escaping @Sendable () -> Date) {
        self.store = store
        self.privacy = privacy
        self.posts = RequestRates(limits.posts, now: now)
        self.comments = RequestRates(limits.comments, now: now)
        self.reactions = RequestRates(limits.reactions, now: now)
        self.searches = RequestRates(limits.searches, now: now)
        self.now = now
    }
}
