import Foundation

public struct EarnedBadge: Hashable, Sendable {
    public var badge: Badge
    public var earnedAt: Date

    public init(badge: Badge, earnedAt: Date) {
        self.badge = badge
        self.earnedAt = earnedAt
    }
}
