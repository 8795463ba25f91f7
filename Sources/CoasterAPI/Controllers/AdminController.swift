import CoasterCore
import CoasterStore
import Foundation
import Hummingbird
import Logging

/// Routes for park admins.
struct AdminController {
    let store: Store
    let fences: Fences

    var endpoints: RouteCollection<AppRequestContext> {
        let routes = RouteCollection(context: AppRequestContext.self)
        routes.put("parks/{parkId}", use: self.putPark)
        return routes
    }

    /// Loads or replaces one park from a GeoJSON FeatureCollection, through exactly the validation
    /// of `coasterlife import`, then swaps in a rebuilt fence index.
    @Sendable func putPark(_ request: Request, context: AppRequestContext) async throws -> EditedResponse<ParkImportResponse> {
        let id = try ParksController.parkID(context)
        let body = try await request.body.collect(upTo: context.maxUploadSize)
        let definition = try ParkImporter().definition(from: Data(body.readableBytesView), expectedPark: id)
        guard let result = try await self.store.replaceParks([definition]).first else { throw Problem.internalError() }
        try await self.fences.reload()
        context.logger.info("park loaded", metadata: ["park": "\(id)", "by": "\(context.identity?.username ?? "?")"])
        return EditedResponse(
            status: result.replaced ? .ok : .created,
            response: ParkImportResponse(park: result.park, replaced: result.replaced, zones: result.zones, rides: result.rides,
                                         unlistedRides: result.unlistedRides))
    }
}
