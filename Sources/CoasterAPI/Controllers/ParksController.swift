import CoasterCore
import CoasterHTTP
import CoasterService
import CoasterStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Synchronization

/// Parks, their rides, and point lookup against the fences.
struct ParksController {
    let store: any Store
    let fences: Fences
    let places: FencePlaces
    /// Each park's GeoJSON as last written, with its tag.
    let documents = KeptPerLoad<Document>()
    /// Each park's listed rides as last read.
    let rideLists = KeptPerLoad<[Ride]>()
    /// The park list as last written, kept while the parks' loads are the ones it was read with.
    let parkList = KeptWhile<Set<ParkLoad>, Document>()

    var endpoints: RouteCollection<AppRequestContext> {
        let routes = RouteCollection(context: AppRequestContext.self)
        routes.get("parks", use: self.list)
        routes.get("parks/{parkId}", use: self.show)
        routes.get("parks/{parkId}/rides", use: self.rides)
        routes.get("locate", use: self.locate)
        return routes
    }

    /// The park list, with a strong ETag (`304 Not Modified` on `If-None-Match`).
    ///
    /// Written once per set of park loads: reading every park's bounds and counts and encoding
    /// the list took ~1 ms of CPU a request. Each request reads the loads (one short read) and
    /// answers from the copy while they are the ones it was read with, which it carries itself:
    /// a load through the API or by `coasterlife import` in another process is seen at once.
    @Sendable func list(_ request: Request, context: AppRequestContext) async throws -> Response {
        let loads = try await self.store.parkLoads()
        let document: Document
        if let kept = self.parkList.value(while: loads) {
            document = kept
        } else {
            let summaries = try await self.store.parkSummaries()
            let data = try AppRequestContext.encoder.encode(ParkListResponse(summaries))
            document = Document(body: ByteBuffer(bytes: data), etag: entityTag(of: data))
            self.parkList.keep(document, while: Set(summaries.map { ParkLoad(park: $0.id, loadedAt: $0.importedAt) }))
        }
        return Self.answer(document, request, contentType: "application/json; charset=utf-8")
    }

    static func answer(_ document: Document, _ request: Request, contentType: String) -> Response {
        let headers: HTTPFields = [.eTag: document.etag, .cacheControl: "private, no-cache"]
        if request.hasCurrentCopy(document.etag) { return Response(status: .notModified, headers: headers) }
        var fields = headers
        fields[.contentType] = contentType
        return Response(status: .ok, headers: fields, body: .init(byteBuffer: document.body))
    }

    /// The park as GeoJSON (a hundred KB and more), with a strong ETag: an app that keeps the
    /// park asks again with `If-None-Match` and gets `304 Not Modified` until an admin loads it anew.
    ///
    /// Written once per load of the park (``KeptPerLoad``): reading the park from the store and
    /// encoding it took ~10 ms, so the route answered ~200 requests a second, 304s included.
    @Sendable func show(_ request: Request, context: AppRequestContext) async throws -> Response {
        let id = try Self.parkID(context)
        // The load time first: the park read after it is never older, so no copy is kept under a
        // load time newer than what it was written from.
        guard let loadedAt = try await self.store.parkLoadedAt(id) else { throw Self.noSuchPark(id) }
        let document: Document
        if let kept = self.documents.value(id, loadedAt: loadedAt) {
            document = kept
        } else {
            guard let definition = try await self.store.park(id) else { throw Self.noSuchPark(id) }
            let data = try ParkFile.encoder.encode(ParkFile(definition))
            document = Document(body: ByteBuffer(bytes: data), etag: entityTag(of: data))
            self.documents.keep(document, id, loadedAt: loadedAt)
        }
        return Self.answer(document, request, contentType: "application/geo+json")
    }

    /// The park's listed rides with how often the caller rode each: one read for the counts and
    /// the park's load, the rides themselves kept per load of the park (``KeptPerLoad``).
    @Sendable func rides(_ request: Request, context: AppRequestContext) async throws -> RideListResponse {
        let id = try Self.parkID(context)
        guard let mine = try await self.store.rideCounts(of: try context.requireIdentity().id, in: id) else { throw Self.noSuchPark(id) }
        let counts = mine.counts
        let rides: [Ride]
        if let kept = self.rideLists.value(id, loadedAt: mine.loadedAt) {
            rides = kept
        } else {
            // The rides carry the load they were read at: a load between the two reads is kept
            // under its own time, and the next request reads again.
            guard let read = try await self.store.rides(in: id) else { throw Self.noSuchPark(id) }
            self.rideLists.keep(read.rides, id, loadedAt: read.loadedAt)
            rides = read.rides
        }
        let zones = Set(self.fences.index.zoneIDs(of: id))
        return RideListResponse(park: id, rides: rides.map { ride in
            var wire = RideWire(ride, zone: zones.contains(ZoneID(rawValue: ride.id.rawValue)) ? ZoneID(rawValue: ride.id.rawValue) : nil)
            wire.myCount = counts[ride.id] ?? 0
            return wire
        })
    }

