import Foundation

/// How precisely a user's location is shown to a friend.
public enum Precision: String, Sendable, Codable, CaseIterable, Comparable, NamedCases {
    /// The position as reported.
    case exact
    /// Snapped to a grid before any distance is computed.
    case approximate
    /// Only which park, never a position.
    case parkOnly = "park-only"

    private var rank: Int {
        switch self {
        case .exact: 0
        case .approximate: 1
        case .parkOnly: 2
        }
    }

    /// Coarser is greater.
    public static func < (a: Precision, b: Precision) -> Bool { a.rank < b.rank }
}

/// Ghost mode hides a user from every location answer.
public enum GhostMode: Hashable, Sendable {
    case off
    case on
    /// Hidden until this time, then visible again without another request.
    case until(Date)

    public func isHidden(at now: Date) -> Bool {
        switch self {
        case .off: false
        case .on: true
        case .until(let end): now < end
        }
    }
}

/// What one friend is shown, overriding the user's defaults for that friend.
public struct SharingOverride: Hashable, Sendable {
    public var precision: Precision?
    /// Hidden from this friend as if in ghost mode.
    public var hidden: Bool

    public init(precision: Precision? = nil, hidden: Bool = false) {
        self.precision = precision
        self.hidden = hidden
    }
}

/// A user's sharing choices.
public struct SharingSettings: Hashable, Sendable {
    public var ghost: GhostMode
    public var precision: Precision
    public var overrides: [UserID: SharingOverride]

    public init(ghost: GhostMode = .off, precision: Precision = .exact, overrides: [UserID: SharingOverride] = [:]) {
        self.ghost = ghost
        self.precision = precision
        self.overrides = overrides
    }

    /// What `viewer` (an accepted friend) may see of this user at `now`: `nil` for nothing.
    public func visibility(to viewer: UserID, at now: Date) -> Precision? {
        if self.ghost.isHidden(at: now) { return nil }
        let override = self.overrides[viewer]
        if override?.hidden == true { return nil }
        return override?.precision ?? self.precision
    }
}
