import CoasterCore
import CoasterStore
import Foundation
import Logging

/// How many challenge requests of each kind one user may make (docs: Challenges, "Limits").
public struct ChallengeRateLimits: Hashable, Sendable {
    /// New challenges: a handful at once, then one a minute.
    public var creations = RateLimit(perSecond: 1.0 / 60, burst: 20)
    /// Invitation requests (each names up to ``ChallengeRules/maximumInvitees`` friends).
    public var invitations = RateLimit(perSecond: 0.2, burst: 30)
    /// Hand entries.
    public var entries = RateLimit(perSecond: 1, burst: 60)
    /// Likes and unlikes: each moves a public challenge's trending score.
    public var likes = RateLimit(perSecond: 1, burst: 60)

    public init() {}
}

/// Challenges among friends (docs: Challenges): their rules, their rate limits, and the live
/// pushes that follow a ride log or an entry. The store does the rest, each operation one
/// transaction (``ChallengeStore``).
public final class Challenges: Sendable {
    public let store: any Store
    public let live: Live
    public let rules: ChallengeRules
    /// The location time-to-live: counted progress is shown to others once this old.
    public let timeToLive: TimeInterval
    public let creations: RequestRates
    public let invitations: RequestRates
    public let entries: RequestRates
    public let likes: RequestRates
    public let now: @Sendable () -> Date
    let logger: Logger

    public init(store: any Store, live: Live, privacy: LocationPrivacy, limits: ChallengeRateLimits = ChallengeRateLimits(),
                rules: ChallengeRules = ChallengeRules(), now: @escaping @Sendable () -> Date, logger: Logger = Logger(label: "challenges")) {
        self.store = store
        self.live = live
        self.rules = rules
        self.timeToLive = privacy.timeToLive
        self.creations = RequestRates(limits.creations, now: now)
        self.invitations = RequestRates(limits.invitations, now: now)
        self.entries = RequestRates(limits.entries, now: now)
        self.likes = RequestRates(limits.likes, now: now)
        self.now = now
        self.logger = logger
    }

    /// After a ride log committed: the rider's own progress and rank in each challenge it counted
    /// for, to the rider's live connections. Asked of the store only when the rider listens; no
    /// one else hears of it until it is older than the location time-to-live (the settling sweep).
    public func rideLogged(_ log: Int64, by rider: UserID) async {
        guard self.live.isListening(rider) else { return }
        do {
            let moves = try await self.store.challengeMoves(of: rider, source: "ride-log", id: log)
            self.live.ownProgress(moves)
        } catch {
            // The log is committed and the ranking right; only this push is lost.
            self.logger.warning("challenge moves of a ride log", metadata: ["error": "\(error)"])
        }
    }

    /// After an entry was added or deleted: the mover's own view to them, their shown view to
    /// every other participant listening.
    public func entryMoved(_ move: ChallengeMove) async {
        do {
            try await self.live.challengesMoved([move], store: self.store)
        } catch {
            self.logger.warning("challenge push after an entry", metadata: ["error": "\(error)"])
        }
    }
}