    /// Answers from the in-memory index only: no database round trip on this path.
    @Sendable func locate(_ request: Request, context: AppRequestContext) async throws -> LocateResponse {
        try Self.locate(request.uri.queryParameters, in: self.places.indexAndPlaces)
    }

    /// The answer to `GET /v1/locate` with this query: the route's and the fast lane's.
    static func locate(_ query: some QueryLookup, in fences: (index: FenceIndex, places: PlaceFragments)) throws -> LocateResponse {
        do {
            let lat = try query.requiredNumber("lat"), lon = try query.requiredNumber("lon")
            let accuracy = try query.optionalNumber("accuracy") ?? 0
            if (0...FenceIndex.maximumAccuracy).contains(accuracy), let position = try? Coordinate.validated(lat: lat, lon: lon) {
                return LocateResponse(position: position, accuracy: accuracy, matches: fences.index.matches(position, accuracy: accuracy),
                                      index: fences.index, places: fences.places)
            }
        } catch {}
        // Something is wrong: read the query again to name all of it.
        throw Self.locateProblem(query)
    }

    /// Every bad parameter of a locate query, each named with its reason, in one problem.
    static func locateProblem(_ query: some QueryLookup) -> Problem {
        var invalid: [Problem.InvalidParameter] = []
        func read(_ body: () throws -> Double?) -> Double? {
            do { return try body() } catch let problem as Problem { invalid += problem.invalidParams } catch {}
            return nil
        }
        let lat = read { try query.requiredNumber("lat") }
        let lon = read { try query.requiredNumber("lon") }
        do throws(CoordinateProblem) {
            _ = try Coordinate.validated(lat: lat ?? 0, lon: 0)
        } catch {
            invalid.append(.init(name: error.field, reason: error.description))
        }
        do throws(CoordinateProblem) {
            _ = try Coordinate.validated(lat: 0, lon: lon ?? 0)
        } catch {
            invalid.append(.init(name: error.field, reason: error.description))
        }
        if let accuracy = read({ try query.optionalNumber("accuracy") }), !(0...FenceIndex.maximumAccuracy).contains(accuracy) {
            invalid.append(.init(name: "accuracy", reason: "accuracy is a radius in metres, 0…\(Int(FenceIndex.maximumAccuracy))"))
        }
        var problem = Problem.invalidParameter(invalid.first?.name ?? "lat", invalid.first?.reason ?? "not a position")
        problem.invalidParams = invalid.isEmpty ? problem.invalidParams : invalid
        problem.detail = "Query parameters: " + problem.invalidParams.map { "\($0.name): \($0.reason)" }.joined(separator: "; ") + "."
        return problem
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

/// An answer written once, with its entity tag.
struct Document: Sendable {
    var body: ByteBuffer
    var etag: String
}

/// What was read or written from each park, kept until the park is loaded anew: a copy stands
/// while the park's load time in the store is the one it was made from. Every load sets a new
/// one, through the API or by `coasterlife import` in another process.
final class KeptPerLoad<Value: Sendable>: Sendable {
    private let kept = Mutex<[ParkID: (value: Value, loadedAt: Date)]>([:])

    func value(_ park: ParkID, loadedAt: Date) -> Value? {
        self.kept.withLock { kept in
            guard let copy = kept[park], copy.loadedAt == loadedAt else { return nil }
            return copy.value
        }
    }

    func keep(_ value: Value, _ park: ParkID, loadedAt: Date) {
        self.kept.withLock { $0[park] = (value, loadedAt) }
    }
}

/// One value kept while what it was made from stays the same.
final class KeptWhile<Stamp: Equatable & Sendable, Value: Sendable>: Sendable {
    private let kept = Mutex<(value: Value, stamp: Stamp)?>(nil)

    func value(while stamp: Stamp) -> Value? {
        self.kept.withLock { kept in kept?.stamp == stamp ? kept?.value : nil }
    }

    func keep(_ value: Value, while stamp: Stamp) {
        self.kept.withLock { $0 = (value, stamp) }
    }
}
