import CoasterCore
import CoasterStore
import Foundation
import Logging

/// How many list requests of each kind one user may make (docs: Lists, "Limits").
public struct ListRateLimits: Hashable, Sendable {
    /// New lists and copies: a handful at once, then one every ten seconds.
    public var creations = RateLimit(perSecond: 0.1, burst: 30)
    /// Item writes (add, move, annotate, check, remove): building a list from the catalogue is
    /// many quick adds.
    public var items = RateLimit(perSecond: 5, burst: 200)
    /// Likes and follows, of one list or of a user's lists: each lands in someone's counts.
    public var social = RateLimit(perSecond: 1, burst: 60)

    public init() {}
}

/// Ride lists (docs: Lists): their rules, their rate limits, and the live pushes of the changes
/// followers see. The store does the rest, each operation one transaction (``ListStore``).
public final class Lists: Sendable {
    public let store: any Store
    public let live: Live
    public let rules: ListRules
    /// Whose location rule decides when others see a check made by evidence.
    public let privacy: LocationPrivacy
    public let creations: RequestRates
    public let items: RequestRates
    public let social: RequestRates
    public let now: @Sendable () -> Date
    let logger: Logger

    /// Changes delivered in one transaction.
    public static let deliveryBatch = 500
    /// Batches one delivery takes at most: a backlog waits for the next sweep, so that it never
    /// holds the writer (or a request) for long.
    public static let deliveryBatches = 20

    public init(store: any Store, live: Live, privacy: LocationPrivacy, limits: ListRateLimits = ListRateLimits(), rules: ListRules = ListRules(),
                now: @escaping @Sendable () -> Date, logger: Logger = Logger(label: "lists")) {
        self.store = store
        self.live = live
        self.rules = rules
        self.privacy = privacy
        self.creations = RequestRates(limits.creations, now: now)
        self.items = RequestRates(limits.items, now: now)
        self.social = RequestRates(limits.social, now: now)
        self.now = now
        self.logger = logger
    }

    /// After a list write that recorded a change (an item added, a check by hand): the changes
    /// due now, to the followers listening. A hand check is shown at once, so its followers hear
    /// of it here, not at the next sweep.
    public func changed() async {
        do {
            try await Self.deliver(store: self.store, privacy: self.privacy, now: self.now(), live: self.live)
        } catch {
            // The write is committed and the change on the followers' page; the sweep pushes it.
            self.logger.warning("list change push after a write", metadata: ["error": "\(error)"])
        }
    }

    /// After a ride log or a visit committed. The checks it made are shown to others only once
    /// the location time-to-live has passed (``ListRules/shownAt(_:privacy:)``), so none is due
    /// now unless that time is zero: then they are delivered here; else the sweep delivers them
    /// when they come due, and this costs nothing (no write on the ride-log path).
    public func evidenceCommitted() async {
        guard self.privacy.timeToLive <= 0 else { return }
        await self.changed()
    }

    /// Marks the changes due by `now` delivered, in bounded batches, and pushes each to its
    /// followers who listen on `live`: one `list-change` message a change and follower.
    /// Returns how many changes were delivered.
    @discardableResult
    public static func deliver(store: any Store, privacy: LocationPrivacy, now: Date, live: Live) async throws -> Int {
        var delivered = 0
        for _ in 0..<Self.deliveryBatches {
            let batch = try await store.deliverListChanges(now: now, privacy: privacy, limit: Self.deliveryBatch)
            live.listChanges(batch)
            delivered += batch.count
            if batch.count < Self.deliveryBatch { break }
        }
        return delivered
    }
}
