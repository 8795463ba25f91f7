import CoasterCore
import Foundation

/// The badges a rider has earned.
public protocol BadgeStore: Sendable {
    /// Badges earned (known rules only, in the order of ``Badge/all``) and the facts behind progress.
    func badges(of user: UserID) async throws -> (earned: [EarnedBadge], facts: RiderFacts)
}
