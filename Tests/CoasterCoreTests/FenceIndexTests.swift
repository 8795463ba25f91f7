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

    /// Every zone an accuracy circle meets is listed, against each zone of the park tested with
    /// GEOS: the index finds its candidate zones in the cells of a grid over the park, and a zone
    /// missed there would be missing here. Circles of 3 m to 400 m, around and across each park.
    @Test func circlesFindEveryZoneTheyMeet() throws {
        let parks = Self.parks.map(\.park), zones = Self.parks.flatMap(\.zones)
        let exact = try FenceIndex(parks: parks, zones: zones, replicas: 1, centreFirst: false, grids: false)
        let context = GEOSContext()
        var generator = SeededGenerator(seed: 11)
        var met = 0, several = 0
        for definition in Self.parks {
            let geometries = try definition.zones.map { (id: $0.id, geometry: try context.geometry($0.area).prepared()) }
            let box = try #require(definition.park.boundary.boundingBox)
            for _ in 0..<400 {
                let p = Coordinate(lat: .random(in: box.minLat - 0.002...box.maxLat + 0.002, using: &generator),
                                   lon: .random(in: box.minLon - 0.002...box.maxLon + 0.002, using: &generator))
                let accuracy = ([3, 10, 25, 60, 150, 400] as [Double]).randomElement(using: &generator)!
                guard let hit = exact.locate(p, accuracy: accuracy).first(where: { $0.id == definition.park.id }) else { continue }
                let circle = try context.geometry(Polygon(rings: [Geodesy.circumscribedCircle(center: p, radius: accuracy)]))
                let expected = try Set(geometries.filter { try $0.geometry.intersects(circle) }.map(\.id))
                #expect(Set(hit.zones.map(\.id)) == expected, "at \(p) ± \(accuracy) m")
                met += expected.count
                if expected.count > 1 { several += 1 }
            }
        }
        #expect(met > 500 && several > 100, "\(met) zones met, \(several) circles meeting several")
    }

    /// The centre-first shortcut gives exactly the answers of testing the accuracy circle itself:
    /// random positions around each real park (many near its fence and zones), random accuracies.
    @Test func centreFirstAnswersLikeTheCircleTest() throws {
        let parks = Self.parks.map(\.park), zones = Self.parks.flatMap(\.zones)
        let fast = try FenceIndex(parks: parks, zones: zones, replicas: 1, centreFirst: true, grids: false)
        let slow = try FenceIndex(parks: parks, zones: zones, replicas: 1, centreFirst: false, grids: false)
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

    /// The rasterised grids answer exactly like exact geometry wherever they answer at all: random
    /// positions around each real park, positions on fence and zone vertices and on edge
    /// midpoints (the boundary counts as inside), positions near zone centres, random accuracies.
    @Test func gridsAnswerLikeExactGeometry() throws {
        let parks = Self.parks.map(\.park), zones = Self.parks.flatMap(\.zones)
        let gridded = try FenceIndex(parks: parks, zones: zones, replicas: 1, centreFirst: true, grids: true)
        let exact = try FenceIndex(parks: parks, zones: zones, replicas: 1, centreFirst: false, grids: false)
        var generator = SeededGenerator(seed: 7)
        var compared = 0, pointsOnly = 0, decidedByGrid = 0
        var boundary: [Coordinate] = []
        for area in parks.map(\.boundary) + zones.map(\.area) {
            for ring in area.polygons.flatMap(\.rings) {
                for i in 1..<ring.count {
                    boundary.append(ring[i])
                    boundary.append(Coordinate(lat: (ring[i - 1].lat + ring[i].lat) / 2, lon: (ring[i - 1].lon + ring[i].lon) / 2))
                }
            }
        }
        func compare(_ p: Coordinate, _ accuracy: Double) {
            #expect(gridded.locate(p, accuracy: accuracy) == exact.locate(p, accuracy: accuracy), "at \(p) ± \(accuracy) m")
            compared += 1
        }
        for p in boundary { compare(p, 0) }
        for zone in zones {
            let box = try #require(zone.area.boundingBox)
            for _ in 0..<10 {
                compare(Geodesy.destination(from: box.center, azimuth: .random(in: 0..<360, using: &generator), distance: .random(in: 0...8, using: &generator)),
                        ([0, 0, 3, 10] as [Double]).randomElement(using: &generator)!)
            }
        }
        for definition in Self.parks {
            let box = try #require(definition.park.boundary.boundingBox)
            for _ in 0..<3_000 {
                let p = Coordinate(lat: .random(in: box.minLat - 0.002...box.maxLat + 0.002, using: &generator),
                                   lon: .random(in: box.minLon - 0.002...box.maxLon + 0.002, using: &generator))
                let accuracy = ([0, 0, 0, 3, 10, 25, 60] as [Double]).randomElement(using: &generator)!
                compare(p, accuracy)
                if accuracy == 0 {
                    pointsOnly += 1
                    if AreaGrid(definition.park.boundary).contains(p) != nil { decidedByGrid += 1 }
                }
            }
        }
        #expect(compared == boundary.count + zones.count * 10 + 9_000)
        // Most random points are decided by a park's grid alone.
        #expect(Double(decidedByGrid) > 0.8 * Double(pointsOnly))
    }

    @Test func gridCellsAreConservative() throws {
        let cp = Self.parks[0].park.boundary
        let grid = AreaGrid(cp)
        let census = grid.census
        #expect(census.inside > 0 && census.outside > 0 && census.edge > 0)
        // Every vertex and edge midpoint of the fence is in an edge cell: the grid never decides there.
        let ring = cp.polygons[0].exterior
        for i in 1..<ring.count {
            #expect(grid.contains(ring[i]) == nil)
            #expect(grid.contains(Coordinate(lat: (ring[i - 1].lat + ring[i].lat) / 2, lon: (ring[i - 1].lon + ring[i].lon) / 2)) == nil)
        }
        // A circle straddling the fence is never called inside or outside.
        let straddling = grid.classify(ellipseAt: ring[3], inner: 10.9, outer: 11.1, degreesPerMetre: Geodesy.degreesPerMetre(at: ring[3].lat))
        #expect(straddling != .inside && straddling != .outside)
        // Far away: outside without reading a cell.
        #expect(grid.contains(Coordinate(lat: 0, lon: 0)) == false)
        #expect(grid.classify(ellipseAt: Coordinate(lat: 0.5, lon: 0.5), inner: 49_500, outer: 50_500,
                              degreesPerMetre: Geodesy.degreesPerMetre(at: 0.5)) == .outside)
    }

    /// A point in an edge cell is decided by the even-odd rule over its row's edges exactly as GEOS
    /// decides it, and left undecided only within a hair of an edge: points 0–30 m from every park's
    /// and zone's vertices and edge midpoints, and points a few hair-widths off an edge.
    @Test func edgeCellsAnswerLikeGEOS() throws {
        let context = GEOSContext()
        var generator = SeededGenerator(seed: 21)
        var decided = 0, undecided = 0
        for area in Self.parks.map(\.park.boundary) + Self.parks.flatMap(\.zones).map(\.area) {
            let grid = AreaGrid(area)
            let exact = try context.geometry(area).prepared()
            let ring = area.polygons[0].exterior
            for i in 1..<ring.count {
                let a = ring[i - 1], b = ring[i]
                let middle = Coordinate(lat: (a.lat + b.lat) / 2, lon: (a.lon + b.lon) / 2)
                // Across the edge at its middle, 1 cm to 1 m either side (the margin is about 1 cm).
                let (dx, dy) = (b.lon - a.lon, b.lat - a.lat)
                let length = (dx * dx + dy * dy).squareRoot()
                var probes = [Geodesy.destination(from: b, azimuth: .random(in: 0..<360, using: &generator), distance: .random(in: 0...30, using: &generator))]
                for offset in [-1e-5, -3e-7, 3e-7, 1e-5] where length > 0 {
                    probes.append(Coordinate(lat: middle.lat + offset * dx / length, lon: middle.lon - offset * dy / length))
                }
                for p in probes {
                    guard let answer = grid.contains(p) else { undecided += 1; continue }
                    #expect(answer == (try exact.covers(try context.point(p))), "at \(p)")
                    decided += 1
                }
            }
            // On the boundary itself the rule never answers: exact geometry does.
            for c in ring { #expect(grid.contains(c) == nil) }
        }
        #expect(decided > 20 * undecided, "\(decided) decided, \(undecided) left to GEOS")
    }

    /// Accuracy circles are judged by the cells they meet: well inside, across the fence and away
    /// from it, a circle that fits the grid is decided without exact geometry.
    @Test func gridsJudgeCircles() throws {
        let grid = AreaGrid(Self.parks[0].park.boundary)
        func judge(_ p: Coordinate, _ radius: Double) -> Containment? {
            grid.classify(ellipseAt: p, inner: radius * 0.99, outer: radius * 1.01, degreesPerMetre: Geodesy.degreesPerMetre(at: p.lat))
        }
        #expect(judge(Coordinate(lat: 41.4822, lon: -82.6835), 10) == .inside)
        #expect(judge(Self.vertex, 60) == .uncertain)
        #expect(judge(Self.vertex, 5) == nil)
        #expect(judge(Coordinate(lat: 41.4561, lon: -82.7117), 10) == .outside)
        #expect(judge(Coordinate(lat: 0, lon: 0), 10) == .outside)
    }

    /// Each cell's clearance is its chessboard distance to the nearest cell of another kind, less
    /// one (for an outside cell the world past the grid is outside too; an edge cell has none), as
    /// a search of every cell finds it: the parks at 30 cells a side, and every ride zone.
    @Test func clearancesAreDistancesToAnotherKind() throws {
        let areas = Self.parks.map { AreaGrid($0.park.boundary, side: 30) } + Self.parks.flatMap(\.zones).prefix(8).map { AreaGrid($0.area) }
        var checked = 0, deep = 0
        for grid in areas {
            let columns = grid.frame.columns, rows = grid.frame.rows, clearances = grid.clearances
            #expect(clearances.count == columns * rows)
            for i in 0..<columns * rows {
                let kind = grid.frame.cell(i)
                guard kind != AreaGrid.Cell.edge.rawValue else {
                    #expect(clearances[i] == 0)
                    continue
                }
                let r = i / columns, c = i % columns
                var nearest = Int.max
                for j in 0..<columns * rows where grid.frame.cell(j) != kind {
                    nearest = min(nearest, max(abs(j / columns - r), abs(j % columns - c)))
                }
                if kind == AreaGrid.Cell.inside.rawValue {
                    // Past the grid is not inside.
                    nearest = min(nearest, r + 1, c + 1, rows - r, columns - c)
                }
                #expect(Int(clearances[i]) == min(255, nearest - 1), "cell \(r), \(c)")
                checked += 1
                if clearances[i] >= 3 { deep += 1 }
            }
        }
        #expect(checked > 5_000 && deep > 500, "\(checked) cells, \(deep) with three rings or more")
    }

    /// A circle judged by its centre's clearance is judged as the cell by cell scan judges it, and
    /// most circles well inside or outside are: circles of 1–20 m around random points in and near
    /// the real parks and zones.
    @Test func clearanceJudgesCirclesAsTheScanDoes() throws {
        var generator = SeededGenerator(seed: 57)
        var byClearance = 0, decided = 0
        for area in Self.parks.map(\.park.boundary) + Self.parks.flatMap(\.zones).map(\.area) {
            let grid = AreaGrid(area)
            guard let box = area.boundingBox else { continue }
            let padLat = (box.maxLat - box.minLat) * 0.2, padLon = (box.maxLon - box.minLon) * 0.2
            for _ in 0..<60 {
                let p = Coordinate(lat: .random(in: (box.minLat - padLat)...(box.maxLat + padLat), using: &generator),
                                   lon: .random(in: (box.minLon - padLon)...(box.maxLon + padLon), using: &generator))
                let radius = Double.random(in: 1...20, using: &generator), perMetre = Geodesy.degreesPerMetre(at: p.lat)
                let (c0, c1, r0, r1) = grid.frame.box(ellipseAt: p, outer: radius * 1.01, degreesPerMetre: perMetre)
                let scanned = grid.frame.classify(ellipseAt: p, inner: radius * 0.99, outer: radius * 1.01, degreesPerMetre: perMetre,
                                                  byClearance: false)
                if let answer = grid.frame.clearanceAnswer(p, columns: c0...c1, rows: r0...r1) {
                    #expect(answer == scanned, "at \(p) ± \(radius) m")
                    byClearance += 1
                }
                #expect(grid.frame.classify(ellipseAt: p, inner: radius * 0.99, outer: radius * 1.01, degreesPerMetre: perMetre) == scanned)
                if scanned == .inside || scanned == .outside { decided += 1 }
            }
        }
        #expect(byClearance * 5 > decided, "\(byClearance) of \(decided) inside or outside judged by clearance")
    }

    /// An area whose edges would fill every row many times over (a comb of 2,000 long teeth) keeps
    /// no row lists: its grid answers only from the cells, and the index still answers like exact
    /// geometry near every tooth.
    @Test func aCombKeepsNoRowsAndStillAnswersExactly() throws {
        var ring: [Coordinate] = [Coordinate(lat: 0, lon: 0)]
        let teeth = 2_000, width = 0.02 / Double(teeth)
        for t in 0..<teeth {
            let x = Double(t) * width
            ring += [Coordinate(lat: 0.01, lon: x), Coordinate(lat: 0.01, lon: x + width / 2), Coordinate(lat: 0.0005, lon: x + width / 2),
                     Coordinate(lat: 0.0005, lon: x + width)]
        }
        ring += [Coordinate(lat: 0, lon: 0.02), Coordinate(lat: 0, lon: 0)]
        let comb = Park(id: "comb", name: "Comb", timeZone: "UTC", attribution: nil, boundary: MultiPolygon(polygons: [Polygon(rings: [ring])]))
        #expect(!AreaGrid(comb.boundary).hasRowEdges)
        #expect(AreaGrid(Self.parks[0].park.boundary).hasRowEdges)
        let gridded = try FenceIndex(parks: [comb], zones: [], replicas: 1, centreFirst: true, grids: true)
        let exact = try FenceIndex(parks: [comb], zones: [], replicas: 1, centreFirst: false, grids: false)
        var generator = SeededGenerator(seed: 44)
        for _ in 0..<300 {
            let p = Coordinate(lat: .random(in: 0...0.0105, using: &generator), lon: .random(in: 0...0.02, using: &generator))
            let accuracy = ([0, 0, 1, 3] as [Double]).randomElement(using: &generator)!
            #expect(gridded.locate(p, accuracy: accuracy) == exact.locate(p, accuracy: accuracy), "at \(p) ± \(accuracy) m")
        }
    }

    /// Near a fence, where the cells cannot judge a 10 m circle, the distance to the nearest edge
    /// does: exact geometry is left only the circles whose nearest edge is 9.8–10.3 m away (about a
    /// tenth of them here, with centres 0–25 m from every vertex of the real parks' fences and lands;
    /// half when a circle with no edge in reach was not decided). The 25 m circles drawn around ride
    /// and place points are left out: a 10 m circle beside one is near several of its 33 edges at
    /// once, which says nothing of how real fences are judged.
    @Test func nearestEdgeDecidesMostCirclesNearAFence() throws {
        var generator = SeededGenerator(seed: 33)
        var cellsAlone = 0, byDistance = 0, left = 0
        for area in Self.parks.map(\.park.boundary) + Self.parks.flatMap(\.zones).filter({ $0.kind == .land }).map(\.area) {
            let grid = AreaGrid(area)
            for vertex in area.polygons[0].exterior {
                let p = Geodesy.destination(from: vertex, azimuth: .random(in: 0..<360, using: &generator), distance: .random(in: 0...25, using: &generator))
                let perMetre = Geodesy.degreesPerMetre(at: p.lat)
                if grid.classify(ellipseAt: p, inner: 9.9, outer: 10.1, degreesPerMetre: perMetre) != nil {
                    cellsAlone += 1
                } else if grid.classify(centre: p, crossing: 9.8, clearance: 10.3, degreesPerMetre: perMetre) != nil {
                    byDistance += 1
                } else {
                    left += 1
                }
            }
        }
        #expect(left * 4 < byDistance, "cells \(cellsAlone), distance \(byDistance), left \(left)")
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

    /// A square `size` degrees a side from its south-west corner.
    static func square(_ minLon: Double, _ minLat: Double, _ size: Double) -> MultiPolygon {
        MultiPolygon(polygons: [Polygon(rings: [[
            Coordinate(lat: minLat, lon: minLon), Coordinate(lat: minLat, lon: minLon + size),
            Coordinate(lat: minLat + size, lon: minLon + size), Coordinate(lat: minLat + size, lon: minLon),
            Coordinate(lat: minLat, lon: minLon),
        ]])])
    }

    /// Two parks side by side, a ride in each beside the shared fence: a circle over the fence meets
    /// both parks, and each ride is listed under its own park only.
    @Test func eachZoneIsFiledUnderItsOwnPark() throws {
        let west = Park(id: "west", name: "West", timeZone: "UTC", attribution: nil, boundary: Self.square(-0.01, 0, 0.01))
        let east = Park(id: "east", name: "East", timeZone: "UTC", attribution: nil, boundary: Self.square(0, 0, 0.01))
        let zones = [
            Zone(id: ZoneID(park: "west", slug: "a"), park: "west", kind: .ride, name: "A", ride: nil, area: Self.square(-0.0004, 0.005, 0.0003)),
            Zone(id: ZoneID(park: "east", slug: "b"), park: "east", kind: .ride, name: "B", ride: nil, area: Self.square(0.0001, 0.005, 0.0003)),
        ]
        for grids in [true, false] {
            let index = try FenceIndex(parks: [west, east], zones: zones, replicas: 1, centreFirst: true, grids: grids)
            let hits = index.locate(Coordinate(lat: 0.00515, lon: 0), accuracy: 60)
            #expect(hits.map(\.id) == ["east", "west"])
            #expect(hits.map { $0.zones.map(\.id) } == [[ZoneID(park: "east", slug: "b")], [ZoneID(park: "west", slug: "a")]])
        }
    }

    /// Parks inside before uncertain, then by name; each park's zones after it in the same order,
    /// more of them than a lookup keeps in place; ``FenceIndex/forEach(_:park:zone:)`` in that order.
    @Test func answersComeInsideFirstThenByName() throws {
        let p = Coordinate(lat: 0.005, lon: 0.005)
        // Given out of answer order. 0.0001° is 11 m: a 30 m circle at p is uncertain in "alpha".
        let parks = [
            Park(id: "zed", name: "Zed", timeZone: "UTC", attribution: nil, boundary: Self.square(0, 0, 0.01)),
            Park(id: "alpha", name: "Alpha", timeZone: "UTC", attribution: nil, boundary: Self.square(0.0049, 0, 0.01)),
            Park(id: "far", name: "Far", timeZone: "UTC", attribution: nil, boundary: Self.square(0.5, 0.5, 0.01)),
            Park(id: "mid", name: "Mid", timeZone: "UTC", attribution: nil, boundary: Self.square(-0.01, -0.01, 0.03)),
        ]
        // Zones around p: offset 0.0009 from p's corner puts p well inside, 0.00005 puts an edge 5 m away.
        var zones: [Zone] = []
        let names = ["Kilo", "Bravo", "Yankee", "Echo", "Alpha", "Tango"]
        for (park, count) in [("zed", 6), ("mid", 5), ("alpha", 2)] {
            for n in 0..<count {
                let margin = n % 2 == 0 ? 0.0009 : 0.00005
                zones.append(Zone(id: ZoneID(park: ParkID(rawValue: park), slug: "z\(n)"), park: ParkID(rawValue: park), kind: .ride,
                                  name: names[(n * 5 + park.count) % names.count], ride: nil,
                                  area: Self.square(0.005 - margin, 0.005 - margin, 0.002)))
            }
        }
        func key(_ c: Containment, _ name: String, _ id: String) -> String { "\(c == .inside ? 0 : 1) \(name) \(id)" }
        // All parks, and "zed" alone (one park found: its zones are ordered without the others').
        let expected: [(parks: [Park], ids: [ParkID], zoneCounts: [Int])] = [(parks, ["mid", "zed", "alpha"], [5, 6, 2]), ([parks[0]], ["zed"], [6])]
        for (grids, expected) in [true, false].flatMap({ g in expected.map { (g, $0) } }) {
            let index = try FenceIndex(parks: expected.parks, zones: zones, replicas: 1, centreFirst: true, grids: grids)
            let hits = index.locate(p, accuracy: 30)
            #expect(hits.map(\.id) == expected.ids)
            #expect(hits.map(\.containment) == [.inside, .inside, .uncertain].prefix(expected.ids.count).map { $0 })
            #expect(hits.map(\.zones.count) == expected.zoneCounts)
            for hit in hits {
                #expect(hit.zones.allSatisfy { index.zone($0.id)?.park == hit.id })
                let keys = hit.zones.map { key($0.containment, $0.name, $0.id.rawValue) }
                #expect(keys == keys.sorted(), "\(hit.id): \(keys)")
                #expect(Set(hit.zones.map(\.containment)) == [.inside, .uncertain], "\(hit.id)")
            }
            var walked: [String] = []
            index.forEach(index.matches(p, accuracy: 30)) { park, c in
                walked.append("\(park.rawValue) \(c)")
            } zone: { park, zone, kind, _, c in
                walked.append("\(park.rawValue) \(zone.rawValue) \(kind) \(c)")
            }
            #expect(walked == hits.flatMap { hit in
                ["\(hit.id.rawValue) \(hit.containment)"] + hit.zones.map { "\(hit.id.rawValue) \($0.id.rawValue) \($0.kind) \($0.containment)" }
            })
        }
    }

    /// A lookup's answer names areas by their places in the index that made it: another index
    /// (the one swapped in after an import) refuses to read it rather than misname or overrun.
    @Test func matchesFromAnotherIndexAreRefused() async {
        await #expect(processExitsWith: .failure) {
            let park = Park(id: "p", name: "P", timeZone: "UTC", attribution: nil, boundary: FenceIndexTests.square(0, 0, 0.01))
            let made = try! FenceIndex(parks: [park], zones: [], replicas: 1)
            let other = try! FenceIndex(parks: [park], zones: [], replicas: 1)
            _ = other.hits(made.matches(Coordinate(lat: 0.005, lon: 0.005)))
        }
        let index = Self.index
        #expect(index.hits(index.matches(Coordinate(lat: 41.4822, lon: -82.6835))).map(\.id) == ["cedar-point"])
    }

    /// A lookup's verdicts, past the eight it keeps in place: removing, appending again, sorting.
    @Test func verdictsKeepOrderPastTheInlinePart() {
        var verdicts = Verdicts()
        for area in 0..<12 { verdicts.append(Verdict(area: area, containment: area % 3 == 0 ? .outside : .inside)) }
        verdicts.removeAll { $0.containment == .outside }
        #expect(verdicts.indices.map { verdicts[$0].area } == [1, 2, 4, 5, 7, 8, 10, 11])
        verdicts.append(Verdict(area: 20, containment: nil))
        verdicts.append(Verdict(area: 3, containment: .uncertain))
        #expect(verdicts.indices.map { verdicts[$0].area } == [1, 2, 4, 5, 7, 8, 10, 11, 20, 3])
        verdicts.sort { $0.area > $1.area }
        #expect(verdicts.indices.map { verdicts[$0].area } == [20, 11, 10, 8, 7, 5, 4, 3, 2, 1])
        #expect(verdicts.contains { $0.containment == nil })
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
