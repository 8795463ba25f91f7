import CoasterCore
import Foundation

/// Friendships, requests, blocks and per-friend sharing.
public protocol FriendStore: Sendable {
    /// How `me` stands to `them`.
    func relationship(of me: UserID, to them: UserID) async throws -> Relationship

    /// Sends a friend request to a canonical username; accepts theirs if they asked first.
    func requestFriend(from me: UserID, to username: String) async throws -> FriendRequestOutcome

    /// Accepts or declines the pending request `them` sent to `me`.
    func answerRequest(of me: UserID, from them: UserID, accept: Bool) async throws -> UserSummary

    /// Withdraws the pending request `me` sent to `them`.
    func cancelRequest(of me: UserID, to them: UserID) async throws

    /// Ends a friendship, and the sharing overrides either side had for the other.
    func removeFriend(of me: UserID, _ them: UserID) async throws

    /// Blocks a user: any friendship, request or follow between the two ends, and each is hidden from the
    /// other everywhere. Blocking twice is harmless.
    func block(of me: UserID, _ them: UserID) async throws -> UserSummary

    func unblock(of me: UserID, _ them: UserID) async throws

    /// A page of `limit` accepted friends by display name (``NamePosition``), after `after`.
    /// `lastSeen` respects each friend's sharing towards `me`. A page sorts every friend (at most
    /// ``FriendRules/maximumFriends``): no index orders another person's names.
    func friends(of me: UserID, limit: Int, after: NamePosition?) async throws -> [FriendListing]

    /// Pending requests to and from `me`, newest first: a page of `limit` incoming requests (after
    /// `after`), a range of the index by recipient and time however many there are; every outgoing
    /// one (at most ``FriendRules/maximumPendingRequests``).
    func friendRequests(of me: UserID, limit: Int, after: ListPosition?)
        async throws -> (incoming: [FriendRequestListing], outgoing: [FriendRequestListing])

    /// A page of `limit` users `me` has blocked, newest first, after `after`: a range of the index
    /// by blocker and time, however many they have blocked.
    func blocks(of me: UserID, limit: Int, after: ListPosition?) async throws -> [BlockListing]

    /// Sets (or with `nil` clears) what `me` shows one friend.
    func setSharingOverride(of me: UserID, for friend: UserID, _ override: SharingOverride?) async throws
}

extension FriendStore {
    /// Every friend of `me`, by name.
    public func friends(of me: UserID) async throws -> [FriendListing] {
        try await self.friends(of: me, limit: FriendRules.maximumFriends, after: nil)
    }
}
