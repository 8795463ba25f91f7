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

    var radius: Double?
    var people: [Person]

    init(radius: Double?, people: [NearbyPerson], index: FenceIndex) {
        self.radius = radius
        self.people = people.map { p in
            let park = p.park.flatMap { id in index.park(id).map { Place(id: id.rawValue, name: $0.name, kind: nil) } }
            let zone = p.zone.flatMap { id in index.zone(id).map { Place(id: id.rawValue, name: $0.name, kind: $0.kind) } }
            var description: String?
            if let park {
                description = "at \(park.name)" + (zone.map { ", \($0.kind == .land ? "in" : "at") \($0.name)" } ?? "")
            }
            return Person(user: UserWire(id: p.id, username: p.username, displayName: p.displayName), distance: p.distance,
                          age: Int(p.age), precision: p.precision, park: park, zone: zone, description: description)
        }
    }

    /// The same JSON as the `Encodable` conformance (sorted keys, no nulls), written directly.
    func write(to json: inout JSONWriter) {
        func place(_ place: Place) {
            json.beginObject()
            json.key("id"); json.string(place.id)
            if let kind = place.kind { json.key("kind"); json.string(kind.rawValue) }
            json.key("name"); json.string(place.name)
            json.endObject()
        }
        json.beginObject()
        json.key("people"); json.beginArray()
        for person in self.people {
            json.beginObject()
            json.key("age"); json.number(Int64(person.age))
            if let description = person.description { json.key("description"); json.string(description) }
            if let distance = person.distance { json.key("distance"); json.number(distance) }
            if let park = person.park { json.key("park"); place(park) }
            json.key("precision"); json.string(person.precision.rawValue)
            json.key("user"); json.beginObject()
            json.key("displayName"); json.string(person.user.displayName)
            json.key("id"); json.number(person.user.id.rawValue)
            json.key("username"); json.string(person.user.username)
            json.endObject()
            if let zone = person.zone { json.key("zone"); place(zone) }
            json.endObject()
        }
        json.endArray()
        if let radius = self.radius { json.key("radius"); json.number(radius) }
        json.endObject()
    }
}
