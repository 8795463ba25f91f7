import CoasterCore
import CoasterHTTP
import CoasterService
import CoasterStore
import Foundation
import HTTPTypes
import Hummingbird

/// Rides in detail, ride logs, counts and a rider's totals.
struct RidesController {
    let store: any Store
    let policy: LocationPolicy
    /// Told of each committed log, for the rider's live challenge progress.
    let challenges: Challenges
    /// Told of each committed log, for list changes due at once.
    let lists: Lists

    var endpoints: RouteCollection<AppRequestContext> {
        let routes = RouteCollection(context: AppRequestContext.self)
        routes.get("rides/{rideId}", use: self.detail)
        routes.post("rides/{rideId}/rides", use: self.logRide)
        routes.get("me/rides", use: self.history)
        routes.get("me/stats", use: self.stats)
        return routes
    }

    /// One listed ride: its stats, park, wait, the caller's count and the community's, in one read.
    @Sendable func detail(_ request: Request, context: AppRequestContext) async throws -> RideDetailResponse {
        let me = try context.requireIdentity()
        let ride = RideID(rawValue: try context.parameters.require("rideId"))
        guard let detail = try await self.store.rideDetail(ride, viewer: me.id, estimator: self.policy.estimator,
                                                           statusRules: self.policy.statusRules)
        else { throw Self.noSuchRide(ride) }
        return RideDetailResponse(detail)
    }

    /// 404 naming the ride asked for (`no-such-ride`, the type every ride route answers with).
    static func noSuchRide(_ id: RideID) -> Problem {
        Problem(.noSuchRide, status: .notFound, title: "No such ride", detail: "There is no listed ride \"\(id.rawValue)\".")
    }

    @Sendable func logRide(_ request: Request, context: AppRequestContext) async throws -> EditedResponse<RideLoggedResponse> {
        let me = try context.requireIdentity()
        let raw = try context.parameters.require("rideId")
        let ride = RideID(rawValue: raw)
        switch try await self.store.logRide(user: me.id, ride: ride, visitTimeout: self.policy.checkins.visitTimeout,
                                            policy: self.policy.rideLogs, statusRules: self.policy.statusRules,
                                            estimator: self.policy.estimator) {
        case .success(let (entry, count)):
            await self.challenges.rideLogged(entry.id, by: me.id)
            await self.lists.evidenceCommitted()
            return EditedResponse(status: .created, response: RideLoggedResponse(log: RideLogWire(entry), count: count))
        case .failure(.notCheckedIn):
            var p = Problem(.rideRefused, status: .unprocessableContent, title: "Ride not logged",
                            detail: "You are not on a visit to this ride's park; check in first.")
            p.reason = "not_checked_in"
            throw p
        case .failure(.notOperating(let status)):
            var p = Problem(.rideRefused, status: .unprocessableContent, title: "Ride not logged", detail: "The ride is \(status.rawValue).")
            p.reason = "ride_not_operating"
            throw p
        case .failure(.reported(let state)):
            var p = Problem(.rideRefused, status: .unprocessableContent, title: "Ride not logged",
                            detail: "The ride is \(state.status.rawValue) by the \(state.source == .posted ? "park's posted feed" : "reports of riders in the park").")
            p.reason = "ride_\(state.status.rawValue)"
            throw p
        case .failure(.impossibleSequence(_, let name, let walk, let wait)):
            var p = Problem.tooManyRequests(
                String(format: "Nobody can ride this yet after %@: its ride and the %.0f m walk from it take longer.", name, walk),
                retryAfter: wait)
            p.type = .rideCooldown
            p.title = "Ride not possible yet"
            p.reason = "impossible_sequence"
            throw p
        case .failure(.cooldown(let wait)):
            var p = Problem.tooManyRequests("You rode this less than one ride cycle ago.", retryAfter: wait)
            p.type = .rideCooldown
            p.title = "Ride cooldown"
            p.reason = "cooldown"
            throw p
        }
    }

    @Sendable func history(_ request: Request, context: AppRequestContext) async throws -> RideHistoryResponse {
        let me = try context.requireIdentity()
        let (limit, before) = try request.paging()
        let rides = try await self.store.rideHistory(of: me.id, viewer: me.id, limit: limit, before: before) ?? []
        return RideHistoryResponse(rides: rides.map(RideLogWire.init))
    }

    @Sendable func stats(_ request: Request, context: AppRequestContext) async throws -> RiderStatsResponse {
        let s = try await self.store.riderStats(of: try context.requireIdentity().id)
        return RiderStatsResponse(s)
    }
}
