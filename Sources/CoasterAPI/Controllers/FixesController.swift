import CoasterCore
import CoasterHTTP
import CoasterService
import CoasterStore
import Foundation
import HTTPTypes
import Hummingbird

/// GPS fixes and explicit check-ins.
struct FixesController {
    let store: any Store
    let fences: Fences
    let people: People
    let recorder: FixRecorder
    let policy: LocationPolicy
    let rates: RequestRates
    /// Told of each visit an explicit check-in opens, for list changes due at once.
    let lists: Lists

    var endpoints: RouteCollection<AppRequestContext> {
        let routes = RouteCollection(context: AppRequestContext.self)
        routes.post("fixes", use: self.postFixes)
        routes.post("checkins", use: self.checkIn)
        routes.get("checkins", use: self.listCheckins)
        return routes
    }

    /// One fix (a JSON object) or a batch (an array), decided and written in one transaction.
    @Sendable func postFixes(_ request: Request, context: AppRequestContext) async throws -> FixesResponse {
        let me = try context.requireIdentity()
        try self.rates.take(me.id, what: "fix")
        try request.requireJSONContentType()
        let fixes = try FixBatchBody.fixes(in: try await request.body.collect(upTo: FixBatchBody.bodyLimit), policy: self.policy)
        let batch = try await self.recorder.record(fixes, for: me.id, source: .api)
        return FixesResponse(fixes: fixes, results: batch.results)
    }

    /// Checks in at a park, validated against the caller's latest fix.
    @Sendable func checkIn(_ request: Request, context: AppRequestContext) async throws -> EditedResponse<VisitWire> {
        let me = try context.requireIdentity()
        let body = try await request.decodeJSON(as: CheckinRequest.self, context: context)
        guard Slug.isValid(body.parkId) else { throw ParksController.noSuchPark(ParkID(rawValue: body.parkId)) }
        let park = ParkID(rawValue: body.parkId)
        guard let outcome = try await self.recorder.checkIn(user: me.id, park: park)
        else { throw ParksController.noSuchPark(park) }
        if case .created = outcome {
            try await self.people.refresh(me.id)
            await self.lists.evidenceCommitted()
        }
        switch outcome {
        case .created(let visit): return EditedResponse(status: .created, response: VisitWire(visit))
        case .alreadyOpen(let visit): return EditedResponse(status: .ok, response: VisitWire(visit))
        case .refused(let refusal):
            var problem = Problem(.checkinRefused, status: .unprocessableContent, title: "Check-in refused",
                                  detail: Self.describe(refusal, policy: self.policy.checkins))
            problem.reason = refusal.rawValue
            throw problem
        }
    }

    @Sendable func listCheckins(_ request: Request, context: AppRequestContext) async throws -> VisitListResponse {
        let me = try context.requireIdentity()
        let (limit, before) = try request.paging()
        return VisitListResponse(visits: try await self.store.visits(of: me.id, limit: limit, before: before).map(VisitWire.init))
    }

    static func describe(_ refusal: CheckinRefusal, policy: CheckinPolicy) -> String {
        switch refusal {
        case .noRecentFix: "No accepted GPS fix in the last \(Int(policy.freshness / 60)) minutes; send one with POST /v1/fixes."
        case .notInPark: "Your latest fix is not in this park."
        case .accuracyTooLow:
            "Your latest fix straddles the park's boundary and its accuracy is worse than \(Int(policy.uncertainMaximumAccuracy)) m."
        }
    }
}
