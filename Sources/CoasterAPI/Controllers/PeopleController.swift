import CoasterCore
import CoasterHTTP
import CoasterService
import CoasterStore
import Foundation
import HTTPTypes
import Hummingbird

/// Finding people and following them (docs: People): search by name among users who chose to be
/// found, "riders like you", and follows of a user's public posts.
struct PeopleController {
    let store: any Store
    let rules: PeopleRules
    /// The rule that settles the ride logs behind shared credits.
    let privacy: LocationPrivacy
    /// Searches and suggestions per user.
    let searches: RequestRates
    /// Follows and unfollows per user.
    let follows: RequestRates

    var endpoints: RouteCollection<AppRequestContext> {
        let routes = RouteCollection(context: AppRequestContext.self)
        routes.get("people/search", use: self.search)
        routes.get("people/suggested", use: self.suggested)
        routes.put("users/{userId}/follow", use: self.follow)
        routes.delete("users/{userId}/follow", use: self.unfollow)
        return routes
    }

    /// Findable users whose display name has a word, or whose username, starting with `q` (case
    /// and accents aside), never one blocked either way; a miss is the same answer with no one in it.
    @Sendable func search(_ request: Request, context: AppRequestContext) async throws -> PeopleResponse {
        let me = try context.requireIdentity()
        let parameters = request.uri.queryParameters
        guard let q = parameters["q"].map(String.init) else { throw Problem.invalidParameter("q", "the start of a name, 1 to 64 characters") }
        guard PeopleRules.query.violation(q) == nil, !q.allSatisfy(\.isWhitespace) else {
            throw Problem.invalidParameter("q", "the start of a name, 1 to 64 characters, not only spaces")
        }
        let limit = try Self.limit(request)
        try self.searches.take(me.id, what: "people search")
        let hits = try await self.store.findPeople(PeopleRules.searchKey(q), viewer: me.id, limit: limit)
        return PeopleResponse(people: hits.map(PersonWire.init))
    }

    /// "Riders like you": findable riders who are not friends yet, friends of friends first, then
    /// by coaster credits shared.
    @Sendable func suggested(_ request: Request, context: AppRequestContext) async throws -> PeopleResponse {
        let me = try context.requireIdentity()
        let limit = try Self.limit(request)
        try self.searches.take(me.id, what: "people suggestion")
        let people = try await self.store.suggestedPeople(for: me.id, limit: limit, rules: self.rules, privacy: self.privacy)
        return PeopleResponse(people: people.map(PersonWire.init))
    }

    /// Follows the user's public posts: 204, again as the first time. No such user, or a block
    /// either way: the same 404.
    @Sendable func follow(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        let me = try context.requireIdentity()
        let them = try FriendsController.userID(context)
        try self.follows.take(me.id, what: "follow")
        try await self.store.follow(me.id, them, rules: self.rules)
        return .noContent
    }

    /// Stops following: 204, whether or not the caller followed them (or they exist).
    @Sendable func unfollow(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        let me = try context.requireIdentity()
        let them = try FriendsController.userID(context)
        try self.follows.take(me.id, what: "follow")
        try await self.store.unfollow(me.id, them)
        return .noContent
    }

    static func limit(_ request: Request) throws -> Int {
        guard let text = request.uri.queryParameters["limit"] else { return PeopleRules.defaultPage }
        guard let n = Int(text), (1...PeopleRules.largestPage).contains(n) else {
            throw Problem.invalidParameter("limit", "a whole number in 1…\(PeopleRules.largestPage)")
        }
        return n
    }
}
