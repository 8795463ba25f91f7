import Foundation

/// A user's numeric id.
public struct UserID: RawRepresentable, Hashable, Sendable, Codable, Comparable, CustomStringConvertible {
    public let rawValue: Int64
    public init(rawValue: Int64) { self.rawValue = rawValue }
    public init(_ value: Int64) { self.rawValue = value }
    public var description: String { String(self.rawValue) }
    public static func < (a: UserID, b: UserID) -> Bool { a.rawValue < b.rawValue }

    public init(from decoder: any Decoder) throws {
        self.rawValue = try decoder.singleValueContainer().decode(Int64.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(self.rawValue)
    }
}

/// What a user may do: members use the app, admins also load parks.
public enum Role: String, Sendable, Codable, CaseIterable, NamedCases {
    case member, admin
}

/// Why an account field was refused.
public enum AccountRuleViolation: Error, Equatable, Sendable, CustomStringConvertible {
    case usernameLength
    case usernameCharacters
    case passwordTooShort(minimum: Int)
    case passwordTooLong(maximumBytes: Int)
    case displayNameLength
    case bioLength
    /// A NUL character, in a password, display name or bio.
    case nul(field: String)

    public var field: String {
        switch self {
        case .usernameLength, .usernameCharacters: "username"
        case .passwordTooShort, .passwordTooLong: "password"
        case .displayNameLength: "displayName"
        case .bioLength: "bio"
        case .nul(let field): field
        }
    }

    public var description: String {
        switch self {
        case .usernameLength: "a username has 3 to 32 characters"
        case .usernameCharacters: "a username uses only a-z, 0-9, '_' and '.'"
        case .passwordTooShort(let minimum): "a password has at least \(minimum) characters"
        case .passwordTooLong(let maximum):
            "a password has at most \(maximum) bytes in UTF-8 (bcrypt ignores anything longer)"
        case .displayNameLength: "a display name has \(TextLimits.displayName.rule)"
        case .bioLength: "a bio has \(TextLimits.bio.rule)"
        case .nul: "the text may not hold a NUL character (U+0000)"
        }
    }
}

/// The account rules, as pure functions.
public enum AccountRules {
    public static let minimumPasswordLength = 10
    /// bcrypt reads only the first 72 bytes; refusing longer passwords keeps two different long
    /// passwords from being the same password.
    public static let maximumPasswordBytes = 72

    /// Usernames are case-insensitive: stored and compared in lowercase.
    /// - Returns: the canonical (lowercased) username.
    public static func username(_ raw: String) throws(AccountRuleViolation) -> String {
        let name = raw.lowercased()
        guard (3...32).contains(name.unicodeScalars.count) else { throw .usernameLength }
        guard name.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" || $0 == "." })
        else { throw .usernameCharacters }
        return name
    }

    public static func password(_ password: String) throws(AccountRuleViolation) {
        guard password.utf8.count <= maximumPasswordBytes else { throw .passwordTooLong(maximumBytes: maximumPasswordBytes) }
        // bcrypt reads a password as a C string: everything after a NUL would be ignored.
        guard !password.utf8.contains(0) else { throw .nul(field: "password") }
        guard password.count >= minimumPasswordLength else { throw .passwordTooShort(minimum: minimumPasswordLength) }
    }

    public static func displayName(_ name: String) throws(AccountRuleViolation) -> String {
        // Bytes first: trimming walks the whole text.
        guard name.utf8.count <= 4 * TextLimits.displayName.bytes else { throw .displayNameLength }
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        switch TextLimits.displayName.violation(trimmed) {
        case nil: return trimmed
        case .nul: throw .nul(field: "displayName")
        case .tooShort, .tooLong, .tooManyBytes: throw .displayNameLength
        }
    }

    public static func bio(_ bio: String) throws(AccountRuleViolation) -> String {
        switch TextLimits.bio.violation(bio) {
        case nil: return bio
        case .nul: throw .nul(field: "bio")
        case .tooShort, .tooLong, .tooManyBytes: throw .bioLength
        }
    }
}

/// A user as they see themselves.
public struct UserProfile: Hashable, Sendable {
    public var id: UserID
    public var username: String
    public var displayName: String
    public var bio: String
    public var role: Role
    public var createdAt: Date
    public var sharing: SharingSettings
    /// Visible to non-friends who visit the same park.
    public var discoverable: Bool
    /// Status, home park and favourite rides.
    public var card: ProfileCard
    /// Shown by people search and suggestions (docs: People).
    public var findable: Bool
    public var follows: FollowCounts

    public init(id: UserID, username: String, displayName: String, bio: String, role: Role, createdAt: Date, sharing: SharingSettings,
                discoverable: Bool = false, card: ProfileCard = ProfileCard(), findable: Bool = false, follows: FollowCounts = FollowCounts()) {
        self.discoverable = discoverable
        self.card = card
        self.findable = findable
        self.follows = follows
        self.id = id
        self.username = username
        self.displayName = displayName
        self.bio = bio
        self.role = role
        self.createdAt = createdAt
        self.sharing = sharing
    }
}

/// Another user as a friend list shows them.
public struct UserSummary: Hashable, Sendable {
    public var id: UserID
    public var username: String
    public var displayName: String

    public init(id: UserID, username: String, displayName: String) {
        self.id = id
        self.username = username
        self.displayName = displayName
    }
}
