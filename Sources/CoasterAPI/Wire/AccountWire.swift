import CoasterCore
import CoasterHTTP
import CoasterService
import CoasterStore
import Foundation
import Hummingbird

/// `POST /v1/users`.
struct RegisterRequest: Decodable, Sendable {
    var username: String
    var password: String
    var displayName: String?
}

/// `POST /v1/sessions`.
struct LoginRequest: Decodable, Sendable {
    var username: String
    var password: String
}

struct SessionResponse: ResponseEncodable, Sendable {
    var token: String
    var tokenType = "Bearer"
    var expiresAt: Date
    var user: UserWire
}

/// A user as others see them.
struct UserWire: Codable, JSONObject, Sendable, ResponseEncodable {
    var id: UserID
    var username: String
    var displayName: String

    init(_ user: UserSummary) {
        self.id = user.id
        self.username = user.username
        self.displayName = user.displayName
    }

    init(id: UserID, username: String, displayName: String) {
        self.id = id
        self.username = username
        self.displayName = displayName
    }

    static let members: [JSONMember<Self>] = [.init("displayName", \.displayName), .init("id", \.id.rawValue), .init("username", \.username)]
}

/// Ghost mode on the wire: `{"mode": "off" | "on" | "until", "until": RFC 3339}`.
struct GhostWire: Codable, Sendable {
    enum Mode: String, Codable, Sendable, NamedCases { case off, on, until }
    var mode: Mode
    var until: Date?

    init(_ ghost: GhostMode) {
        switch ghost {
        case .off: self.mode = .off
        case .on: self.mode = .on
        case .until(let end):
            self.mode = .until
            self.until = end
        }
    }

    /// The domain value, or a 400 problem naming what is wrong.
    func ghostMode(at pointer: String, now: Date) throws -> GhostMode {
        switch self.mode {
        case .off: return .off
        case .on: return .on
        case .until:
            guard let until else { throw Problem.invalidField(pointer + "/until", "ghost mode \"until\" needs an until time") }
            guard until > now else { throw Problem.invalidField(pointer + "/until", "the until time has passed") }
            return .until(until)
        }
    }
}

/// `GET /v1/me`.
struct ProfileResponse: ResponseEncodable, Sendable {
    struct Sharing: Encodable, Sendable {
        struct Override: Encodable, Sendable {
            var friend: UserID
            var precision: Precision?
            var hidden: Bool
        }

        var ghost: GhostWire
        var precision: Precision
        var overrides: [Override]
        var discoverable: Bool
    }

    var id: UserID
    var username: String
    var displayName: String
    /// The same text as `description`, by its first name.
    var bio: String
    var description: String
    var status: StatusWire?
    var homePark: CatalogParkWire?
    var favouriteRides: [CatalogRideWire]
    var findable: Bool
    var followers: Int
    var following: Int
    var role: Role
    var createdAt: Date
    var sharing: Sharing

    init(_ p: UserProfile) {
        self.id = p.id
        self.username = p.username
        self.displayName = p.displayName
        self.bio = p.bio
        self.description = p.bio
        self.status = p.card.status.map(StatusWire.init)
        self.homePark = p.card.homePark.map(CatalogParkWire.init)
        self.favouriteRides = p.card.favouriteRides.map(CatalogRideWire.init)
        self.findable = p.findable
        self.followers = p.follows.followers
        self.following = p.follows.following
        self.role = p.role
        self.createdAt = p.createdAt
        self.sharing = Sharing(
            ghost: GhostWire(p.sharing.ghost), precision: p.sharing.precision,
            overrides: p.sharing.overrides.sorted { $0.key < $1.key }.map {
                Sharing.Override(friend: $0.key, precision: $0.value.precision, hidden: $0.value.hidden)
            }, discoverable: p.discoverable)
    }
}

/// `PATCH /v1/me`: members left out stay as they are. The profile's own members are
/// ``ProfileBody``'s (pure, fuzzed); the sharing settings are read here.
struct ProfilePatch: Decodable, Sendable {
    struct Sharing: Decodable, Sendable {
        var ghost: GhostWire?
        var precision: Precision?
        var discoverable: Bool?
    }

    var profile: ProfileBody
    var sharing: Sharing?

    enum CodingKeys: String, CodingKey { case sharing }

    init(from decoder: any Decoder) throws {
        self.profile = try ProfileBody(from: decoder)
        self.sharing = try decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(Sharing.self, forKey: .sharing)
    }
}

