import CoasterCore
import Foundation

/// Following a user's public posts (docs: People). The home feed reads `user_follows` itself.
public protocol FollowStore: Sendable {
    /// Whether `follower` follows `followee`.
    func isFollowing(_ follower: UserID, _ followee: UserID) async throws -> Bool

    /// `follower` follows `followee`; following again is harmless. Throws
    /// ``PeopleError/cannotFollowSelf``, ``FriendshipError/noSuchUser`` when there is no such user
    /// or either has blocked the other (the same answer: a block says nothing), and
    /// ``PeopleError/tooManyFollows(limit:)`` past ``PeopleRules/maximumFollowing``.
    func follow(_ follower: UserID, _ followee: UserID, rules: PeopleRules) async throws

    /// `follower` stops following `followee`; harmless when they did not.
    func unfollow(_ follower: UserID, _ followee: UserID) async throws
}
