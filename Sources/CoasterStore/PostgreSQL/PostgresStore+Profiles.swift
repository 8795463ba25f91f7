import CoasterCore
import Foundation
import PostgresNIO

extension PostgresStore: ProfileStore {
    /// The profile page of `user` as `viewer` may see it, read in one transaction (one snapshot:
    /// a friendship ended meanwhile cannot leave half a page): `nil` unless `user` is the viewer
    /// or an accepted friend of theirs, and exists.
    public func profilePage(of user: UserID, viewer: UserID, privacy: LocationPrivacy) async throws -> ProfilePage? {
        let shownBefore = user == viewer ? nil : privacy.placesShownBefore(self.now())
        return try await self.read { tx -> ProfilePage? in
            guard try await Self.isSelfOrFriend(user, of: viewer, tx) else { return nil }
            guard let row = try await tx.first("SELECT id, username, display_name, bio, photo_id FROM users WHERE id = \(user.rawValue)") else {
                return nil
            }
            let (id, username, displayName, bio, photo) = try row.decode((Int64, String, String, String, Int64?).self)
            let (facts, badges) = try await Self.factsAndBadges(user, shownBefore: shownBefore, tx)
            guard let people = try await Self.peopleColumns(user, tx) else { return nil }
            let followed = try await tx.first("SELECT 1 FROM user_follows WHERE follower_id = \(viewer.rawValue) AND followee_id = \(user.rawValue)") != nil
            return ProfilePage(summary: UserSummary(id: UserID(id), username: username, displayName: displayName), bio: bio, photo: photo,
                               stats: RiderStats(facts), badges: badges, card: people.card, follows: people.follows, followedByViewer: followed)
        }
    }
}
