import CoasterCore
import Foundation
import GRDB

extension SpatiaLiteStore {
    /// The profile page of `user` as `viewer` may see it, read in one transaction (one hop to the
    /// reader pool, one snapshot: a friendship ended meanwhile cannot leave half a page): `nil`
    /// unless `user` is the viewer or an accepted friend of theirs, and exists.
    public func profilePage(of user: UserID, viewer: UserID) async throws -> ProfilePage? {
        try await self.pool.read { db -> ProfilePage? in
            guard try Self.isSelfOrFriend(user, of: viewer, db) else { return nil }
            let statement = try db.cachedStatement(sql: "SELECT id, username, display_name, bio, photo_id FROM users WHERE id = ?")
            guard let row = try Row.fetchOne(statement, arguments: [user.rawValue]) else { return nil }
            let facts = try Self.riderFacts(user, db)
            return ProfilePage(summary: Self.summary(row), bio: row["bio"], photo: row["photo_id"], stats: RiderStats(facts),
                               badges: try Self.earnedBadges(user, db))
        }
    }
}
