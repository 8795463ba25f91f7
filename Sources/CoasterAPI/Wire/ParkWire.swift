import CoasterCore
import CoasterHTTP
import CoasterService
import CoasterStore
import Foundation
import Hummingbird

/// `GET /v1/parks`.
struct ParkListResponse: ResponseEncodable, Sendable {
    struct Item: Encodable, Sendable {
        var id: ParkID
        var name: String
        var timeZone: String
        var attribution: String?
        /// `[minLon, minLat, maxLon, maxLat]`, as a GeoJSON bbox.
        var bbox: [Double]
        var rideCount: Int
        var zoneCount: Int
        var importedAt: Date
    }

    var parks: [Item]

    init(_ summaries: [ParkSummary]) {
        self.parks = summaries.map {
            Item(id: $0.id, name: $0.name, timeZone: $0.timeZone, attribution: $0.attribution,
                 bbox: [$0.bounds.minLon, $0.bounds.minLat, $0.bounds.maxLon, $0.bounds.maxLat],
                 rideCount: $0.rideCount, zoneCount: $0.zoneCount, importedAt: $0.importedAt)
        }
    }
}

/// A ride as the API shows it.
struct RideWire: JSONObject, Sendable {
    struct Stats: JSONObject, Sendable {
        var heightM: Double?
        var speedKmh: Double?
        var lengthM: Double?
        var inversions: Int?
        var manufacturer: String?
        var model: String?
        var opened: Int?
        var material: String?
        var source: String?

        static let members: [JSONMember<Self>] = [
            .init("heightM", \.heightM), .init("inversions", \.inversions), .init("lengthM", \.lengthM),
            .init("manufacturer", \.manufacturer), .init("material", \.material), .init("model", \.model), .init("opened", \.opened),
            .init("source", \.source), .init("speedKmh", \.speedKmh),
        ]
    }

    var id: RideID
    var name: String
    var type: RideType
    var status: RideStatus
    var land: String?
    var minHeightCm: Int?
    /// Minimum height to ride without an adult.
    var aloneHeightCm: Int?
    var maxHeightCm: Int?
    var note: String?
    /// The ride's own zone, when it has a footprint.
    var zone: ZoneID?
    var stats: Stats?
    /// How often the caller has ridden it (`GET /v1/parks/{parkId}/rides` only).
    var myCount: Int?
    /// Seconds between two logged rides by one rider.
    var cycleSeconds: Int

    static let members: [JSONMember<Self>] = [
        .init("aloneHeightCm", \.aloneHeightCm), .init("cycleSeconds", \.cycleSeconds), .init("id", \.id.rawValue), .init("land", \.land),
        .init("maxHeightCm", \.maxHeightCm), .init("minHeightCm", \.minHeightCm), .init("myCount", \.myCount), .init("name", \.name),
        .init("note", \.note), .init("stats", \.stats), .init("status", \.status.rawValue), .init("type", \.type.rawValue),
        .init("zone", \.zone?.rawValue),
    ]

    init(_ ride: Ride, zone: ZoneID?) {
        self.id = ride.id
        self.name = ride.name
        self.type = ride.type
        self.status = ride.status
        self.land = ride.land
        self.minHeightCm = ride.minHeightCm
        self.aloneHeightCm = ride.aloneHeightCm
        self.maxHeightCm = ride.maxHeightCm
        self.note = ride.note
        self.zone = zone
        self.cycleSeconds = Int(ride.cooldown)
        self.stats = Stats(ride.stats)
    }
}

extension RideWire.Stats {
    /// `nil` when no figure is known.
    init?(_ s: RideStats) {
        guard !s.isEmpty else { return nil }
        self.init(heightM: s.heightM, speedKmh: s.speedKmh, lengthM: s.lengthM, inversions: s.inversions,
                  manufacturer: s.manufacturer, model: s.model, opened: s.opened, material: s.material, source: s.source)
    }
}

/// `GET /v1/parks/{parkId}/rides`: written by ``JSONWriter`` from its members' list (``JSONObject``),
/// as `JSONEncoder` writes it.
struct RideListResponse: JSONObject, JSONWritable, Sendable {
    var park: ParkID
    var rides: [RideWire]

    static let members: [JSONMember<Self>] = [.init("park", \.park.rawValue), .init("rides", \.rides)]

    /// A ride with its stats is about 250 bytes.
    var jsonCapacity: Int { 64 + 256 * self.rides.count }
}

