import Foundation

/// Who may read a ride list (docs: Lists).
public enum ListVisibility: String, Hashable, Sendable, CaseIterable, NamedCases {
    /// The owner only.
    case `private`
    /// The owner and their accepted friends.
    case friends
    /// Every signed-in user.
    case `public`
    /// The owner and whoever holds its share link (read only); revocable.
    case link
}

/// What a list item is: a catalogue ride or a catalogue park.
public enum ListItemTarget: Hashable, Sendable {
    case ride(RideID)
    case park(ParkID)

    /// `ride` or `park`, as the wire and the stores name the kind.
    public var kind: String {
        switch self {
        case .ride: "ride"
        case .park: "park"
        }
    }

    public var id: String {
        switch self {
        case .ride(let id): id.rawValue
        case .park(let id): id.rawValue
        }
    }
}

/// How an item came to be checked.
public enum ListCheckSource: String, Hashable, Sendable, CaseIterable, NamedCases {
    /// A validated ride log of the ride (the geofences saw the rider at it).
    case rideLog = "ride-log"
    /// A validated visit to the park.
    case visit
    /// The owner ticked it.
    case hand = "by hand"
}

/// When and how an item was checked.
public struct ListCheck: Hashable, Sendable {
    public var at: Date
    public var source: ListCheckSource

    public init(at: Date, source: ListCheckSource) {
        self.at = at
        self.source = source
    }
}

/// The order of a list's items.
public enum ListSort: String, Hashable, Sendable, CaseIterable, NamedCases {
    /// The owner's order (`position`).
    case custom
    /// Newest added first.
    case added
    case name
    /// By park name, then position.
    case park
    /// Tallest first; items without a height last.
    case height
    /// Fastest first; items without a speed last.
    case speed
}

/// A new list, before it is stored.
public struct ListDraft: Hashable, Sendable {
    public var title: String
    public var description: String
    public var visibility: ListVisibility
    /// A photo of the owner's (the photo pipeline checked and stripped it).
    public var cover: Int64?

    public init(title: String, description: String = "", visibility: ListVisibility = .private, cover: Int64? = nil) {
        self.title = title
        self.description = description
        self.visibility = visibility
        self.cover = cover
    }
}

/// A change to a list's own fields; `nil` leaves a field as it is.
public struct ListEdit: Hashable, Sendable {
    public var title: String?
    public var description: String?
    public var visibility: ListVisibility?
    /// `.some(nil)` removes the cover.
    public var cover: Int64??
    /// Revokes the share link and issues a new one (a `link` list only).
    public var newLink: Bool

    public init(title: String? = nil, description: String? = nil, visibility: ListVisibility? = nil, cover: Int64?? = nil, newLink: Bool = false) {
        self.title = title
        self.description = description
        self.visibility = visibility
        self.cover = cover
        self.newLink = newLink
    }
}

/// A change to one item; `nil` leaves a field as it is.
public struct ListItemEdit: Hashable, Sendable {
    /// The new 0-based place in the owner's order; the items between move by one.
    public var position: Int?
    /// `.some(nil)` removes the note.
    public var note: String??
    /// `true` checks it by hand; `false` unchecks it, and a later ride log or visit leaves it
    /// unchecked (the owner's word sticks) until it is checked by hand again.
    public var checked: Bool?

    public init(position: Int? = nil, note: String?? = nil, checked: Bool? = nil) {
        self.position = position
        self.note = note
        self.checked = checked
    }
}

/// The bounds and rules of lists, shared by both stores and the HTTP layer.
public struct ListRules: Hashable, Sendable {
    public var maximumItems = 1_000
    public var maximumLists = 200
    /// Lists one user may follow, and users whose lists they may follow.
    public var maximumFollows = 1_000

    public static let title = TextLimits(atMost: 200, atLeast: 1)
    public static let description = TextLimits(atMost: 2_000)
    public static let note = TextLimits(atMost: 500)

    public init() {}

    /// Why each field of a draft is refused, by its JSON name; empty when it may be stored.
    public func violations(_ draft: ListDraft) -> [(field: String, reason: String)] {
        var refused: [(String, String)] = []
        if Self.title.violation(draft.title) != nil || draft.title.allSatisfy(\.isWhitespace) { refused.append(("title", Self.title.rule)) }
        if Self.description.violation(draft.description) != nil { refused.append(("description", Self.description.rule)) }
        return refused
    }

    /// Why each field of an edit is refused; empty when it may be stored.
    public func violations(_ edit: ListEdit) -> [(field: String, reason: String)] {
        var refused: [(String, String)] = []
        if let title = edit.title, Self.title.violation(title) != nil || title.allSatisfy(\.isWhitespace) { refused.append(("title", Self.title.rule)) }
        if let description = edit.description, Self.description.violation(description) != nil {
            refused.append(("description", Self.description.rule))
        }
        return refused
    }

    /// Why a note is refused, or `nil`.
    public func noteViolation(_ note: String) -> String? { Self.note.violation(note) == nil ? nil : Self.note.rule }

    /// When others may see a check: one made by a ride log or a visit says where the owner was,
    /// so it is shown to others only once that place is older than the location time-to-live
    /// (the rule of ``LocationPrivacy``); one made by hand says nothing of a place and shows at
    /// once. The owner sees every check at once.
    public static func shownAt(_ check: ListCheck, privacy: LocationPrivacy) -> Date {
        check.source == .hand ? check.at : privacy.placeShownAt(check.at)
    }

    /// A new share token: 128 random bits, base64url, unguessable.
    public static func newShareToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }).base64URLEncoded
    }
}
