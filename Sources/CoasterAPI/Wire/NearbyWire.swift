import CoasterCore
import Foundation
import Hummingbird

struct NearbyResponse: Encodable, JSONWritable, Sendable {
    struct Place: Encodable, Sendable {
        var id: String
        var name: String
        var kind: ZoneKind?
    }

    struct Person: Encodable, Sendable {
        var user: UserWire
        /// Metres, bucketed up (10 m under 100 m, 50 m under 1 km, 500 m beyond).
        var distance: Double?
        /// Seconds since the fix, in whole minutes.
        var age: Int
        var precision: Precision
        var park: Place?
        var zone: Place?
        /// "at Cedar Point, in Frontier Town".
        var description: String?
    }

    let radius: Double?
    /// The rules' answer and the index that names its parks and zones; the wire structs above are
    /// built only for the `Encodable` form, the reference `JSONWriterTests` holds `write` to.
    let found: [NearbyPerson]
    let index: FenceIndex

    init(radius: Double?, people: [NearbyPerson], index: FenceIndex) {
        self.radius = radius
        self.found = people
        self.index = index
    }

    var people: [Person] {
        self.found.map { p in
            let park = p.park.flatMap { id in self.index.park(id).map { Place(id: id.rawValue, name: $0.name, kind: nil) } }
            let zone = p.zone.flatMap { id in self.index.zone(id).map { Place(id: id.rawValue, name: $0.name, kind: $0.kind) } }
            var description: String?
            if let park {
                description = "at \(park.name)" + (zone.map { ", \($0.kind == .land ? "in" : "at") \($0.name)" } ?? "")
            }
            return Person(user: UserWire(id: p.id, username: p.username, displayName: p.displayName), distance: p.distance,
                          age: Int(p.age), precision: p.precision, park: park, zone: zone, description: description)
        }
    }

    private enum CodingKeys: String, CodingKey { case radius, people }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(self.radius, forKey: .radius)
        try container.encode(self.people, forKey: .people)
    }

    /// The same JSON as the `Encodable` conformance (sorted keys, no nulls), written directly from
    /// the rules' answer: no wire structs, and the description written in pieces, not built.
    func write(to json: inout JSONWriter) {
        json.beginObject()
        json.key("people"); json.beginArray()
        // Friends nearby are mostly in one park: its name is looked up once, not per friend.
        var lastPark: (id: ParkID, name: String)?
        for p in self.found {
            let park: (id: ParkID, name: String)?
            if let id = p.park, let last = lastPark, last.id == id {
                park = last
            } else {
                park = p.park.flatMap { id in self.index.park(id).map { (id: id, name: $0.name) } }
                lastPark = park ?? lastPark
            }
            let zone = p.zone.flatMap { id in self.index.zone(id).map { (id: id, name: $0.name, kind: $0.kind) } }
            json.beginObject()
            json.key("age"); json.number(Int64(p.age))
            if let park {
                json.key("description")
                json.beginString()
                json.stringContent("at ")
                json.stringContent(park.name)
                if let zone {
                    json.stringContent(zone.kind == .land ? ", in " : ", at ")
                    json.stringContent(zone.name)
                }
                json.endString()
            }
            if let distance = p.distance { json.key("distance"); json.number(distance) }
            if let park {
                json.key("park"); json.beginObject()
                json.key("id"); json.string(park.id.rawValue)
                json.key("name"); json.string(park.name)
                json.endObject()
            }
            json.key("precision"); json.string(p.precision.rawValue)
            json.key("user"); json.beginObject()
            json.key("displayName"); json.string(p.displayName)
            json.key("id"); json.number(p.id.rawValue)
            json.key("username"); json.string(p.username)
            json.endObject()
            if let zone {
                json.key("zone"); json.beginObject()
                json.key("id"); json.string(zone.id.rawValue)
                json.key("kind"); json.string(zone.kind.rawValue)
                json.key("name"); json.string(zone.name)
                json.endObject()
            }
            json.endObject()
        }
        json.endArray()
        if let radius = self.radius { json.key("radius"); json.number(radius) }
        json.endObject()
    }
}
