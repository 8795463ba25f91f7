import CoasterCore
import Foundation
import GRDB

extension SpatiaLiteStore {
    /// The profile page of `user` as `viewer` may see it, read in one transaction (one hop to the
    /// reader pool, one snapshot: a friendship ended meanwhile cannot leave half a page): `nil`
    /// unless `user` is the viewer or an accepted friend of theirs, and exists.
    public func profilePage(of user: UserID, viewer: UserID, privacy: LocationPrivacy) async throws -> ProfilePage? {
        let shownBefore = user == viewer ? nil : privacy.placesShownBefore(self.now())
        return try await self.pool.read { db -> ProfilePage? in
            guard try Self.isSelfOrFriend(user, of: viewer, db) else { return nil }
            let statement = try db.cachedStatement(sql: """
                SELECT id, username, display_name, bio, photo_id, status_emoji, status_text, home_park, followers, following,
                       EXISTS (SELECT 1 FROM user_follows WHERE follower_id = :viewer AND followee_id = :user) AS followed
                FROM users WHERE id = :user
                """)
            guard let row = try Row.fetchOne(statement, arguments: ["user": user.rawValue, "viewer": viewer.rawValue]) else { return nil }
            let facts = try Self.riderFacts(user, shownBefore: shownBefore, db)
            return ProfilePage(summary: Self.summary(row), bio: row["bio"], photo: row["photo_id"], stats: RiderStats(facts),
                               badges: try Self.earnedBadges(user, db), card: try Self.card(user, row, db), follows: Self.followCounts(row),
                               followedByViewer: row["followed"])
        }
    }
}