/// `GET /v1/parks/{parkId}`: the park as a park file (docs: Geofences, "Park files"), the format
/// `coasterlife import` and `PUT /v1/admin/parks/{parkId}` read, so what is served loads back to
/// the same park and serves again byte for byte. Zones come out already drawn (a ride's point as
/// its buffered, clipped circle), and in one order whatever order the file that loaded them had:
/// the park, its lands, its rides (each with its footprint, or a `null` geometry), queues, places.
struct ParkFile: Encodable, Sendable {
    struct Feature: Encodable, Sendable {
        var type = "Feature"
        /// The zone's id as the API names it (`cedar-point.millennium-force`); the park's own id for
        /// the park.
        var id: String
        var properties: Properties
        /// Encoded as `null` when absent: a ride without a footprint.
        var geometry: GeoJSONMultiPolygon?

        private enum CodingKeys: String, CodingKey { case type, id, properties, geometry }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(self.type, forKey: .type)
            try container.encode(self.id, forKey: .id)
            try container.encode(self.properties, forKey: .properties)
            try container.encode(self.geometry, forKey: .geometry)
        }
    }

    /// A feature's properties; what is unknown is left out. Encoded with snake_case keys
    /// (``encoder``), the park file's own: `heightMinCm` is `height_min_cm`, `cycleS` is `cycle_s`.
    struct Properties: Encodable, Sendable {
        var kind: String
        var id: String
        var name: String
        var timezone: String?
        var ride: String?
        var category: String?
        var type: RideType?
        var status: RideStatus?
        var land: String?
        var note: String?
        var heightMinCm: Int?
        var heightAloneCm: Int?
        var heightMaxCm: Int?
        var cycleS: Int?
        var stats: RideWire.Stats?
        /// `[lon, lat]` of a ride's or poi's place (``Zone/position``): served so that a zone
        /// served drawn as its circle loads back at the point it was drawn around.
        var position: [Double]?
    }

    /// The encoder a park file is written with: sorted keys, so a park serves the same bytes each
    /// time, and the file's snake_case names.
    static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return encoder
    }

    var type = "FeatureCollection"
    var attribution: String?
    var bbox: [Double]?
    var features: [Feature]

    init(_ definition: ParkDefinition) {
        let park = definition.park
        self.attribution = park.attribution
        self.bbox = park.boundary.boundingBox.map { [$0.minLon, $0.minLat, $0.maxLon, $0.maxLat] }
        func slug(_ id: String) -> String { String(id.dropFirst(park.id.rawValue.count + 1)) }
        func position(_ zone: Zone?) -> [Double]? { zone?.position.map { [$0.lon, $0.lat] } }
        func zoneFeature(_ zone: Zone) -> Feature {
            Feature(id: zone.id.rawValue,
                    properties: Properties(kind: zone.kind.rawValue, id: slug(zone.id.rawValue), name: zone.name,
                                           ride: zone.kind == .queue ? zone.ride.map { slug($0.rawValue) } : nil, category: zone.category,
                                           land: zone.kind == .poi ? zone.land : nil, position: zone.kind == .poi ? position(zone) : nil),
                    geometry: GeoJSONMultiPolygon(zone.area))
        }
        var features = [Feature(
            id: park.id.rawValue,
            properties: Properties(kind: "park", id: park.id.rawValue, name: park.name, timezone: park.timeZone),
            geometry: GeoJSONMultiPolygon(park.boundary))]
        features += definition.zones.filter { $0.kind == .land }.map(zoneFeature)
        let footprints = Dictionary(
            definition.zones.compactMap { z in z.kind == .ride ? z.ride.map { ($0, z) } : nil },
            uniquingKeysWith: { a, _ in a })
        for ride in definition.rides {
            features.append(Feature(
                id: ride.id.rawValue,
                properties: Properties(
                    kind: "ride", id: slug(ride.id.rawValue), name: ride.name, type: ride.type, status: ride.status, land: ride.land,
                    note: ride.note, heightMinCm: ride.minHeightCm, heightAloneCm: ride.aloneHeightCm,
                    heightMaxCm: ride.maxHeightCm, cycleS: ride.cycleSeconds, stats: RideWire.Stats(ride.stats),
                    position: position(footprints[ride.id])),
                geometry: footprints[ride.id].map { GeoJSONMultiPolygon($0.area) }))
        }
        features += definition.zones.filter { $0.kind == .queue }.map(zoneFeature)
        features += definition.zones.filter { $0.kind == .poi }.map(zoneFeature)
        self.features = features
    }
}

/// A GeoJSON MultiPolygon geometry (`[lon, lat]` positions).
struct GeoJSONMultiPolygon: Encodable, Sendable {
    var type = "MultiPolygon"
    var coordinates: [[[[Double]]]]

    init(_ area: MultiPolygon) {
        self.coordinates = area.polygons.map { polygon in
            polygon.rings.map { ring in ring.map { [$0.lon, $0.lat] } }
        }
    }
}

