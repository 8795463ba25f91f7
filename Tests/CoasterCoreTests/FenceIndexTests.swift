@testable import CoasterCore
import Foundation
import Testing

@Suite("Fence index on real parks")
struct FenceIndexTests {
    static let parks: [ParkDefinition] = ["cedar-point", "kings-island", "six-flags-fiesta-texas"].map { try! Fixtures.park($0) }
    static let index = try! FenceIndex(parks: parks.map(\.park), zones: parks.flatMap(\.zones), replicas: 2)

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var lat: Double
        var lon: Double
        var accuracy: Double
        var park: String?
        var containment: Containment?
        var zone: String? = nil
        var testDescription: String { self.name }
    }

    static let cedarPoint = parks[0].park.boundary.polygons[0].exterior
    /// A vertex of the real Cedar Point fence, and the midpoint of one of its edges.
    static let vertex = cedarPoint[10]
    static let edgeMidpoint = Coordinate(lat: (cedarPoint[10].lat + cedarPoint[11].lat) / 2, lon: (cedarPoint[10].lon + cedarPoint[11].lon) / 2)

    static let cases: [Case] = [
        Case(name: "README example names Cedar Point", lat: 41.4822, lon: -82.6835, accuracy: 10, park: "cedar-point", containment: .inside),
        Case(name: "Millennium Force station", lat: 41.481656, lon: -82.688132, accuracy: 5, park: "cedar-point", containment: .inside,
             zone: "cedar-point.millennium-force"),
        Case(name: "Sandusky downtown", lat: 41.4561, lon: -82.7117, accuracy: 10, park: nil, containment: nil),
        Case(name: "Kings Island", lat: 39.3440, lon: -84.2680, accuracy: 0, park: "kings-island", containment: .inside),
        Case(name: "Fiesta Texas", lat: 29.5990, lon: -98.6100, accuracy: 0, park: "six-flags-fiesta-texas", containment: .inside),
        Case(name: "on a fence vertex, exact", lat: vertex.lat, lon: vertex.lon, accuracy: 0, park: "cedar-point", containment: .inside),
        Case(name: "on a fence edge, exact", lat: edgeMidpoint.lat, lon: edgeMidpoint.lon, accuracy: 0, park: "cedar-point", containment: .inside),
        Case(name: "on a fence vertex, 10 m accuracy", lat: vertex.lat, lon: vertex.lon, accuracy: 10, park: "cedar-point", containment: .uncertain),
        Case(name: "null island", lat: 0, lon: 0, accuracy: 5_000, park: nil, containment: nil),
        Case(name: "antimeridian", lat: 0, lon: 180, accuracy: 100, park: nil, containment: nil),
    ]

    @Test(arguments: cases)
    func locate(_ c: Case) throws {
        let hits = Self.index.locate(Coordinate(lat: c.lat, lon: c.lon), accuracy: c.accuracy)
        #expect(hits.first?.id.rawValue == c.park)
        #expect(hits.first?.containment == c.containment)
        if let zone = c.zone {
            #expect(hits.first?.zones.contains { $0.id.rawValue == zone && $0.containment == .inside } == true)
        }
    }

    @Test func justOutsideIsUncertainOnlyWhenTheCircleReachesTheFence() throws {
        // 8 m from a fence vertex, on whichever side is outside the park.
        let v = Self.vertex
        let candidates = stride(from: 0.0, to: 360, by: 15).map { Geodesy.destination(from: v, azimuth: $0, distance: 8) }
        let outsidePoint = try #require(candidates.first { Self.index.locate($0).isEmpty })
        // A 20 m circle reaches the vertex, so it crosses the fence; an exact point does not.
        #expect(Self.index.locate(outsidePoint, accuracy: 20).first?.containment == .uncertain)
        #expect(Self.index.locate(outsidePoint, accuracy: 0).isEmpty)
    }

    @Test func agreesWithPlainGEOSOnRandomPointsAroundEachPark() throws {
        let context = GEOSContext()
        var generator = SeededGenerator(seed: 42)
        for definition in Self.parks {
            let park = try context.geometry(definition.park.boundary)
            let zones = try definition.zones.map { (id: $0.id, geometry: try context.geometry($0.area)) }
            let box = try #require(definition.park.boundary.boundingBox)
            for _ in 0..<1_500 {
                let p = Coordinate(lat: Double.random(in: box.minLat - 0.002...box.maxLat + 0.002, using: &generator),
                                   lon: Double.random(in: box.minLon - 0.002...box.maxLon + 0.002, using: &generator))
                let point = try context.point(p)
                let hits = Self.index.locate(p)
                let expectedPark = try park.covers(point)
                #expect((hits.first?.id == definition.park.id) == expectedPark, "park disagreement at \(p)")
                let expectedZones = try Set(zones.filter { try $0.geometry.covers(point) }.map(\.id))
                #expect(Set(hits.first?.zones.map(\.id) ?? []) == expectedZones, "zone disagreement at \(p)")
            }
        }
    }

    /// The centre-first shortcut gives exactly the answers of testing the accuracy circle itself:
    /// random positions around each real park (many near its fence and zones), random accuracies.
    @Test func centreFirstAnswersLikeTheCircleTest() throws {
        let parks = Self.parks.map(\.park), zones = Self.parks.flatMap(\.zones)
        let fast = try FenceIndex(parks: parks, zones: zones, replicas: 1, centreFirst: true)
        let slow = try FenceIndex(parks: parks, zones: zones, replicas: 1, centreFirst: false)
        var generator = SeededGenerator(seed: 99)
        var compared = 0
        for definition in Self.parks {
            let box = try #require(definition.park.boundary.boundingBox)
            let fence = definition.park.boundary.polygons[0].exterior
            for k in 0..<1_500 {
                let p: Coordinate
                if k % 3 == 0 {
                    // Within 40 m of a fence vertex: where the circle matters.
                    p = Geodesy.destination(from: fence.randomElement(using: &generator)!, azimuth: .random(in: 0..<360, using: &generator),
                                            distance: .random(in: 0...40, using: &generator))
                } else {
                    p = Coordinate(lat: .random(in: box.minLat - 0.002...box.maxLat + 0.002, using: &generator),
                                   lon: .random(in: box.minLon - 0.002...box.maxLon + 0.002, using: &generator))
                }
                let accuracy = ([0, 3, 10, 25, 60, 150] as [Double]).randomElement(using: &generator)!
                #expect(fast.locate(p, accuracy: accuracy) == slow.locate(p, accuracy: accuracy), "at \(p) ± \(accuracy) m")
                compared += 1
            }
        }
        #expect(compared == 4_500)
    }

    @Test func aHoleIsOutside() throws {
        // Cedar Point with a 40 m hole cut around the Millennium Force station.
        let cp = Self.parks[0].park
        let center = Coordinate(lat: 41.481656, lon: -82.688132)
        var hole = Geodesy.geodesicCircle(center: center, radius: 40)
        hole.reverse()
        var boundary = cp.boundary
        boundary.polygons[0].rings.append(hole)
        let holed = Park(id: "holed", name: "Holed", timeZone: "UTC", attribution: nil, boundary: boundary)
        let index = try FenceIndex(parks: [holed], zones: [], replicas: 1)
        #expect(index.locate(center).isEmpty)
        #expect(index.locate(center, accuracy: 10).isEmpty)
        #expect(index.locate(center, accuracy: 60).first?.containment == .uncertain)
        #expect(index.locate(Geodesy.destination(from: center, azimuth: 90, distance: 100), accuracy: 10).first?.containment == .inside)
    }

    @Test func concurrentLookupsAgree() async throws {
        let p = Coordinate(lat: 41.481656, lon: -82.688132)
        let expected = Self.index.locate(p, accuracy: 5)
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 {
                group.addTask { (0..<500).allSatisfy { _ in Self.index.locate(p, accuracy: 5) == expected } }
            }
            for try await ok in group { #expect(ok) }
        }
    }
}
