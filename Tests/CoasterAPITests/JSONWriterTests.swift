@testable import CoasterAPI
@testable import CoasterCore
import Foundation
import NIOCore
import Testing

/// The hand-written JSON of the hot answers says exactly what the shared `JSONEncoder` would say of
/// the same values (their `Encodable` conformance is the reference).
@Suite("JSON writer")
struct JSONWriterTests {
    static let cedarPoint: (index: FenceIndex, definition: ParkDefinition) = {
        let data = try! Data(contentsOf: TestService.repoRoot.appendingPathComponent("data/parks/cedar-point.geojson"))
        let definition = try! ParkImporter().definition(from: data)
        return (try! FenceIndex(parks: [definition.park], zones: definition.zones, replicas: 1), definition)
    }()

    func agree(_ value: some Encodable & JSONWritable) throws {
        let reference = try AppRequestContext.encoder.encode(value)
        let written = Data(value.jsonBuffer.readableBytesView)
        let a = try JSONSerialization.jsonObject(with: reference) as? NSDictionary
        let b = try JSONSerialization.jsonObject(with: written) as? NSDictionary
        #expect(a != nil && a == b, "\(String(decoding: written, as: UTF8.self)) vs \(String(decoding: reference, as: UTF8.self))")
        // Byte for byte, too: same key order, same number forms, same escapes.
        #expect(String(decoding: written, as: UTF8.self) == String(decoding: reference, as: UTF8.self))
    }

    @Test func locateAnswersAgree() throws {
        let index = Self.cedarPoint.index
        for (lat, lon, accuracy) in [(41.481656, -82.688132, 5.0), (41.4822, -82.6835, 10), (41.4561, -82.7117, 0), (41.48, -82.68, 0.25)] {
            let position = Coordinate(lat: lat, lon: lon)
            try self.agree(LocateResponse(position: position, accuracy: accuracy, hits: index.locate(position, accuracy: accuracy)))
        }
        // Names that need escaping, a zone without a ride, fractions and negative zero.
        let hits = [ParkHit(id: "p", name: "Quote \" back\\slash\ttab\nnewline \u{1}ctl / slash ünïcödé 🎢", containment: .uncertain, zones: [
            ZoneHit(id: "p.a", kind: .land, name: "Land", ride: nil, containment: .inside),
            ZoneHit(id: "p.b", kind: .ride, name: "Ride", ride: "p.b", containment: .uncertain),
        ])]
        try self.agree(LocateResponse(position: Coordinate(lat: -0.0, lon: 179.999999), accuracy: 1e-3, hits: hits))
        try self.agree(LocateResponse(position: Coordinate(lat: 12.5, lon: -1e-7), accuracy: 5_000, hits: []))
    }

    @Test func nearbyAnswersAgree() throws {
        let index = Self.cedarPoint.index
        let park = Self.cedarPoint.definition.park.id
        let zone = try #require(Self.cedarPoint.definition.zones.first?.id)
        let people = [
            NearbyPerson(id: UserID(1), username: "ada", displayName: "Ada \"the\" Rider", distance: 10, age: 60, precision: .exact, park: park, zone: zone),
            NearbyPerson(id: UserID(2), username: "bo", displayName: "Bø", distance: 350, age: 0, precision: .approximate, park: park, zone: nil),
            NearbyPerson(id: UserID(3), username: "cy", displayName: "", distance: nil, age: 7_200, precision: .parkOnly, park: park, zone: nil),
            NearbyPerson(id: UserID(4), username: "di", displayName: "Di", distance: 2_500, age: 120, precision: .exact, park: nil, zone: nil),
        ]
        try self.agree(NearbyResponse(radius: 500, people: people, index: index))
        try self.agree(NearbyResponse(radius: nil, people: people, index: index))
        try self.agree(NearbyResponse(radius: 12.5, people: [], index: index))
    }
}