/// `GET /v1/locate`.
struct LocateResponse: Encodable, JSONWritable, Sendable {
    struct Zone: Encodable, Sendable {
        var id: ZoneID
        var kind: ZoneKind
        var name: String
        var ride: RideID?
        var containment: Containment
    }

    struct Park: Encodable, Sendable {
        var id: ParkID
        var name: String
        var containment: Containment
        var zones: [Zone]
    }

    var position: Coordinate
    /// Metres, as used (capped at the index's maximum).
    var accuracy: Double
    /// The index's answer by places, the index that names them and its places' parts as answers
    /// write them: the route writes the answer straight to JSON (``write(to:)``), no name, id or
    /// array copied out of the index first.
    let matches: FenceMatches
    let index: FenceIndex
    let places: PlaceFragments

    init(position: Coordinate, accuracy: Double, matches: FenceMatches, index: FenceIndex, places: PlaceFragments) {
        self.position = position
        self.accuracy = accuracy
        self.matches = matches
        self.index = index
        self.places = places
    }

    /// Looked up in `index`, with its places written out for this answer alone (tests).
    init(position: Coordinate, accuracy: Double, index: FenceIndex) {
        self.init(position: position, accuracy: accuracy, matches: index.matches(position, accuracy: accuracy), index: index,
                  places: PlaceFragments(index))
    }

    private enum CodingKeys: String, CodingKey {
        case position, accuracy, parks
    }

    /// The wire types, for the OpenAPI-shaped `Encodable` form that ``write(to:)`` must agree with.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.position, forKey: .position)
        try container.encode(self.accuracy, forKey: .accuracy)
        try container.encode(self.index.hits(self.matches).map { hit in
            Park(id: hit.id, name: hit.name, containment: hit.containment, zones: hit.zones.map {
                Zone(id: $0.id, kind: $0.kind, name: $0.name, ride: $0.ride, containment: $0.containment)
            })
        }, forKey: .parks)
    }

    /// The same JSON as the `Encodable` conformance (sorted keys, no nulls), written directly: each
    /// park and zone as its containment and then its members after it, written once per index
    /// (``PlaceFragments``).
    func write(to json: inout JSONWriter) {
        json.beginObject()
        json.key("accuracy"); json.number(self.accuracy)
        json.key("parks"); json.beginArray()
        self.places.bytes.withUnsafeBufferPointer { parts in
            var parks = 0, zones = 0
            self.index.forEachPlace(self.matches) { p, containment in
                if parks > 0 { json.fragment("]}") }
                json.beginFragments()
                json.fragment(Self.opening(containment))
                json.fragment(parts[self.places.locatedParks[p]])
                parks += 1
                zones = 0
            } zone: { z, containment in
                if zones > 0 { json.fragment(",") }
                json.fragment(Self.opening(containment))
                json.fragment(parts[self.places.locatedZones[z]])
                zones += 1
            }
            if parks > 0 { json.fragment("]}") }
        }
        json.endArray()
        json.key("position"); json.beginObject()
        json.key("lat"); json.number(self.position.lat)
        json.key("lon"); json.number(self.position.lon)
        json.endObject()
        json.endObject()
    }

    /// How a park's or a zone's object starts: `{"containment":"…",`, its other members after.
    private static func opening(_ containment: Containment) -> StaticString {
        switch containment {
        case .inside: "{\"containment\":\"inside\","
        case .uncertain: "{\"containment\":\"uncertain\","
        case .outside: "{\"containment\":\"outside\","
        }
    }
}

/// The hot routes' answers, written as the routes write them: what `coasterbench engine` times as
/// the named lookup (`GET /v1/locate`, valid positions) and the nearby answer
/// (`GET /v1/friends/nearby`), the routes' work without the HTTP around it.
package struct RouteAnswers: Sendable {
    private let index: FenceIndex
    private let places: PlaceFragments

    package init(_ index: FenceIndex) {
        self.index = index
        self.places = PlaceFragments(index)
    }

    /// The length in bytes of the locate answer at `position`.
    package func locateLength(at position: Coordinate, accuracy: Double) -> Int {
        LocateResponse(position: position, accuracy: accuracy, matches: self.index.matches(position, accuracy: accuracy), index: self.index,
                       places: self.places).jsonBuffer.readableBytes
    }

    /// The length in bytes of the nearby answer listing `people` (as the rules list them).
    package func nearbyLength(radius: Double, people: [NearbyPerson]) -> Int {
        NearbyResponse(radius: radius, people: people, index: self.index, places: self.places).jsonBuffer.readableBytes
    }
}
