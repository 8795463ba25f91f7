import CoasterCore
import CoasterStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Synchronization

/// Parks, their rides, and point lookup against the fences.
struct ParksController {
    let store: Store
    let fences: Fences
    /// Each park's GeoJSON as last written, with its tag.
    let documents = ParkDocuments()

    var endpoints: RouteCollection<AppRequestContext> {
        let routes = RouteCollection(context: AppRequestContext.self)
        routes.get("parks", use: self.list)
        routes.get("parks/{parkId}", use: self.show)
        routes.get("parks/{parkId}/rides", use: self.rides)
        routes.get("locate", use: self.locate)
        return routes
    }

    @Sendable func list(_ request: Request, context: AppRequestContext) async throws -> ParkListResponse {
        ParkListResponse(try await self.store.parkSummaries())
    }

    /// The park as GeoJSON (a hundred KB and more), with a strong ETag: an app that keeps the
    /// park asks again with `If-None-Match` and gets `304 Not Modified` until an admin loads it anew.
    ///
    /// Written once per load of the park (``ParkDocuments``): reading the park from the store and
    /// encoding it took ~10 ms, so the route answered ~200 requests a second, 304s included.
    @Sendable func show(_ request: Request, context: AppRequestContext) async throws -> Response {
        let id = try Self.parkID(context)
        // The load time first: the park read after it is never older, so no copy is kept under a
        // load time newer than what it was written from.
        guard let loadedAt = try await self.store.parkLoadedAt(id) else { throw Self.noSuchPark(id) }
        let document: ParkDocuments.Document
        if let kept = self.documents.document(id, loadedAt: loadedAt) {
            document = kept
        } else {
            guard let definition = try await self.store.park(id) else { throw Self.noSuchPark(id) }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
            let data = try encoder.encode(ParkFeatureCollection(definition))
            document = ParkDocuments.Document(body: ByteBuffer(bytes: data), etag: entityTag(of: data))
            self.documents.keep(document, id, loadedAt: loadedAt)
        }
        let headers: HTTPFields = [.eTag: document.etag, .cacheControl: "private, no-cache"]
        if request.hasCurrentCopy(document.etag) { return Response(status: .notModified, headers: headers) }
        var fields = headers
        fields[.contentType] = "application/geo+json"
        return Response(status: .ok, headers: fields, body: .init(byteBuffer: document.body))
    }

    @Sendable func rides(_ request: Request, context: AppRequestContext) async throws -> RideListResponse {
        let id = try Self.parkID(context)
        guard let rides = try await self.store.rides(in: id) else { throw Self.noSuchPark(id) }
        let zones = Set(self.fences.index.zoneIDs(of: id))
        let counts = try await self.store.rideCounts(of: try context.requireIdentity().id, in: id)
        return RideListResponse(park: id, rides: rides.map { ride in
            var wire = RideWire(ride, zone: zones.contains(ZoneID(rawValue: ride.id.rawValue)) ? ZoneID(rawValue: ride.id.rawValue) : nil)
            wire.myCount = counts[ride.id] ?? 0
            return wire
        })
    }

    /// Answers from the in-memory index only: no database round trip on this path.
    @Sendable func locate(_ request: Request, context: AppRequestContext) async throws -> LocateResponse {
        try Self.locate(request.uri.queryParameters, in: self.fences.indexAndPlaces)
    }

    /// The answer to `GET /v1/locate` with this query: the route's and the fast lane's.
    static func locate(_ query: some QueryLookup, in fences: (index: FenceIndex, places: PlaceFragments)) throws -> LocateResponse {
        let lat = try query.requiredNumber("lat")
        let lon = try query.requiredNumber("lon")
        let accuracy = try query.optionalNumber("accuracy") ?? 0
        let position: Coordinate
        do {
            position = try Coordinate.validated(lat: lat, lon: lon)
        } catch {
            throw Problem.invalidParameter(error.field, error.description)
        }
        guard (0...FenceIndex.maximumAccuracy).contains(accuracy) else {
            throw Problem.invalidParameter("accuracy", "accuracy is a radius in metres, 0…\(Int(FenceIndex.maximumAccuracy))")
        }
        return LocateResponse(position: position, accuracy: accuracy, matches: fences.index.matches(position, accuracy: accuracy),
                              index: fences.index, places: fences.places)
    }

    static func parkID(_ context: AppRequestContext) throws -> ParkID {
        let raw = try context.parameters.require("parkId")
        guard Slug.isValid(raw) else { throw Problem.notFound("There is no park \"\(raw)\".") }
        return ParkID(rawValue: raw)
    }

    static func noSuchPark(_ id: ParkID) -> Problem {
        .notFound("There is no park \"\(id)\".")
    }
}

/// Each park's GeoJSON as last written, with its entity tag, kept until the park is loaded anew:
/// a copy stands while the park's load time in the store is the one it was written after. Every
/// load sets a new one, through the API or by `coasterlife import` in another process.
final class ParkDocuments: Sendable {
    struct Document: Sendable {
        var body: ByteBuffer
        var etag: String
    }

    private let kept = Mutex<[ParkID: (document: Document, loadedAt: Date)]>([:])

    func document(_ park: ParkID, loadedAt: Date) -> Document? {
        self.kept.withLock { kept in
            guard let copy = kept[park], copy.loadedAt == loadedAt else { return nil }
            return copy.document
        }
    }

    func keep(_ document: Document, _ park: ParkID, loadedAt: Date) {
        self.kept.withLock { $0[park] = (document, loadedAt) }
    }
}
