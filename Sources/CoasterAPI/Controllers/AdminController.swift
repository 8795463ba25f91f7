import CoasterCore
import CoasterHTTP
import CoasterService
import CoasterStore
import Foundation
import Hummingbird
import Logging

/// Routes for park admins.
struct AdminController {
    let store: any Store
    let fences: Fences
    let live: Live
    let policy: LocationPolicy

    var endpoints: RouteCollection<AppRequestContext> {
        let routes = RouteCollection(context: AppRequestContext.self)
        routes.put("parks/{parkId}", use: self.putPark)
        routes.put("parks/{parkId}/posted-waits", use: self.putPostedWaits)
        return routes
    }

    /// Loads a park's official posted waits: CSV (`Content-Type: text/csv`) or a JSON array; the
    /// rides whose live status it changed are pushed to the park's live visitors.
    @Sendable func putPostedWaits(_ request: Request, context: AppRequestContext) async throws -> PostedWaitsResponse {
        let id = try ParksController.parkID(context)
        guard let summary = try await self.store.parkSummaries().first(where: { $0.id == id }) else { throw ParksController.noSuchPark(id) }
        let given = request.headers[.contentType]
        let csv = given.map { MediaType.essence($0) == "text/csv" } ?? false
        if let given, !csv, !MediaType.isJSON(given) { throw JSONBody.unsupported(given, expected: ["text/csv", "application/json"]) }
        let body = try await request.body.collect(upTo: context.maxUploadSize)
        let rows: [PostedWaitFeed.Row]
        do {
            rows = try PostedWaitFeed.parse(Data(body.readableBytesView), park: id, timeZone: TimeZone(identifier: summary.timeZone) ?? .gmt, csv: csv)
        } catch {
            throw Problem(.invalidPostedWaits, status: .unprocessableContent, title: "Invalid posted waits",
                          detail: "Nothing was written. \(error.issues.first?.description ?? "")",
                          errors: error.issues.map { Problem.BodyError(pointer: $0.pointer, feature: $0.feature, detail: $0.reason) })
        }
        let load = try await self.store.loadPostedWaits(park: id, rows.map { PostedWaitEntry(ride: $0.ride, at: $0.at, minutes: $0.minutes) },
                                                        estimator: self.policy.estimator, statusRules: self.policy.statusRules)
        self.live.statusesChanged(load.statusChanges, in: id)
        return PostedWaitsResponse(park: id, loaded: load.loaded)
    }

    /// Writes a validated park and swaps in a rebuilt fence index: this route's and the map's
    /// admin page's load (``MapController``).
    func load(_ read: ParkImport, by admin: Identity, logger: Logger) async throws -> ParkReplacement {
        guard let result = try await self.store.replaceParks([read.definition]).first else { throw Problem.internalError() }
        try await self.fences.reload()
        logger.info("park loaded", metadata: ["park": "\(read.definition.park.id)", "by": "\(admin.username)"])
        return result
    }

    /// Loads or replaces one park from a GeoJSON FeatureCollection, through exactly the validation
    /// of `coasterlife import`, then swaps in a rebuilt fence index.
    @Sendable func putPark(_ request: Request, context: AppRequestContext) async throws -> EditedResponse<ParkImportResponse> {
        let id = try ParksController.parkID(context)
        if let given = request.headers[.contentType], !MediaType.isJSON(given) {
            throw JSONBody.unsupported(given, expected: ["application/geo+json", "application/json"])
        }
        let body = try await request.body.collect(upTo: context.maxUploadSize)
        let read = try ParkImporter().read(Data(body.readableBytesView), expectedPark: id)
        let result = try await self.load(read, by: try context.requireIdentity(), logger: context.logger)
        return EditedResponse(
            status: result.replaced ? .ok : .created,
            response: ParkImportResponse(park: result.park, replaced: result.replaced, zones: result.zones, rides: result.rides,
                                         unlistedRides: result.unlistedRides,
                                         warnings: read.warnings.map { Problem.BodyError(pointer: $0.pointer, feature: $0.feature, detail: $0.reason) }))
    }
}
