import CoasterCore
import CoasterHTTP
import CoasterService
import CoasterStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore

/// Who is near: friends, friends in a park, and people who opted in to being discoverable.
struct NearbyController {
    let people: People
    let fences: FencePlaces
    let policy: LocationPolicy
    let rates: RequestRates
    let now: @Sendable () -> Date

    var rules: NearbyRules { NearbyRules(privacy: self.policy.privacy, visitTimeout: self.policy.checkins.visitTimeout) }

    var endpoints: RouteCollection<AppRequestContext> {
        let routes = RouteCollection(context: AppRequestContext.self)
        routes.get("friends/nearby", use: self.friendsNearby)
        routes.get("parks/{parkId}/friends", use: self.friendsInPark)
        routes.get("people/nearby", use: self.peopleNearby)
        return routes
    }

    /// Friends within `radius` metres of the caller's own latest fix: never of a point the caller
    /// names, so nobody can probe from arbitrary positions.
    @Sendable func friendsNearby(_ request: Request, context: AppRequestContext) async throws -> NearbyResponse {
        let me = try context.requireIdentity()
        let query = request.uri.queryParameters
        if let answer = try self.friendsNearby(of: me.id, query: query) { return answer }
        // Not in the directory yet (created by the command line or another process): loaded, then
        // asked again.
        guard try await self.people.person(loading: me.id) != nil, let answer = try self.friendsNearby(of: me.id, query: query) else {
            throw Problem.unauthorized()
        }
        return answer
    }

    /// The answer to `GET /v1/friends/nearby` for a caller the directory holds, worked out without
    /// waiting on anything: the route's and the fast lane's. `nil`, before the caller's rate is
    /// charged, if the directory does not hold them.
    func friendsNearby(of me: UserID, query: some QueryLookup) throws -> NearbyResponse? {
        let radius = try Self.radius(query)
        guard self.people.holds(me) else { return nil }
        try self.rates.take(me, what: "nearby")
        let (index, places) = self.fences.indexAndPlaces
        let rules = self.rules, now = self.now()
        let answer = self.people.withFriendsInPlace(of: me) { friends in
            rules.friendsNearby(friends, radius: radius, now: now, index: index)
        }
        // Gone between the two looks: an account deleted meanwhile.
        guard let answer else { throw Problem.unauthorized() }
        switch answer {
        case .success(let list): return NearbyResponse(radius: radius, people: list, index: index, places: places)
        case .failure(let refusal): throw Self.problem(refusal, self.policy)
        }
    }

    /// Friends on a visit to this park now, as their sharing allows.
    @Sendable func friendsInPark(_ request: Request, context: AppRequestContext) async throws -> NearbyResponse {
        let me = try context.requireIdentity()
        let park = try ParksController.parkID(context)
        let (index, places) = self.fences.indexAndPlaces
        guard index.park(park) != nil else { throw ParksController.noSuchPark(park) }
        let rules = self.rules, now = self.now()
        let list = try await self.people.withFriends(of: me.id) { friends in
            rules.friendsInPark(friends, park: park, now: now, index: index)
        }
        guard let list else { throw Problem.unauthorized() }
        return NearbyResponse(radius: nil, people: list, index: index, places: places)
    }

    /// Discoverable non-friends in the caller's park, snapped to the approximate grid.
    @Sendable func peopleNearby(_ request: Request, context: AppRequestContext) async throws -> NearbyResponse {
        let me = try context.requireIdentity()
        let radius = try Self.radius(request)
        try self.rates.take(me.id, what: "nearby")
        guard let viewer = try await self.people.person(loading: me.id) else { throw Problem.unauthorized() }
        let now = self.now()
        let candidates = self.people.visitors(of: viewer.visiting(at: now, timeout: self.policy.checkins.visitTimeout))
        switch self.rules.peopleNearby(viewer: viewer, candidates: candidates, radius: radius, now: now) {
        case .success(let list):
            let (index, places) = self.fences.indexAndPlaces
            return NearbyResponse(radius: radius, people: list, index: index, places: places)
        case .failure(let refusal): throw Self.problem(refusal, self.policy)
        }
    }

    static func radius(_ request: Request) throws -> Double {
        try Self.radius(request.uri.queryParameters)
    }

    static func radius(_ query: some QueryLookup) throws -> Double {
        let radius = try query.optionalNumber("radius") ?? 500
        guard radius >= 1, radius <= NearbyRules.maximumRadius else {
            throw Problem.invalidParameter("radius", "a radius in metres, 1…\(Int(NearbyRules.maximumRadius))")
        }
        return radius
    }

    static func problem(_ refusal: NearbyRefusal, _ policy: LocationPolicy) -> Problem {
        var p = Problem(.nearbyRefused, status: .unprocessableContent, title: "Nearby needs your position",
                        detail: refusal == .noRecentFix
                            ? "Nearby is measured from your own latest fix; none is younger than \(Int(policy.privacy.timeToLive / 3600)) h. Send one with POST /v1/fixes."
                            : "People nearby is for people visiting a park; you are not on a visit.")
        p.reason = refusal.rawValue
        return p
    }
}
