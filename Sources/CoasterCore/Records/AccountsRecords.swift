import Foundation

/// Why an account operation was refused by what the store holds.
public enum AccountError: Error, Equatable, Sendable {
    case usernameTaken(String)
    case noSuchUser
}

/// What the authenticator needs to know of a session's user.
public struct SessionUser: Hashable, Sendable {
    public var id: UserID
    public var username: String
    public var role: Role
    /// When the session ends by itself.
    public var expiresAt: Date

    public init(id: UserID, username: String, role: Role, expiresAt: Date) {
        self.id = id
        self.username = username
        self.role = role
        self.expiresAt = expiresAt
    }
}

/// What a login checks a password against.
public struct Credentials: Sendable {
    public var id: UserID
    public var passwordHash: String

    public init(id: UserID, passwordHash: String) {
        self.id = id
        self.passwordHash = passwordHash
    }
}

/// A change to a profile; `nil` fields stay as they are.
public struct ProfileChanges: Sendable {
    public var displayName: String?
    public var bio: String?
    public var ghost: GhostMode?
    public var precision: Precision?
    public var discoverable: Bool?
    /// `.some(nil)` clears the status.
    public var status: ProfileStatus??
    /// A catalogue park's id; `.some(nil)` clears it.
    public var homePark: ParkID??
    /// Catalogue ride ids (or fenced rides' ids, taken as their catalogue entries), in order;
    /// replaces the list, `[]` clears it.
    public var favouriteRides: [RideID]?
    /// Whether people search and suggestions may show the user (docs: People).
    public var findable: Bool?

    public init(displayName: String? = nil, bio: String? = nil, ghost: GhostMode? = nil, precision: Precision? = nil,
                discoverable: Bool? = nil, status: ProfileStatus?? = nil, homePark: ParkID?? = nil, favouriteRides: [RideID]? = nil,
                findable: Bool? = nil) {
        self.discoverable = discoverable
        self.status = status
        self.homePark = homePark
        self.favouriteRides = favouriteRides
        self.findable = findable
        self.displayName = displayName
        self.bio = bio
        self.ghost = ghost
        self.precision = precision
    }
}

/// A revoked session (`tokenHash`), or every session of `user` when `tokenHash` is `nil`.
public struct Revocation: Hashable, Sendable {
    public var seq: Int64
    public var tokenHash: Data?
    public var user: UserID

    public init(seq: Int64, tokenHash: Data?, user: UserID) {
        self.seq = seq
        self.tokenHash = tokenHash
        self.user = user
    }
}
