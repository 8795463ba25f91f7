import Foundation

/// What a user's profile page shows (`ProfileStore.profilePage(of:viewer:privacy:)`).
public struct ProfilePage: Hashable, Sendable {
    public var summary: UserSummary
    public var bio: String
    public var photo: Int64?
    public var stats: RiderStats
    public var badges: [EarnedBadge]
    public var card: ProfileCard
    public var follows: FollowCounts
    /// The viewer follows this user's public posts.
    public var followedByViewer: Bool

    public init(summary: UserSummary, bio: String, photo: Int64?, stats: RiderStats, badges: [EarnedBadge], card: ProfileCard = ProfileCard(),
                follows: FollowCounts = FollowCounts(), followedByViewer: Bool = false) {
        self.summary = summary
        self.bio = bio
        self.photo = photo
        self.stats = stats
        self.badges = badges
        self.card = card
        self.follows = follows
        self.followedByViewer = followedByViewer
    }
}
