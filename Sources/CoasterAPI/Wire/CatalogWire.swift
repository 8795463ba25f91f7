import CoasterCore
import CoasterHTTP
import CoasterStore
import Foundation
import Hummingbird

/// A value written as itself, or as `null` when absent (where ``JSONObject`` leaves an absent
/// member out): for members the contract says out loud.
struct OrNull<Wrapped: JSONWritableValue & Sendable & SendableMetatype>: JSONWritableValue, Sendable {
    var value: Wrapped?

    init(_ value: Wrapped?) { self.value = value }

    func write(to json: inout JSONWriter) {
        if let value { value.write(to: &json) } else { json.null() }
    }

    func write(member name: StaticString, to json: inout JSONWriter) {
        json.key(name)
        self.write(to: &json)
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        if let value { try c.encode(value) } else { try c.encodeNil() }
    }
}

/// A catalogue park as answers name it.
struct CatalogParkWire: JSONObject, Sendable {
    var id: ParkID
    var name: String
    /// Loaded with its geofences: its rides can be logged and its visits checked.
    var fenced: Bool

    init(_ park: CatalogPark) {
        self.id = park.id
        self.name = park.name
        self.fenced = park.fenced
    }

    static let members: [JSONMember<Self>] = [.init("fenced", \.fenced), .init("id", \.id.rawValue), .init("name", \.name)]
}

/// A position as JSON bodies write one: `{"lat", "lon"}`, degrees, WGS84.
struct LatLonWire: JSONObject, Sendable {
    var lat: Double
    var lon: Double

    static let members: [JSONMember<Self>] = [.init("lat", \.lat), .init("lon", \.lon)]
}

/// A ride of the catalogue (docs: Catalogue). `stats` has the keys of a fenced ride's;
/// `fencedRide` is the ride a rider logs (`null` while its park is not loaded); `lists` counts the
/// lists that hold it. The ride route adds `loggable` and, when it is not, a `note` saying why.
struct CatalogRideWire: JSONObject, Sendable {
    var id: RideID
    var name: String
    var park: CatalogParkWire
    var type: RideType
    var status: RideStatus?
    var land: String?
    var stats: RideWire.Stats?
    var position: LatLonWire?
    var fencedRide: OrNull<String>
    var lists: Int
    var loggable: Bool?
    var note: String?

    init(_ ride: CatalogRide) {
        self.id = ride.id
        self.name = ride.name
        self.park = CatalogParkWire(ride.park)
        self.type = ride.type
        self.status = ride.status
        self.land = ride.land
        self.stats = RideWire.Stats(ride.stats)
        self.position = ride.position.map { LatLonWire(lat: $0.lat, lon: $0.lon) }
        self.fencedRide = OrNull(ride.fenced?.rawValue)
        self.lists = ride.lists
    }

    /// The ride route's form: with whether it can be logged, and why not.
    static func detail(_ ride: CatalogRide) -> CatalogRideWire {
        var wire = CatalogRideWire(ride)
        wire.loggable = ride.fenced != nil
        if ride.fenced == nil {
            wire.note = ride.park.fenced ? "its park's file does not list it, so it cannot be logged"
                : "its park is not loaded with geofences yet, so it cannot be logged"
        }
        return wire
    }

    static let members: [JSONMember<Self>] = [
        .init("fencedRide", \.fencedRide), .init("id", \.id.rawValue), .init("land", \.land), .init("lists", \.lists), .init("loggable", \.loggable),
        .init("name", \.name), .init("note", \.note), .init("park", \.park), .init("position", \.position), .init("stats", \.stats),
        .init("status", \.status?.rawValue), .init("type", \.type.rawValue),
    ]
}

/// `GET /v1/catalog/rides/{rideId}`, written by ``JSONWriter``.
struct CatalogRideResponse: JSONWritable, Sendable {
    var ride: CatalogRideWire

    func write(to json: inout JSONWriter) { self.ride.write(to: &json) }
    var jsonCapacity: Int { 640 }
}

/// `GET /v1/catalog/search`, written by ``JSONWriter`` from its members' list: one page of rides
/// (a ride is about 450 bytes), the parks whose names hold every word, and whether the rides are
/// spelt alike rather than holding the words.
struct CatalogSearchResponse: JSONObject, JSONWritable, Sendable {
    var rides: [CatalogRideWire]
    var parks: [CatalogParkWire]
    var approximate: Bool

    init(_ results: CatalogResults) {
        self.rides = results.rides.map(CatalogRideWire.init)
        self.parks = results.parks.map(CatalogParkWire.init)
        self.approximate = results.approximate
    }

    static let members: [JSONMember<Self>] = [.init("approximate", \.approximate), .init("parks", \.parks), .init("rides", \.rides)]

    var jsonCapacity: Int { 64 + 512 * self.rides.count + 80 * self.parks.count }
}

/// `PUT /v1/admin/catalog`: what the import did, and what the catalogue holds after it.
struct CatalogImportResponse: ResponseEncodable, Sendable {
    struct Counts: Encodable, Sendable {
        var rides: Int
        var parks: Int
    }

    var added: Int
    var updated: Int
    var matchedFenced: Int
    var parks: Int
    var catalog: Counts

    init(_ summary: CatalogImportSummary, counts: (rides: Int, parks: Int)) {
        self.added = summary.added
        self.updated = summary.updated
        self.matchedFenced = summary.matchedFenced
        self.parks = summary.parks
        self.catalog = Counts(rides: counts.rides, parks: counts.parks)
    }
}
