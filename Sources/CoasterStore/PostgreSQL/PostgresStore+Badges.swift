import CoasterCore
import Foundation
import PostgresNIO

extension PostgresStore: BadgeStore {
    /// Badges earned (known rules only, in the order of ``Badge/all``) and the facts behind progress.
    public func badges(of user: UserID) async throws -> (earned: [EarnedBadge], facts: RiderFacts) {
        let (facts, earned) = try await self.single { tx in try await Self.factsAndBadges(user, tx) }
        return (earned, facts)
    }

    /// A rider's facts, for badge rules.
    static func riderFacts(_ user: UserID, _ tx: PostgresTransaction) async throws -> RiderFacts {
        try await Self.badgeRecord(user, tx).facts
    }

    /// A rider's facts and the badges they have earned (in ``Badge/all``'s order), in one
    /// statement; with `shownBefore` (``LocationPrivacy/placesShownBefore(_:)``) the facts as
    /// anyone else may see them: only the ride logs before it and the visits over before it
    /// count, since a count that moves says its rider is riding, or entered a new park, now.
    static func factsAndBadges(_ user: UserID, shownBefore: Date? = nil,
                               _ tx: PostgresTransaction) async throws -> (facts: RiderFacts, earned: [EarnedBadge]) {
        let record = try await Self.badgeRecord(user, shownBefore: shownBefore, tx)
        return (record.facts, record.earnedInOrder)
    }

    /// Awards every badge the rider's facts now earn and they do not have yet.
    static func awardBadges(_ user: UserID, at: Date, _ tx: PostgresTransaction) async throws {
        let record = try await Self.badgeRecord(user, tx)
        let new = Badge.newlyEarned(record.facts, earned: Set(record.earned.keys))
        guard !new.isEmpty else { return }
        try await tx.run("""
            INSERT INTO badges (user_id, badge_id, earned_at)
            SELECT \(user.rawValue), b, \(at.timeIntervalSince1970) FROM unnest(\(new.map(\.id))::text[]) AS b
            ON CONFLICT (user_id, badge_id) DO NOTHING
            """)
    }

    /// A rider's facts and the badges they hold, in one statement (one snapshot).
    ///
    /// The ride facts come from how often they have ridden each ride (`ride_counts`, kept by
    /// triggers on `ride_logs`): one row a ride they have ridden, not one a ride log, less the
    /// logs from `shownBefore` on (a range of `ride_logs_by_time`, empty for the rider's own).
    /// The parks visited are found one after the other on the index of visits by user and park,
    /// one search a park, however many visits there were (a count of the distinct parks read
    /// every visit). The challenges won are a range of `challenge_wins`, which holds winners only.
    private static func badgeRecord(_ user: UserID, shownBefore: Date? = nil, _ tx: PostgresTransaction) async throws -> BadgeRecord {
        let settled = shownBefore?.timeIntervalSince1970 ?? Double.infinity
        let row = try await tx.one("""
            WITH recent AS (
                SELECT ride_id, count(*) AS n FROM ride_logs WHERE user_id = \(user.rawValue) AND ridden_at > \(settled) GROUP BY ride_id
            ), counted AS (
                SELECT c.ride_id, c.rides - coalesce(recent.n, 0) AS rides
                FROM ride_counts c LEFT JOIN recent ON recent.ride_id = c.ride_id WHERE c.user_id = \(user.rawValue)
            )
            SELECT coalesce(sum(c.rides), 0)::bigint, count(CASE WHEN c.rides > 0 THEN 1 END),
                   count(CASE WHEN c.rides > 0 AND r.type = 'coaster' THEN 1 END), coalesce(max(c.rides), 0)::bigint,
                   (WITH RECURSIVE seen(park) AS (
                        SELECT (SELECT min(park_id) FROM visits
                                WHERE user_id = \(user.rawValue) AND coalesce(left_at, last_evidence_at) <= \(settled))
                        UNION ALL
                        SELECT (SELECT min(v.park_id) FROM visits v
                                WHERE v.user_id = \(user.rawValue) AND v.park_id > seen.park AND coalesce(v.left_at, v.last_evidence_at) <= \(settled))
                        FROM seen WHERE seen.park IS NOT NULL
                    )
                    SELECT count(park) FROM seen),
                   (SELECT count(*) FROM challenge_members WHERE user_id = \(user.rawValue) AND won),
                   ARRAY(SELECT badge_id FROM badges WHERE user_id = \(user.rawValue) ORDER BY badge_id),
                   ARRAY(SELECT earned_at FROM badges WHERE user_id = \(user.rawValue) ORDER BY badge_id)
            FROM counted c JOIN rides r ON r.id = c.ride_id
            """)
        let (total, distinct, credits, most, parks, won, badgeIDs, earnedAt) =
            try row.decode((Int, Int, Int, Int, Int, Int, [String], [Double]).self)
        var earned: [String: Date] = [:]
        for (badge, at) in zip(badgeIDs, earnedAt) { earned[badge] = Date(timeIntervalSince1970: at) }
        return BadgeRecord(
            facts: RiderFacts(totalRides: total, coasterCredits: credits, parksVisited: parks, mostRidesOfOneRide: most,
                              distinctRides: distinct, challengesWon: won),
            earned: earned)
    }
}

/// What a rider has done and the badges they hold (by id, with when each was earned).
private struct BadgeRecord: Sendable {
    var facts: RiderFacts
    var earned: [String: Date]

    /// Known badges only, in ``Badge/all``'s order.
    var earnedInOrder: [EarnedBadge] {
        Badge.all.compactMap { badge in self.earned[badge.id].map { EarnedBadge(badge: badge, earnedAt: $0) } }
    }
}
