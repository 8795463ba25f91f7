import CoasterCore
import CoasterHTTP
import CoasterService
import Synchronization

/// `GET /v1/parks/{parkId}/places`: a park's places, nearest first with distance and bearing from
/// the caller's own latest fix while they are at the park, else by name without either. Every
/// answer credits OpenStreetMap, whose data the places are (ODbL: data/ATTRIBUTION.md).
///
/// Written by ``write(to:)`` from parts rendered once per load of the parks (``PlaceParts``); the
/// `Encodable` form is the same JSON (sorted keys, no nulls), the reference tests hold it to.
struct PlacesResponse: Encodable, JSONWritable, Sendable {
    static let attribution = "© OpenStreetMap contributors"
    static let attributionURL = "https://www.openstreetmap.org/copyright"

    /// Where the distances are measured from.
    enum From: String, Encodable, Sendable {
        /// The caller's latest accepted fix: they are at the park. Places nearest first.
        case yourPosition = "your-position"
        /// Nowhere: the caller is not at the park now. Places by name, without distances. (Not
        /// `.none`, which an optional's `nil` would be read as.)
        case nowhere = "none"
    }

    /// One place as the `Encodable` form writes it.
    struct Place: Encodable, Sendable {
        var bearingDegrees: Int?
        var category: PlaceCategory?
        var distanceMeters: Int?
        var id: String
        var land: String?
        var name: String
        var position: Coordinate
    }

    let park: ParkID
    let from: From
    let found: [PlaceFound]
    /// The park's places, which `found` names by position.
    let places: [ParkPlaces.Place]
    /// Their parts as written (``PlaceParts/park(_:)``).
    let parts: PlaceParts.Park

    /// Whole metres: a fix is good to a few metres, and a tenth would claim more.
    static func metres(_ distance: Double) -> Int { Int(distance.rounded()) }

    /// Whole degrees, 0…359; none for a place the caller stands on (0 m), where a bearing means nothing.
    static func degrees(_ bearing: Double?, at distance: Double?) -> Int? {
        guard let bearing, let distance, Self.metres(distance) > 0 else { return nil }
        let whole = Int(bearing.rounded())
        return whole >= 360 ? whole - 360 : whole
    }

    private enum CodingKeys: String, CodingKey {
        case attribution, attributionUrl, from, park, places
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Self.attribution, forKey: .attribution)
        try container.encode(Self.attributionURL, forKey: .attributionUrl)
        try container.encode(self.from, forKey: .from)
        try container.encode(self.park, forKey: .park)
        try container.encode(self.found.map { found in
            let place = self.places[found.place]
            return Place(bearingDegrees: Self.degrees(found.bearing, at: found.distance), category: place.category,
                         distanceMeters: found.distance.map(Self.metres), id: place.id, land: place.land, name: place.name,
                         position: place.position)
        }, forKey: .places)
    }

    /// About 160 bytes a place.
    var jsonCapacity: Int { 256 + 192 * self.found.count }

    func write(to json: inout JSONWriter) {
        json.beginObject()
        json.key("attribution"); json.string(Self.attribution)
        json.key("attributionUrl"); json.string(Self.attributionURL)
        json.key("from"); json.string(self.from.rawValue)
        json.key("park"); json.string(self.park.rawValue)
        json.key("places"); json.beginArray()
        self.parts.bytes.withUnsafeBufferPointer { bytes in
            for found in self.found {
                json.beginFragments()
                json.fragment("{")
                if let bearing = Self.degrees(found.bearing, at: found.distance) {
                    json.fragment("\"bearingDegrees\":")
                    json.fragment(decimal: Int64(bearing))
                    json.fragment(",")
                }
                if let category = self.places[found.place].category { json.fragment(PlaceParts.member(category)) }
                if let distance = found.distance {
                    json.fragment("\"distanceMeters\":")
                    json.fragment(decimal: Int64(Self.metres(distance)))
                    json.fragment(",")
                }
                json.fragment(bytes[self.parts.rest[found.place]])
            }
        }
        json.endArray()
        json.endObject()
    }
}

/// Each place's members after its distance, as ``PlacesResponse`` writes them
/// (`"id":…,"land":…,"name":…,"position":{…}}`), rendered once per ``ParkPlaces``.
final class PlaceParts: Sendable {
    /// One park's parts.
    struct Park: Sendable {
        let bytes: [UInt8]
        /// By the place's position among the park's places.
        let rest: [Range<Int>]
    }

    private let parks: [Park]

    init(_ places: ParkPlaces) {
        self.parks = places.parkIDs.indices.map { p in
            var bytes: [UInt8] = []
            var rest: [Range<Int>] = []
            for place in places.places(ofParkAt: p) {
                var members = JSONWriter(capacity: 160)
                members.beginObject()
                members.key("id"); members.string(place.id)
                members.member("land", place.land)
                members.key("name"); members.string(place.name)
                members.key("position"); members.beginObject()
                members.key("lat"); members.number(place.position.lat)
                members.key("lon"); members.number(place.position.lon)
                members.endObject()
                members.endObject()
                // Without the object's opening brace: the members before these come first.
                let written = members.bytes.dropFirst()
                rest.append(bytes.count..<(bytes.count + written.count))
                bytes.append(contentsOf: written)
            }
            return Park(bytes: bytes, rest: rest)
        }
    }

    /// The parts of the park at `position` in ``ParkPlaces/parkIDs``.
    func park(_ position: Int) -> Park { self.parks[position] }

    /// `"category":"…",` for each category.
    static func member(_ category: PlaceCategory) -> StaticString {
        switch category {
        case .food: "\"category\":\"food\","
        case .restroom: "\"category\":\"restroom\","
        case .firstAid: "\"category\":\"first-aid\","
        case .lockers: "\"category\":\"lockers\","
        case .guestServices: "\"category\":\"guest-services\","
        case .shop: "\"category\":\"shop\","
        case .parking: "\"category\":\"parking\","
        case .entrance: "\"category\":\"entrance\","
        case .show: "\"category\":\"show\","
        case .ride: "\"category\":\"ride\","
        case .landmark: "\"category\":\"landmark\","
        case .service: "\"category\":\"service\","
        }
    }
}

/// The places in force with their parts, rendered again when an import swaps them: the pair
/// always describes the same parks.
final class PlacesInForce: Sendable {
    let fences: Fences
    private let rendered: Mutex<(places: ParkPlaces, parts: PlaceParts)>

    init(_ fences: Fences) {
        self.fences = fences
        let places = fences.places
        self.rendered = Mutex((places, PlaceParts(places)))
    }

    /// The places in force now, with their parts.
    var placesAndParts: (places: ParkPlaces, parts: PlaceParts) {
        let places = self.fences.places
        return self.rendered.withLock { rendered in
            if rendered.places !== places { rendered = (places, PlaceParts(places)) }
            return rendered
        }
    }
}
