import CoasterCore
import CoasterHTTP
import Foundation

/// A status on the wire: `{"emoji": "🎢", "text": "…"}`.
struct StatusWire: JSONObject, Sendable {
    var emoji: String
    var text: String

    init(_ status: ProfileStatus) {
        self.emoji = status.emoji
        self.text = status.text
    }

    static let members: [JSONMember<Self>] = [.init("emoji", \.emoji), .init("text", \.text)]
}

/// A user as people search and suggestions show them (docs: People). `sharedCredits` and
/// `mutualFriends` are the suggestions' only; members without a value are left out.
struct PersonWire: JSONObject, Sendable {
    var id: UserID
    var username: String
    var displayName: String
    var status: StatusWire?
    var homePark: CatalogParkWire?
    var photoId: Int64?
    var friend: Bool
    var following: Bool
    var sharedCredits: Int?
    var mutualFriends: Int?

    init(_ hit: PersonHit) {
        self.id = hit.user.id
        self.username = hit.user.username
        self.displayName = hit.user.displayName
        self.status = hit.status.map(StatusWire.init)
        self.homePark = hit.homePark.map(CatalogParkWire.init)
        self.photoId = hit.photo
        self.friend = hit.friend
        self.following = hit.following
    }

    init(_ suggestion: SuggestedPerson) {
        self.init(suggestion.person)
        self.sharedCredits = suggestion.sharedCredits
        self.mutualFriends = suggestion.mutualFriends
    }

    static let members: [JSONMember<Self>] = [
        .init("displayName", \.displayName), .init("following", \.following), .init("friend", \.friend), .init("homePark", \.homePark),
        .init("id", \.id.rawValue), .init("mutualFriends", \.mutualFriends), .init("photoId", \.photoId), .init("sharedCredits", \.sharedCredits),
        .init("status", \.status), .init("username", \.username),
    ]
}

/// `GET /v1/people/search` and `GET /v1/people/suggested`: the people found, in order. A search
/// that finds no one answers the same object with an empty list.
struct PeopleResponse: JSONObject, JSONWritable, Sendable {
    var people: [PersonWire]

    static let members: [JSONMember<Self>] = [.init("people", \.people)]

    var jsonCapacity: Int { self.people.reduce(16) { $0 + $1.displayName.utf8.count + $1.username.utf8.count + 260 } }
}
