import CoasterCore
import CoasterHTTP
import CoasterService
import Foundation
import Hummingbird
import HummingbirdCore

/// A park's points of interest by category: food, restrooms, first aid, lockers, guest services,
/// shops, parking, entrances, shows and rides.
struct PlacesController {
    let people: People
    let places: PlacesInForce
    let policy: LocationPolicy
    let now: @Sendable () -> Date

    /// Who is at a park, as nearby answers decide it: a fresh fix and an open visit.
    var rules: NearbyRules { NearbyRules(privacy: self.policy.privacy, visitTimeout: self.policy.checkins.visitTimeout) }

    var endpoints: RouteCollection<AppRequestContext> {
        let routes = RouteCollection(context: AppRequestContext.self)
        routes.get("parks/{parkId}/places", use: self.list)
        return routes
    }

    /// The park's places: nearest first from the caller's own latest fix while they are at the
    /// park (never from a point the caller names), else by name. From memory only: the places and
    /// the caller's position are the service's, no database round trip.
    @Sendable func list(_ request: Request, context: AppRequestContext) async throws -> PlacesResponse {
        let me = try context.requireIdentity()
        let park = try ParksController.parkID(context)
        let query = request.uri.queryParameters
        if let answer = try self.places(of: me.id, in: park, query: query) { return answer }
        // Not in the directory yet (created by the command line or another process): loaded, then
        // asked again.
        guard try await self.people.person(loading: me.id) != nil, let answer = try self.places(of: me.id, in: park, query: query) else {
            throw Problem.unauthorized()
        }
        return answer
    }

    /// The answer to `GET /v1/parks/{parkId}/places` for a caller the directory holds, worked out
    /// without waiting on anything: the route's and the fast lane's. `nil` if the directory does
    /// not hold the caller. An unknown park is a 404, bad parameters a 400 naming each of them.
    func places(of me: UserID, in park: ParkID, query: some QueryLookup) throws -> PlacesResponse? {
        let (places, parts) = self.places.placesAndParts
        guard let position = places.park(park) else { throw ParksController.noSuchPark(park) }
        let asked: PlaceQuery
        switch PlaceQuery.parse(category: query.value(named: "category"), limit: query.value(named: "limit")) {
        case .success(let parsed): asked = parsed
        case .failure(let refusal): throw Self.problem(refusal.issues)
        }
        guard let person = self.people.person(me) else { return nil }
        let parkPlaces = places.places(ofParkAt: position)
        if let origin = self.rules.ownPosition(of: person, at: park, now: self.now()) {
            return PlacesResponse(park: park, from: .yourPosition, found: places.nearest(inParkAt: position, from: origin, asked),
                                  places: parkPlaces, parts: parts.park(position))
        }
        return PlacesResponse(park: park, from: .nowhere, found: places.byName(inParkAt: position, asked), places: parkPlaces,
                              parts: parts.park(position))
    }

    /// Every bad parameter, each named with its reason, in one problem.
    static func problem(_ issues: [PlaceQuery.Issue]) -> Problem {
        var problem = Problem.invalidParameter(issues.first?.parameter ?? "category", issues.first?.reason ?? "not a places query")
        if !issues.isEmpty { problem.invalidParams = issues.map { .init(name: $0.parameter, reason: $0.reason) } }
        problem.detail = "Query parameters: " + problem.invalidParams.map { "\($0.name): \($0.reason)" }.joined(separator: "; ") + "."
        return problem
    }
}
