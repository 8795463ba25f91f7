import CoasterCore
import CoasterHTTP
import CoasterService
import CoasterStore
import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// The ride catalogue (docs: Catalogue): search, one ride, and the admins' import.
struct CatalogController {
    let store: any Store

    var endpoints: RouteCollection<AppRequestContext> {
        let routes = RouteCollection(context: AppRequestContext.self)
        routes.get("catalog/search", use: self.search)
        routes.get("catalog/rides/{rideId}", use: self.ride)
        return routes
    }

    /// Routes for admins, under `/v1/admin`.
    var adminEndpoints: RouteCollection<AppRequestContext> {
        let routes = RouteCollection(context: AppRequestContext.self)
        routes.put("catalog", use: self.importCatalog)
        return routes
    }

    /// Words and filters, all optional; one page of rides in the order asked (by relevance with
    /// words, by name without), the parks whose names hold the words, and `approximate` when the
    /// rides are spelt alike instead of holding the words. One store read.
    @Sendable func search(_ request: Request, context: AppRequestContext) async throws -> CatalogSearchResponse {
        _ = try context.requireIdentity()
        let query = try Self.query(request.uri.queryParameters)
        return CatalogSearchResponse(try await self.store.searchCatalog(query))
    }

    /// The search a query string asks, or a 422 naming every parameter out of its bounds.
    static func query(_ parameters: some QueryLookup) throws -> CatalogQuery {
        var refused: [Problem.InvalidParameter] = []
        func refuse(_ name: String, _ reason: String) { refused.append(.init(name: name, reason: reason)) }
        func number(_ name: String, _ range: ClosedRange<Double>, _ what: String) -> Double? {
            guard let text = parameters.value(named: name) else { return nil }
            guard let value = Double(text), value.isFinite, range.contains(value) else {
                refuse(name, what)
                return nil
            }
            return value
        }
        func whole(_ name: String, _ range: ClosedRange<Int>) -> Int? {
            guard let text = parameters.value(named: name) else { return nil }
            guard let value = Int(text), range.contains(value) else {
                refuse(name, "a whole number in \(range.lowerBound)…\(range.upperBound)")
                return nil
            }
            return value
        }
        var query = CatalogQuery()
        if let q = parameters.value(named: "q").map(String.init) {
            if q.allSatisfy(\.isWhitespace) {
                refuse("q", "words to search for: an empty query searches nothing (leave q out to list the catalogue)")
            } else if CatalogLimits.query.violation(q) != nil {
                refuse("q", "at most 200 characters")
            } else if !CatalogText.terms(q).isEmpty {
                query.text = q
            }
            // Only marks (`"`, `*`, `-`): no word to search for, so the catalogue as without q.
        }
        if let park = parameters.value(named: "park").map(String.init) {
            if Slug.isValid(park) { query.park = ParkID(rawValue: park) } else { refuse("park", "a park's id: a-z, 0-9 and -, at most 64 characters") }
        }
        if let type = parameters.value(named: "type").map(String.init) {
            if let t = RideType(rawValue: type) { query.type = t } else { refuse("type", "one of \(RideType.allCases.map(\.rawValue).joined(separator: ", "))") }
        }
        if let manufacturer = parameters.value(named: "manufacturer").map(String.init) {
            if manufacturer.allSatisfy(\.isWhitespace) || CatalogLimits.query.violation(manufacturer) != nil {
                refuse("manufacturer", "a manufacturer's name or its start, 1 to 200 characters")
            } else {
                query.manufacturer = manufacturer
            }
        }
        query.minHeightM = number("minHeight", 0...1_000, "metres, a number in 0…1000")
        query.minSpeedKmh = number("minSpeed", 0...1_000, "km/h, a number in 0…1000")
        query.minInversions = whole("inversions", 0...100)
        query.openedFrom = whole("openedFrom", 1_800...3_000)
        query.openedTo = whole("openedTo", 1_800...3_000)
        if let from = query.openedFrom, let to = query.openedTo, from > to { refuse("openedTo", "a year no earlier than openedFrom") }
        if let sort = parameters.value(named: "sort").map(String.init) {
            if let s = CatalogSort(rawValue: sort) { query.sort = s } else { refuse("sort", "one of \(CatalogSort.allCases.map(\.rawValue).joined(separator: ", "))") }
        } else if query.text == nil {
            query.sort = .name
        }
        query.limit = whole("limit", 1...CatalogLimits.largestPage) ?? query.limit
        query.offset = whole("offset", 0...CatalogLimits.deepestOffset) ?? 0
        guard refused.isEmpty else { throw Problem.invalidSearch(refused) }
        return query
    }

    /// One catalogue entry: its figures, its park, how many lists hold it, and whether it can be
    /// logged (its park loaded with the ride's geofence) and why not.
    @Sendable func ride(_ request: Request, context: AppRequestContext) async throws -> CatalogRideResponse {
        _ = try context.requireIdentity()
        let id = RideID(rawValue: try context.parameters.require("rideId"))
        guard Slug.isRideID(id.rawValue), let ride = try await self.store.catalogRide(id) else {
            throw Problem(.noSuchRide, status: .notFound, title: "No such ride", detail: "The catalogue has no ride \"\(id.rawValue.prefix(130))\".")
        }
        return CatalogRideResponse(ride: .detail(ride))
    }

    /// Loads a catalogue file (the body, as `coasterlife catalog import` reads one): 200 with
    /// what was added, updated and matched to fenced rides; 422 naming every problem, and
    /// nothing written.
    @Sendable func importCatalog(_ request: Request, context: AppRequestContext) async throws -> CatalogImportResponse {
        try request.requireJSONContentType()
        let data = Data(try await request.body.collect(upTo: context.maxUploadSize).readableBytesView)
        if let fault = JSONSyntax.fault(in: data) {
            throw Problem(.malformedBody, status: .badRequest, title: "Malformed request body", detail: "not valid JSON: \(fault)")
        }
        let file = try CatalogFiles.check(data)
        let summary = try await self.store.importCatalog(file)
        context.logger.info("catalogue loaded", metadata: ["added": "\(summary.added)", "updated": "\(summary.updated)",
                                                           "matchedFenced": "\(summary.matchedFenced)", "by": "\(context.identity?.username ?? "?")"])
        return CatalogImportResponse(summary, counts: try await self.store.catalogCounts())
    }
}