/// `PUT /v1/friends/{userId}/sharing`.
struct SharingOverrideRequest: Decodable, Sendable {
    var precision: Precision?
    var hidden: Bool?
}

/// `POST /v1/friends/requests`.
struct FriendRequestBody: Decodable, Sendable {
    var username: String
}

struct FriendRequestResponse: ResponseEncodable, Sendable {
    enum Status: String, Encodable, Sendable {
        case requested, accepted
        case alreadyFriends = "already-friends"
        case alreadyRequested = "already-requested"
    }

    var status: Status
    var user: UserWire
}

struct FriendWire: JSONObject, Sendable {
    var id: UserID
    var username: String
    var displayName: String
    var since: Date
    /// Last use of the service; absent when the friend's sharing hides it.
    var lastSeen: Date?
    /// Seen in the last five minutes.
    var online: Bool

    static let members: [JSONMember<Self>] = [
        .init("displayName", \.displayName), .init("id", \.id.rawValue), .init("lastSeen", \.lastSeen), .init("online", \.online),
        .init("since", \.since), .init("username", \.username),
    ]
}

/// `GET /v1/friends`: a page of the caller's friends by display name, written by ``JSONWriter``
/// from its members' list (``JSONObject``): `JSONEncoder` was a fifth of the route's CPU.
struct FriendListResponse: JSONObject, JSONWritable, Sendable {
    var friends: [FriendWire]
    /// Where the next page starts (`after=`), when this one is full.
    var next: String?

    static let members: [JSONMember<Self>] = [.init("friends", \.friends), .init("next", \.next)]

    var jsonCapacity: Int {
        self.friends.reduce(48 + (self.next?.utf8.count ?? 0)) { $0 + $1.displayName.utf8.count + $1.username.utf8.count + 140 }
    }
}

struct FriendRequestListResponse: ResponseEncodable, Sendable {
    struct Item: Encodable, Sendable {
        var user: UserWire
        var sentAt: Date
    }

    /// A page of the requests waiting on the caller, newest first.
    var incoming: [Item]
    /// Every request the caller has waiting on others, newest first.
    var outgoing: [Item]
    /// Where the next page of incoming requests starts (`after=`), when this one is full.
    var next: String?
}

extension NamePosition {
    /// `after=` of the next page: the display name's UTF-8 in lowercase hexadecimal, `_`, the
    /// username. Hexadecimal has no `_`, so the first one ends the name (a username may hold more).
    var cursor: String {
        self.displayName.utf8.map { String(format: "%02x", $0) }.joined() + "_" + self.username
    }

    init?(cursor: some StringProtocol) {
        guard let split = cursor.firstIndex(of: "_") else { return nil }
        let hex = cursor[..<split], username = String(cursor[cursor.index(after: split)...])
        guard hex.utf8.count.isMultiple(of: 2), hex.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }),
              (try? AccountRules.username(username)) == username else { return nil }
        var bytes: [UInt8] = []
        var at = hex.startIndex
        while at < hex.endIndex {
            let next = hex.index(at, offsetBy: 2)
            guard let byte = UInt8(hex[at..<next], radix: 16) else { return nil }
            bytes.append(byte)
            at = next
        }
        guard let name = String(validating: bytes, as: UTF8.self) else { return nil }
        self.init(displayName: name, username: username)
    }
}

extension ListPosition {
    /// `after=` of the next page: the time the user entered the list (seconds, exact) and the user.
    var cursor: String { "\(self.at)_\(self.user.rawValue)" }

    init?(cursor: some StringProtocol) {
        let parts = cursor.split(separator: "_", omittingEmptySubsequences: false)
        guard parts.count == 2, let at = Double(parts[0]), at.isFinite, let user = Int64(parts[1]) else { return nil }
        self.init(at: at, user: UserID(user))
    }
}

/// `GET /v1/blocks`: a page of the users the caller blocked, newest first.
struct BlockListResponse: ResponseEncodable, Sendable {
    var users: [UserWire]
    /// Where the next page starts (`after=`), when this one is full.
    var next: String?
}

/// `PUT /v1/admin/parks/{parkId}`.
struct ParkImportResponse: ResponseEncodable, Sendable {
    var park: ParkID
    var replaced: Bool
    var zones: Int
    var rides: Int
    var unlistedRides: Int
    /// What the file carried that the format does not know, each ignored.
    var warnings: [Problem.BodyError]
}
