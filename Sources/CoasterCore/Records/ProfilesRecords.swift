import Foundation

/// What a user's profile page shows (``SpatiaLiteStore/profilePage(of:viewer:)``).
public struct ProfilePage: Hashable, Sendable {
    public var summary: UserSummary
    public var bio: String
    public var photo: Int64?
    public var stats: RiderStats
    public var badges: [EarnedBadge]

    public init(summary: UserSummary, bio: String, photo: Int64?, stats: RiderStats, badges: [EarnedBadge]) {
        self.summary = summary
        self.bio = bio
        self.photo = photo
        self.stats = stats
        self.badges = badges
    }
}
