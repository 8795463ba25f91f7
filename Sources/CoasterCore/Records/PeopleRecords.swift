import Foundation

/// A user as people search and suggestions show them to a viewer (docs: People).
public struct PersonHit: Hashable, Sendable {
    public var user: UserSummary
    public var status: ProfileStatus?
    public var homePark: CatalogPark?
    /// Their profile photo: visible to every signed-in user they have not blocked, since they
    /// chose to be found.
    public var photo: Int64?
    /// An accepted friend of the viewer.
    public var friend: Bool
    /// The viewer follows their public posts.
    public var following: Bool

    public init(user: UserSummary, status: ProfileStatus?, homePark: CatalogPark?, photo: Int64?, friend: Bool, following: Bool) {
        self.user = user
        self.status = status
        self.homePark = homePark
        self.photo = photo
        self.friend = friend
        self.following = following
    }
}

/// One of "riders like you": a findable user who is not yet a friend, with what the viewer
/// shares with them.
public struct SuggestedPerson: Hashable, Sendable {
    public var person: PersonHit
    /// Coasters both have ridden (each a credit of both).
    public var sharedCredits: Int
    /// Accepted friends of both.
    public var mutualFriends: Int

    public init(person: PersonHit, sharedCredits: Int, mutualFriends: Int) {
        self.person = person
        self.sharedCredits = sharedCredits
        self.mutualFriends = mutualFriends
    }
}
