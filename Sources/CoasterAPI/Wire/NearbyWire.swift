import CoasterCore
import Foundation
import Hummingbird

struct NearbyResponse: ResponseEncodable, Sendable {
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
}
