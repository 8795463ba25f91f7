import CoasterCore
import Foundation
import GRDB

extension SpatiaLiteStore {
    /// A rider's facts, for badge rules and their own statistics; with `shownBefore`
    /// (``LocationPrivacy/placesShownBefore(_:)``), as anyone else may see them: only the ride
    /// logs before it and the visits over before it count, since a count that moves says its
    /// rider is riding, or entered a new park, now.
    static func riderFacts(_ user: UserID, shownBefore: Date? = nil, _ db: Database) throws -> RiderFacts {
        let arguments: StatementArguments = ["user": user.rawValue, "settled": shownBefore?.timeIntervalSince1970 ?? Double.infinity]
        let row = try Row.fetchOne(db.cachedStatement(sql: Self.rideFacts), arguments: arguments)!
        let parks = try Int.fetchOne(db.cachedStatement(sql: Self.parksVisited), arguments: arguments) ?? 0
        let won = try Int.fetchOne(db.cachedStatement(sql: Self.challengesWon), arguments: [user.rawValue]) ?? 0
        return RiderFacts(totalRides: row["total"], coasterCredits: row["credits"], parksVisited: parks, mostRidesOfOneRide: row["most"],
                          distinctRides: row["distinct_rides"], challengesWon: won)
    }

    /// How many challenges a rider won: a range of `challenge_wins`, which holds winners only.
    static let challengesWon = "SELECT count(*) FROM challenge_members WHERE user_id = ? AND won = 1"

    /// How many parks a rider has visited in visits over before `:settled`: each park found
    /// after the last on the index of visits by user and park, one search a park, however many
    /// visits there were (a count of the distinct parks read every visit).
    static let parksVisited = """
        WITH RECURSIVE seen(park) AS (
            SELECT (SELECT min(park_id) FROM visits WHERE user_id = :user AND coalesce(left_at, last_evidence_at) <= :settled)
            UNION ALL
            SELECT (SELECT min(park_id) FROM visits WHERE user_id = :user AND park_id > seen.park AND coalesce(left_at, last_evidence_at) <= :settled)
            FROM seen WHERE seen.park IS NOT NULL
        )
        SELECT count(park) FROM seen
        """

    /// A rider's ride facts from how often they have ridden each ride (`ride_counts`, kept by
    /// triggers on `ride_logs`): one row a ride they have ridden, not one a ride log; less the
    /// logs from `:settled` on (a range of `ride_logs_by_time`, empty for the rider's own).
    static let rideFacts = """
        WITH recent(ride_id, n) AS (
            SELECT ride_id, count(*) FROM ride_logs INDEXED BY ride_logs_by_time WHERE user_id = :user AND ridden_at > :settled GROUP BY ride_id
        ), counted(ride_id, rides) AS (
            SELECT c.ride_id, c.rides - coalesce(recent.n, 0) FROM ride_counts c LEFT JOIN recent ON recent.ride_id = c.ride_id WHERE c.user_id = :user
        )
        SELECT coalesce(sum(c.rides), 0) AS total, count(CASE WHEN c.rides > 0 THEN 1 END) AS distinct_rides,
               count(CASE WHEN c.rides > 0 AND r.type = 'coaster' THEN 1 END) AS credits, coalesce(max(c.rides), 0) AS most
        FROM counted c JOIN rides r ON r.id = c.ride_id
        """

    /// Awards every badge the rider's facts now earn and they do not have yet.
    static func awardBadges(_ user: UserID, at: Date, _ db: Database) throws {
        let facts = try Self.riderFacts(user, db)
        let earned = Set(try String.fetchAll(db, sql: "SELECT badge_id FROM badges WHERE user_id = ?", arguments: [user.rawValue]))
        for badge in Badge.newlyEarned(facts, earned: earned) {
            try db.execute(sql: "INSERT OR IGNORE INTO badges (user_id, badge_id, earned_at) VALUES (?, ?, ?)",
                           arguments: [user.rawValue, badge.id, at.timeIntervalSince1970])
        }
    }

    /// Badges earned (known rules only, in the order of ``Badge/all``) and the facts behind progress.
    public func badges(of user: UserID) async throws -> (earned: [EarnedBadge], facts: RiderFacts) {
        try await self.pool.read { db in (try Self.earnedBadges(user, db), try Self.riderFacts(user, db)) }
    }

    /// The badges `user` has earned, in ``Badge/all``'s order.
    static func earnedBadges(_ user: UserID, _ db: Database) throws -> [EarnedBadge] {
        var earned: [String: Date] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT badge_id, earned_at FROM badges WHERE user_id = ?", arguments: [user.rawValue]) {
            earned[row["badge_id"]] = Date(timeIntervalSince1970: row["earned_at"])
        }
        return Badge.all.compactMap { b in earned[b.id].map { EarnedBadge(badge: b, earnedAt: $0) } }
    }
}
