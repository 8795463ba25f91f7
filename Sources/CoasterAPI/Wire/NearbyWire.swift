import CoasterCore
import CoasterHTTP
import CoasterService
import Foundation
import Hummingbird

struct NearbyResponse: Encodable, JSONWritable, Sendable {
    /// A park or a zone, as answers name it.
    typealias Place = NamedPlace

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
    /// The index's places as `write` puts them in the answer.
    let places: PlaceFragments

    init(radius: Double?, people: [NearbyPerson], index: FenceIndex, places: PlaceFragments) {
        self.radius = radius
        self.found = people
        self.index = index
        self.places = places
    }

    /// With the places written out for this answer alone (tests).
    init(radius: Double?, people: [NearbyPerson], index: FenceIndex) {
        self.init(radius: radius, people: people, index: index, places: PlaceFragments(index))
    }

    var people: [Person] {
        self.found.map { p in
            let park = p.park.flatMap { Place.park($0, in: self.index) }
            let zone = p.zone.flatMap { Place.zone($0, in: self.index) }
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
    /// the rules' answer: no wire structs, each park's and zone's part written once per index
    /// (``PlaceFragments``), not escaped again for every friend, and each friend's object in
    /// fragments (keys and punctuation in runs, as the order of its members is fixed).
    func write(to json: inout JSONWriter) {
        json.beginObject()
        json.key("people"); json.beginArray()
        // Friends nearby are mostly in one park: it is looked up once, not per friend.
        var lastPark: (id: ParkID, place: PlaceFragments.Place)?
        // The places' parts are read in place, out of the one array that holds them all, and so
        // are the friends: a copy of each holds four strings (names, park, zone).
        self.places.bytes.withUnsafeBufferPointer { parts in self.found.withUnsafeBufferPointer { found in
            for i in found.indices {
                let park: PlaceFragments.Place?, zone: PlaceFragments.Place?
                if let last = lastPark, found[i].park == last.id {
                    park = last.place
                } else {
                    park = found[i].park.flatMap { self.places.parks[$0] }
                    if let id = found[i].park, let park { lastPark = (id, park) }
                }
                // By the place the rules found it at, or else by its id.
                zone = found[i].zone.flatMap { id in found[i].zoneMark.zonePosition(in: self.index) ?? self.index.zonePosition(id) }
                    .flatMap { self.places.zones[$0] }
                // Room for the friend's object at its longest: the keys and punctuation (107 bytes
                // with the longest precision), the numbers, the places' parts, the names escaped.
                var bound = 160 + 2 * JSONRun.decimalBound + JSONRun.numberBound
                    + JSONRun.stringBound(found[i].displayName) + JSONRun.stringBound(found[i].username)
                if let park { bound += park.description.count + park.member.count }
                if let zone { bound += zone.description.count + zone.member.count }
                json.run(within: bound) { run in
                    run.raw("{\"age\":")
                    run.decimal(Int64(found[i].age))
                    if let park {
                        run.raw(",\"description\":\"")
                        run.raw(parts[park.description])
                        if let zone { run.raw(parts[zone.description]) }
                        run.byte(UInt8(ascii: "\""))
                    }
                    if let distance = found[i].distance {
                        run.raw(",\"distance\":")
                        run.number(distance)
                    }
                    if let park {
                        run.byte(UInt8(ascii: ","))
                        run.raw(parts[park.member])
                    }
                    switch found[i].precision {
                    case .exact: run.raw(",\"precision\":\"exact\",\"user\":{\"displayName\":")
                    case .approximate: run.raw(",\"precision\":\"approximate\",\"user\":{\"displayName\":")
                    case .parkOnly: run.raw(",\"precision\":\"park-only\",\"user\":{\"displayName\":")
                    }
                    run.string(found[i].displayName)
                    run.raw(",\"id\":")
                    run.decimal(found[i].id.rawValue)
                    run.raw(",\"username\":")
                    run.string(found[i].username)
                    run.byte(UInt8(ascii: "}"))
                    if let zone {
                        run.byte(UInt8(ascii: ","))
                        run.raw(parts[zone.member])
                    }
                    run.byte(UInt8(ascii: "}"))
                }
            }
        } }
        json.endArray()
        if let radius = self.radius { json.key("radius"); json.number(radius) }
        json.endObject()
    }

    /// About 200 bytes a friend (names, a park and a ride with their ids).
    var jsonCapacity: Int { 64 + 256 * self.found.count }
}

/// Parks' and zones' parts of the nearby and locate answers, written once per index: the park
/// and zone members and their words of the description, escaped, instead of looked up and
/// escaped for every friend or place in every answer.
///
/// All of them in one array, each place's parts as ranges of it: an answer reads the array in
/// place. An array per part cost every friend written two reference counts, taken and dropped on
/// arrays that both event loops' answers share.
final class PlaceFragments: Sendable {
    struct Place: Sendable {
        /// The whole member: `"park":{"id":…,"name":…}` or `"zone":{"id":…,"kind":…,"name":…}`.
        let member: Range<Int>
        /// Its words of the description, escaped: `at <park>`, or `, at <ride>` (`, in <land>`).
        let description: Range<Int>
    }

    /// Every place's parts, one after another.
    let bytes: [UInt8]
    let parks: [ParkID: Place]
    /// By the zone's position in the index (``FenceIndex/zonePosition(_:)``).
    let zones: [Place?]
    /// Each park's members in a locate answer after its containment, by its position in the
    /// index's ``FenceIndex/parkIDs``: `"id":…,"name":…,"zones":[`.
    let locatedParks: [Range<Int>]
    /// Each zone's members in a locate answer after its containment, and the end of its object,
    /// by its position in ``FenceIndex/zoneIDs``: `"id":…,"kind":…,"name":…,"ride":…}`.
    let locatedZones: [Range<Int>]

    init(_ index: FenceIndex) {
        var bytes: [UInt8] = []
        var parks: [ParkID: Place] = [:]
        for id in index.parkIDs {
            guard let park = index.park(id) else { continue }
            parks[id] = Self.place("park", id: id.rawValue, kind: nil, name: park.name, words: "at ", into: &bytes)
        }
        var zones = [Place?](repeating: nil, count: index.zoneCount)
        for id in index.zoneIDs {
            guard let zone = index.zone(id), let position = index.zonePosition(id), zones[position] == nil else { continue }
            zones[position] = Self.place("zone", id: id.rawValue, kind: zone.kind, name: zone.name, words: zone.kind == .land ? ", in " : ", at ",
                                         into: &bytes)
        }
        var locatedParks: [Range<Int>] = []
        for position in 0..<index.parkCount {
            let park = index.park(at: position)
            var members = JSONWriter(capacity: 64)
            members.key("id"); members.string(park.id.rawValue)
            members.key("name"); members.string(park.name)
            members.key("zones"); members.beginArray()
            locatedParks.append(Self.append(members.bytes, to: &bytes))
        }
        var locatedZones: [Range<Int>] = []
        for position in 0..<index.zoneCount {
            let zone = index.zone(at: position)
            var members = JSONWriter(capacity: 96)
            members.key("id"); members.string(zone.id.rawValue)
            members.key("kind"); members.string(zone.kind.rawValue)
            members.key("name"); members.string(zone.name)
            if let ride = zone.ride { members.key("ride"); members.string(ride.rawValue) }
            var closed = members.bytes
            closed.append(UInt8(ascii: "}"))
            locatedZones.append(Self.append(closed, to: &bytes))
        }
        self.bytes = bytes
        self.parks = parks
        self.zones = zones
        self.locatedParks = locatedParks
        self.locatedZones = locatedZones
    }

    /// Appends `part` to `bytes`: where it is.
    private static func append(_ part: [UInt8], to bytes: inout [UInt8]) -> Range<Int> {
        let start = bytes.count
        bytes.append(contentsOf: part)
        return start..<bytes.count
    }

    /// Appends `"key":{"id":…,"kind":…,"name":…}` (no kind for a park) and `words` + name, escaped,
    /// to `bytes`: where they are.
    private static func place(_ key: StaticString, id: String, kind: ZoneKind?, name: String, words: StaticString, into bytes: inout [UInt8]) -> Place {
        var member = JSONWriter(capacity: 64)
        member.key(key); member.beginObject()
        member.key("id"); member.string(id)
        if let kind { member.key("kind"); member.string(kind.rawValue) }
        member.key("name"); member.string(name)
        member.endObject()
        var description = JSONWriter(capacity: 64)
        description.stringContent(words)
        description.stringContent(name)
        return Place(member: Self.append(member.bytes, to: &bytes), description: Self.append(description.bytes, to: &bytes))
    }
}
