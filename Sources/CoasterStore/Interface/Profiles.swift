import CoasterCore
import Foundation

/// Profile pages, and finding people (docs: People).
public protocol ProfileStore: Sendable {
    /// The profile page of `user` as `viewer` may see it, read in one transaction (one hop to the
    /// reader pool, one snapshot: a friendship ended meanwhile cannot leave half a page): `nil`
    /// unless `user` is the viewer or an accepted friend of theirs, and exists. Its statistics
    /// are the user's own to them; to a friend they count only the ride logs and visits that
    /// ``LocationPrivacy/placesShownBefore(_:)`` lets anyone see, so that no count moving says
    /// where the user is now.
    func profilePage(of user: UserID, viewer: UserID, privacy: LocationPrivacy) async throws -> ProfilePage?

    /// Findable users one of whose name keys starts with `key` (``PeopleRules/searchKey(_:)``),
    /// never one who blocked `viewer` or whom `viewer` blocked: at most `limit`, in the order of
    /// their first matching key, then id. A range of the name-key index, at most
    /// ``PeopleRules/keysToRead(limit:)`` rows of it. An empty key finds no one.
    func findPeople(_ key: String, viewer: UserID, limit: Int) async throws -> [PersonHit]

    /// "Riders like you": findable users who are not `viewer`, their friends, anyone with a
    /// request pending either way, nor blocked either way, ranked by ``PeopleRules/ranked(_:limit:)``
    /// among the candidates of bounded samples (``PeopleRules``): riders of the viewer's coaster
    /// credits and friends of their friends. The first `limit × measuredPerPlace` by the samples'
    /// counts are counted exactly, ranked again, and `limit` of them returned, in one snapshot.
    /// Another rider's credit counts from their first ride of it on that
    /// ``LocationPrivacy/placesShownBefore(_:)`` lets anyone see: a suggestion that appears, or a
    /// shared count that moves, must not say which coaster a stranger is riding now.
    func suggestedPeople(for viewer: UserID, limit: Int, rules: PeopleRules, privacy: LocationPrivacy) async throws -> [SuggestedPerson]
}
