import CoasterCore
import Foundation
import GRDB

extension SpatiaLiteStore: FollowStore {
    public func isFollowing(_ follower: UserID, _ followee: UserID) async throws -> Bool {
        try await self.pool.read { db in
            try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM user_follows WHERE follower_id = ? AND followee_id = ?)"),
                              arguments: [follower.rawValue, followee.rawValue]) ?? false
        }
    }

    public func follow(_ follower: UserID, _ followee: UserID, rules: PeopleRules) async throws {
        let now = self.now().timeIntervalSince1970
        try await self.pool.write { db in
            guard follower != followee else { throw PeopleError.cannotFollowSelf }
            // A block either way answers as no such user does: it says nothing of the block.
            guard try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM users WHERE id = ?)"), arguments: [followee.rawValue]) == true
            else { throw FriendshipError.noSuchUser }
            let relationship = try Self.relationship(follower, followee, db)
            if relationship == .blocking || relationship == .blockedBy { throw FriendshipError.noSuchUser }
            guard try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM user_follows WHERE follower_id = ? AND followee_id = ?)"),
                                    arguments: [follower.rawValue, followee.rawValue]) == false
            else { return }
            let following = try Int.fetchOne(db.cachedStatement(sql: "SELECT following FROM users WHERE id = ?"), arguments: [follower.rawValue]) ?? 0
            guard following < rules.maximumFollowing else { throw PeopleError.tooManyFollows(limit: rules.maximumFollowing) }
            try db.execute(sql: "INSERT INTO user_follows (follower_id, followee_id, at) VALUES (?, ?, ?)",
                           arguments: [follower.rawValue, followee.rawValue, now])
        }
    }

    public func unfollow(_ follower: UserID, _ followee: UserID) async throws {
        try await self.pool.write { db in
            try db.execute(sql: "DELETE FROM user_follows WHERE follower_id = ? AND followee_id = ?", arguments: [follower.rawValue, followee.rawValue])
        }
    }

    /// Ends every follow between `a` and `b`, either way: in a block's transaction.
    static func unfollowBothWays(_ a: UserID, _ b: UserID, _ db: Database) throws {
        try db.execute(sql: """
            DELETE FROM user_follows WHERE (follower_id = :a AND followee_id = :b) OR (follower_id = :b AND followee_id = :a)
            """, arguments: ["a": a.rawValue, "b": b.rawValue])
    }
}
