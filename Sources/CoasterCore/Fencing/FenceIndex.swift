import Foundation
import Synchronization

/// Where a position, blurred by its accuracy circle, stands relative to an area.
///
/// The rule (docs: Geofences, "Inside, uncertain, outside"): with accuracy *r* metres, the fix may be anywhere
/// in the circle of radius *r* around it. **inside**: the whole circle lies in the area (for
/// *r* = 0, the point is in the area or on its boundary). **outside**: the circle does not touch
/// the area. **uncertain**: anything else — the circle crosses the boundary.
public enum Containment: String, Sendable, Codable, Hashable {
    case inside, uncertain, outside
}

/// A zone that a located position is in or may be in.
public struct ZoneHit: Hashable, Sendable {
    public var id: ZoneID
    public var kind: ZoneKind
    public var name: String
    public var ride: RideID?
    public var containment: Containment
}

/// A park that a located position is in or may be in, with its zones.
public struct ParkHit: Hashable, Sendable {
    public var id: ParkID
    public var name: String
    public var containment: Containment
    public var zones: [ZoneHit]
}

/// The in-memory geofence index: parks and zones as prepared GEOS geometries, found through a
/// bounding-box tree of the parks and, within each park, a grid of its zones' boxes. Built from the
/// store at start and rebuilt (then swapped) after each import; the store is the source of truth.
///
/// Immutable once built, so it is shared freely. GEOS objects are not thread-safe, so the index keeps
/// one replica of its prepared geometries per core, each behind its own lock; a lookup takes
/// whichever replica is free.
public final class FenceIndex: Sendable {
    /// Accuracy radii above this (metres) are treated as this: a circle wider than a park says nothing.
    public static let maximumAccuracy = 5_000.0

    private struct ParkEntry: Sendable {
        var id: ParkID
        var name: String
        var box: BoundingBox
    }

    private struct ZoneEntry: Sendable {
        var id: ZoneID
        var park: Int
        var kind: ZoneKind
        var name: String
        var ride: RideID?
        var box: BoundingBox
    }

    /// One copy of every prepared geometry, in one GEOS context. Never leaves its Mutex.
    private final class Replica {
        let context: GEOSContext
        let parks: [GEOSPreparedGeometry]
        let zones: [GEOSPreparedGeometry]
        /// The same areas' boundaries, to measure how far a point is from crossing one.
        let parkEdges: [GEOSPreparedGeometry]
        let zoneEdges: [GEOSPreparedGeometry]

        init(context: GEOSContext, parks: [GEOSPreparedGeometry], zones: [GEOSPreparedGeometry], parkEdges: [GEOSPreparedGeometry],
             zoneEdges: [GEOSPreparedGeometry]) {
            self.context = context
            self.parks = parks
            self.zones = zones
            self.parkEdges = parkEdges
            self.zoneEdges = zoneEdges
        }
    }

    private let parkEntries: [ParkEntry]
    private let zoneEntries: [ZoneEntry]
    /// Each zone's park (`zoneEntries[i].park`), apart: reading it from the entry copies the entry.
    private let zoneParks: [Int]
    /// Each zone's kind, apart: a byte a zone stays in cache between nearby answers, where the
    /// entries (96 bytes a zone) had to come from memory for each friend's zones.
    private let zoneKinds: [ZoneKind]
    private let parkByID: [ParkID: Int]
    /// Zone ids → positions in `zoneEntries` (the first of an id given twice).
    private let zoneByID: IDTable
    private let parkTree: BoxTree
    /// Each park's zones by the cells of a grid over the park (``BoxCells``).
    private let zoneCells: BoxCells
    /// The same areas rasterised (`parkGrids[i]` is `parkEntries[i]`'s): most lookups end here.
    private let parkGrids: [AreaGrid]
    private let zoneGrids: [AreaGrid]
    /// The same grids, unretained: a lookup reads a grid through these (``judge``) without taking a
    /// reference on it, which would be an atomic operation per candidate. The arrays above own them.
    private let parkGridRefs: [Unmanaged<AreaGrid>]
    private let zoneGridRefs: [Unmanaged<AreaGrid>]
    /// Each grid's ``AreaGrid/Frame``, side by side: what most lookups read of a grid before its
    /// cells, without loading the grid itself. Valid while the arrays above hold the grids.
    private let parkFrames: [AreaGrid.Frame]
    private let zoneFrames: [AreaGrid.Frame]
    /// Holds one replica's lock; a class because `Mutex` cannot be copied into an array.
    private final class Slot: Sendable {
        let replica: Mutex<Replica>

        init(parks: [MultiPolygon], zones: [MultiPolygon]) throws(GEOSError) {
            let context = GEOSContext()
            var preparedParks: [GEOSPreparedGeometry] = [], parkEdges: [GEOSPreparedGeometry] = []
            for area in parks {
                let geometry = try context.geometry(area)
                preparedParks.append(try geometry.prepared())
                parkEdges.append(try geometry.boundary().prepared())
            }
            var preparedZones: [GEOSPreparedGeometry] = [], zoneEdges: [GEOSPreparedGeometry] = []
            for area in zones {
                let geometry = try context.geometry(area)
                preparedZones.append(try geometry.prepared())
                zoneEdges.append(try geometry.boundary().prepared())
            }
            self.replica = Mutex(Replica(context: context, parks: preparedParks, zones: preparedZones, parkEdges: parkEdges, zoneEdges: zoneEdges))
        }
    }

    private let replicas: [Slot]
    private let nextReplica = Atomic<Int>(0)
    /// Tells this index from every other made in this process, 1 and up: its ``FenceMatches`` from
    /// another's, and a ``ZoneMark`` made with it from one made with another (an index is swapped
    /// after each import).
    public let generation: Int
    private static let generations = Atomic<Int>(0)
    public let vertexCount: Int
    /// Whether to test the centre first and the accuracy circle only near a boundary (the answer
    /// is the same either way; off only to check that in tests).
    let centreFirst: Bool
    /// Whether to answer from the grids when they know (again the same answer; off only in tests).
    let useGrids: Bool

    /// An index with no parks.
    public static let empty: FenceIndex = try! FenceIndex(parks: [], zones: [], replicas: 1)

    /// Builds the index. Zones whose park is not among `parks` are ignored.
    /// - Parameters:
    ///   - replicas: copies of the prepared geometries; by default one per active core.
    public convenience init(parks: [Park], zones: [Zone], replicas: Int = ProcessInfo.processInfo.activeProcessorCount) throws(GEOSError) {
        try self.init(parks: parks, zones: zones, replicas: replicas, centreFirst: true, grids: true)
    }

    init(parks: [Park], zones: [Zone], replicas: Int, centreFirst: Bool, grids: Bool) throws(GEOSError) {
        self.centreFirst = centreFirst
        self.generation = Self.generations.add(1, ordering: .relaxed).newValue
        self.useGrids = grids
        var parkIndex: [ParkID: Int] = [:]
        var parkEntries: [ParkEntry] = []
        var parkAreas: [MultiPolygon] = []
        for park in parks {
            guard let box = park.boundary.boundingBox, parkIndex[park.id] == nil else { continue }
            parkIndex[park.id] = parkEntries.count
            parkEntries.append(ParkEntry(id: park.id, name: park.name, box: box))
            parkAreas.append(park.boundary)
        }
        var zoneEntries: [ZoneEntry] = []
        var zoneAreas: [MultiPolygon] = []
        for zone in zones {
            guard let p = parkIndex[zone.park], let box = zone.area.boundingBox else { continue }
            zoneEntries.append(ZoneEntry(id: zone.id, park: p, kind: zone.kind, name: zone.name, ride: zone.ride, box: box))
            zoneAreas.append(zone.area)
        }
        self.parkEntries = parkEntries
        self.zoneEntries = zoneEntries
        self.zoneParks = zoneEntries.map(\.park)
        self.zoneKinds = zoneEntries.map(\.kind)
        self.parkByID = parkIndex
        self.zoneByID = IDTable(zoneEntries.map(\.id.rawValue))
        self.parkTree = BoxTree(parkEntries.map(\.box))
        var zonesOfPark = [[Int]](repeating: [], count: parkEntries.count)
        for (z, zone) in zoneEntries.enumerated() { zonesOfPark[zone.park].append(z) }
        self.zoneCells = BoxCells(boxes: zoneEntries.map(\.box), groups: zonesOfPark)
        self.parkGrids = grids ? parkAreas.map { AreaGrid($0) } : []
        self.zoneGrids = grids ? zoneAreas.map { AreaGrid($0) } : []
        self.parkGridRefs = self.parkGrids.map { Unmanaged.passUnretained($0) }
        self.zoneGridRefs = self.zoneGrids.map { Unmanaged.passUnretained($0) }
        self.parkFrames = self.parkGrids.map(\.frame)
        self.zoneFrames = self.zoneGrids.map(\.frame)
        self.vertexCount = parkAreas.reduce(0) { $0 + $1.vertexCount } + zoneAreas.reduce(0) { $0 + $1.vertexCount }
        var built: [Slot] = []
        for _ in 0..<max(1, replicas) {
            built.append(try Slot(parks: parkAreas, zones: zoneAreas))
        }
        self.replicas = built
    }

    public var parkCount: Int { self.parkEntries.count }

    /// What the index knows of one zone, or `nil` if it has no such zone.
    public func zone(_ id: ZoneID) -> (park: ParkID, kind: ZoneKind, name: String, ride: RideID?)? {
        guard let entry = self.zonePosition(id).map({ self.zoneEntries[$0] }) else { return nil }
        return (self.parkEntries[entry.park].id, entry.kind, entry.name, entry.ride)
    }

    /// The zone's position in ``zoneIDs``, or `nil` if the index has no such zone: for tables of
    /// what answers say of each zone, read without hashing its id again.
    public func zonePosition(_ id: ZoneID) -> Int? {
        self.zoneByID.position(of: id.rawValue)
    }

    /// The zone at `position` in ``zoneIDs``.
    public func zone(at position: Int) -> (id: ZoneID, kind: ZoneKind, name: String, ride: RideID?) {
        let entry = self.zoneEntries[position]
        return (entry.id, entry.kind, entry.name, entry.ride)
    }

    /// The park at `position` in ``parkIDs``.
    public func park(at position: Int) -> (id: ParkID, name: String) {
        (self.parkEntries[position].id, self.parkEntries[position].name)
    }

    /// The id of the zone at `position` in ``zoneIDs``.
    public func zoneID(at position: Int) -> ZoneID {
        self.zoneEntries[position].id
    }

    /// The position (``zonePosition(_:)``) of the most specific of `zones` this index knows, the
    /// one an answer names a person's place by: a ride, then a queue, then a point of interest,
    /// then a land, the smallest id among equals; `nil` if it knows none of them.
    public func mostSpecificZone(among zones: Set<ZoneID>) -> Int? {
        func rank(_ kind: ZoneKind) -> Int {
            switch kind {
            case .ride: 0
            case .queue: 1
            case .poi: 2
            case .land: 3
            }
        }
        var best: (rank: Int, id: ZoneID, position: Int)?
        for id in zones {
            guard let position = self.zonePosition(id) else { continue }
            let r = rank(self.zoneKinds[position])
            if let b = best, (b.rank, b.id) <= (r, id) { continue }
            best = (r, id, position)
        }
        return best?.position
    }

    /// What the index knows of one park, or `nil`.
    public func park(_ id: ParkID) -> (name: String, bounds: BoundingBox)? {
        guard let i = self.parkByID[id] else { return nil }
        return (self.parkEntries[i].name, self.parkEntries[i].box)
    }

    /// The ids of the zones of one park.
    public func zoneIDs(of park: ParkID) -> [ZoneID] {
        self.zoneEntries.filter { self.parkEntries[$0.park].id == park }.map(\.id)
    }
    public var zoneCount: Int { self.zoneEntries.count }
    /// Every park's id, in the order they were given.
    public var parkIDs: [ParkID] { self.parkEntries.map(\.id) }
    /// Every zone's id, in the order they were given.
    public var zoneIDs: [ZoneID] { self.zoneEntries.map(\.id) }

    /// The parks (and their zones) that the accuracy circle of `position` lies in or crosses,
    /// inside before uncertain, then by name, each park with its zones in the same order.
    ///
    /// - Parameters:
    ///   - position: SRID 4326; must be valid.
    ///   - accuracy: radius in metres (0 = an exact point); capped at ``maximumAccuracy``.
    public func locate(_ position: Coordinate, accuracy: Double = 0) -> [ParkHit] {
        self.hits(self.matches(position, accuracy: accuracy))
    }

    /// The answer of ``locate(_:accuracy:)`` with the areas named by their places in the index:
    /// nothing allocated for up to eight parks and eight zones, no name or id copied. Read it with
    /// ``forEach(_:park:zone:)``, or name it with ``hits(_:)``.
    public func matches(_ position: Coordinate, accuracy: Double = 0) -> FenceMatches {
        // Filled in place through `inout`: built in a local that the search's closures capture,
        // the answer was then copied out as a block (7 % of a point lookup's samples).
        var found = FenceMatches(generation: self.generation)
        self.find(position, accuracy: accuracy, into: &found)
        return found
    }

    private func find(_ position: Coordinate, accuracy: Double, into found: inout FenceMatches) {
        let radius = accuracy.isFinite ? min(max(accuracy, 0), Self.maximumAccuracy) : Self.maximumAccuracy
        let query = radius > 0
            ? Geodesy.boundingBox(center: position, radius: radius)
            : BoundingBox(minLon: position.lon, minLat: position.lat, maxLon: position.lon, maxLat: position.lat)
        // A circle that crosses ±180° cannot be tested as one polygon; it can only touch.
        let crossesAntimeridian = query.minLon < -180 || query.maxLon > 180
        let useGrids = self.useGrids && !crossesAntimeridian
        // A grid's answer, or `nil` when it cannot decide (a point within a hair of an edge, a circle
        // whose nearest edge is about as far as its radius).
        // The exact test uses the accuracy circle's circumscribed 32-gon (``Geodesy/circumscribedCircle``),
        // whose vertices lie on an ellipse in degrees of radius `radius / cos(π/32)` and whose sides
        // touch the one of radius `radius`; the grid judges the ellipses 1 % beyond and within those,
        // so it never claims more than that test would.
        let degreesPerMetre = radius > 0 ? Geodesy.degreesPerMetre(at: position.lat) : (lat: 0, lon: 0)
        let outer = radius * 1.01, inner = radius * 0.99
        // For circles the cells cannot judge, metres from the centre to the nearest edge: within 98 %
        // of the radius an edge lies inside the circumscribed polygon, which then crosses the fence;
        // past the centre-first reach (see `decideExactly`) the polygon cannot touch an edge.
        let crossing = radius * 0.98
        let clearance = self.centreFirst ? Self.centreFirstReach(radius) : 0
        // The grids are read unretained, through buffer pointers: a reference taken on each
        // candidate's grid was an atomic count up and down, a sixth of a lookup with accuracy.
        // The cells are read through the frames; the grid itself only past them (a circle the
        // cells cannot judge, a point in an edge cell).
        func judge(_ area: Int, of frames: UnsafeBufferPointer<AreaGrid.Frame>, _ grids: UnsafeBufferPointer<Unmanaged<AreaGrid>>) -> Containment? {
            // No grids at all when the index was built without them.
            guard useGrids else { return nil }
            if radius > 0 {
                if let c = frames[area].classify(ellipseAt: position, inner: inner, outer: outer, degreesPerMetre: degreesPerMetre) {
                    return c
                }
                return grids[area]._withUnsafeGuaranteedRef { grid in
                    grid.classify(centre: position, crossing: crossing, clearance: clearance, degreesPerMetre: degreesPerMetre)
                }
            }
            return frames[area].contains(position) { row in
                grids[area]._withUnsafeGuaranteedRef { grid in grid.containsNearEdges(position, row: row) }
            }.map { $0 ? .inside : .outside }
        }
        // Each candidate is decided by its grid where it can be, and only the rest by exact geometry:
        // a position beside one ride's edge does not send the park and every other ride to GEOS.
        self.parkFrames.withUnsafeBufferPointer { parkFrames in
            self.parkGridRefs.withUnsafeBufferPointer { parkGrids in
                self.parkTree.search(query) { p in
                    let c = judge(p, of: parkFrames, parkGrids)
                    if c != .outside { found.parks.append(Verdict(area: p, containment: c)) }
                }
            }
        }
        guard found.parks.count > 0 else { return }
        // Only the zones of the candidate parks, found in the cells of each park's grid.
        self.zoneFrames.withUnsafeBufferPointer { zoneFrames in
            self.zoneGridRefs.withUnsafeBufferPointer { zoneGrids in
                for i in found.parks.indices {
                    self.zoneCells.forEach(inGroup: found.parks[i].area, meeting: query) { z in
                        let c = judge(z, of: zoneFrames, zoneGrids)
                        if c != .outside { found.zones.append(Verdict(area: z, containment: c)) }
                    }
                }
            }
        }
        if found.parks.contains(where: { $0.containment == nil }) || found.zones.contains(where: { $0.containment == nil }) {
            guard self.decideExactly(parks: &found.parks, zones: &found.zones, position: position, radius: radius,
                                     crossesAntimeridian: crossesAntimeridian)
            else {
                found = FenceMatches(generation: self.generation)
                return
            }
        }
        self.settle(&found)
    }

    /// Each park of `matches` in answer order, each followed by its zones in answer order.
    public func forEach(_ matches: FenceMatches, park: (ParkID, Containment) -> Void,
                        zone: (_ park: ParkID, _ zone: ZoneID, _ kind: ZoneKind, _ ride: RideID?, Containment) -> Void) {
        self.walk(matches) { p, c in
            park(self.parkEntries[p].id, c)
        } zone: { p, z, c in
            zone(self.parkEntries[p].id, self.zoneEntries[z].id, self.zoneEntries[z].kind, self.zoneEntries[z].ride, c)
        }
    }

    /// Each park of `matches` in answer order, each followed by its zones in answer order, by
    /// their positions in ``parkIDs`` and ``zoneIDs``: for tables of what answers say of each
    /// place, read without a name or id copied.
    public func forEachPlace(_ matches: FenceMatches, park: (Int, Containment) -> Void, zone: (Int, Containment) -> Void) {
        self.walk(matches, park: park) { _, z, c in zone(z, c) }
    }

    /// `matches` with names: what ``locate(_:accuracy:)`` answers.
    public func hits(_ matches: FenceMatches) -> [ParkHit] {
        var hits: [ParkHit] = []
        hits.reserveCapacity(matches.parks.count)
        self.walk(matches) { p, c in
            let entry = self.parkEntries[p]
            hits.append(ParkHit(id: entry.id, name: entry.name, containment: c, zones: []))
        } zone: { _, z, c in
            let entry = self.zoneEntries[z]
            hits[hits.count - 1].zones.append(ZoneHit(id: entry.id, kind: entry.kind, name: entry.name, ride: entry.ride, containment: c))
        }
        return hits
    }

    /// `matches` by places in the index: each park, then the zones filed after it (they are
    /// grouped by park in the parks' order).
    private func walk(_ matches: FenceMatches, park: (Int, Containment) -> Void, zone: (_ park: Int, _ zone: Int, Containment) -> Void) {
        precondition(matches.generation == self.generation, "FenceMatches read by an index that did not make them")
        var z = 0
        for i in matches.parks.indices {
            let p = matches.parks[i].area
            park(p, matches.parks[i].containment!)
            while z < matches.zones.count, self.zoneParks[matches.zones[z].area] == p {
                zone(p, matches.zones[z].area, matches.zones[z].containment!)
                z += 1
            }
        }
    }

    /// Drops what exact geometry found outside (and the zones of parks it dropped), then puts
    /// the rest in answer order.
    private func settle(_ found: inout FenceMatches) {
        found.parks.removeAll { $0.containment == nil || $0.containment == .outside }
        if found.parks.count > 1 { found.parks.sort(by: self.parkPrecedes) }
        let parks = found.parks
        func rank(_ park: Int) -> Int? { parks.firstIndex { $0.area == park } }
        found.zones.removeAll { $0.containment == nil || $0.containment == .outside || rank(self.zoneParks[$0.area]) == nil }
        if found.zones.count > 1 { found.zones.sort { self.zonePrecedes($0, $1) { rank($0)! } } }
    }

    /// Answer order among parks: inside first, then by name, then by id.
    private func parkPrecedes(_ a: Verdict, _ b: Verdict) -> Bool {
        Self.precedes(a.containment, self.parkEntries[a.area].name, self.parkEntries[a.area].id.rawValue,
                      b.containment, self.parkEntries[b.area].name, self.parkEntries[b.area].id.rawValue)
    }

    /// Answer order among zones: by their parks' answer order (`parkRank`), then as for parks.
    private func zonePrecedes(_ a: Verdict, _ b: Verdict, parkRank: (Int) -> Int) -> Bool {
        let aPark = parkRank(self.zoneParks[a.area]), bPark = parkRank(self.zoneParks[b.area])
        if aPark != bPark { return aPark < bPark }
        return Self.precedes(a.containment, self.zoneEntries[a.area].name, self.zoneEntries[a.area].id.rawValue,
                             b.containment, self.zoneEntries[b.area].name, self.zoneEntries[b.area].id.rawValue)
    }

    private static func precedes(_ a: Containment?, _ aName: String, _ aID: String, _ b: Containment?, _ bName: String, _ bID: String) -> Bool {
        let aRank = a == .inside ? 0 : 1, bRank = b == .inside ? 0 : 1
        if aRank != bRank { return aRank < bRank }
        if aName != bName { return aName < bName }
        return aID < bID
    }

    /// Decides the undecided verdicts with exact geometry: parks first, then the zones of parks that
    /// are not outside. `false` if GEOS raised on geometry it accepted at import (then the lookup
    /// answers no match rather than fail a request).
    private func decideExactly(parks: inout Verdicts, zones: inout Verdicts, position: Coordinate, radius: Double,
                               crossesAntimeridian: Bool) -> Bool {
        let ring = radius > 0 ? Geodesy.circumscribedCircle(center: position, radius: radius) : []
        // Degrees to metres, conservatively: a planar distance d in degrees is at least d / max(dLat, dLon) metres.
        let (dLat, dLon) = Geodesy.degreesPerMetre(at: position.lat)
        let degreesPerMetre = max(dLat, dLon)
        let reach = Self.centreFirstReach(radius)
        return self.withReplica { replica -> Bool in
            do {
                let point = try replica.context.point(position)
                var circle: GEOSGeometry?
                func test(_ prepared: GEOSPreparedGeometry, _ edges: GEOSPreparedGeometry) throws -> Containment {
                    if ring.isEmpty { return try prepared.covers(point) ? .inside : .outside }
                    // The centre decides when the circle is far from every edge: one point test and one
                    // indexed distance instead of two polygon predicates.
                    if self.centreFirst, !crossesAntimeridian, try edges.distance(to: point) / degreesPerMetre > reach {
                        return try prepared.covers(point) ? .inside : .outside
                    }
                    if circle == nil { circle = try replica.context.geometry(Polygon(rings: [ring])) }
                    let probe = circle!
                    guard try prepared.intersects(probe) else {
                        return try crossesAntimeridian && prepared.covers(point) ? .uncertain : .outside
                    }
                    return try !crossesAntimeridian && prepared.covers(probe) ? .inside : .uncertain
                }
                for i in parks.indices where parks[i].containment == nil {
                    parks[i].containment = try test(replica.parks[parks[i].area], replica.parkEdges[parks[i].area])
                }
                for i in zones.indices where zones[i].containment == nil {
                    let park = self.zoneParks[zones[i].area]
                    guard parks.contains(where: { $0.area == park && $0.containment != .outside }) else { continue }
                    zones[i].containment = try test(replica.zones[zones[i].area], replica.zoneEdges[zones[i].area])
                }
                return true
            } catch {
                return false
            }
        }
    }

    /// The circle is tested as a circumscribed 32-gon; farther than this (metres) from its centre,
    /// with 2 % to spare, it cannot touch a boundary.
    private static func centreFirstReach(_ radius: Double) -> Double { radius / cos(Double.pi / 32) * 1.02 }

    /// Runs `body` with a free replica, or waits for the one a round-robin counter names.
    private func withReplica<R: Sendable>(_ body: (Replica) -> R) -> R {
        let start = self.nextReplica.add(1, ordering: .relaxed).oldValue
        let n = self.replicas.count
        for offset in 0..<n {
            let slot = (start &+ offset) % n
            let attempt: R?? = self.replicas[slot < 0 ? slot + n : slot].replica.withLockIfAvailable { replica in body(replica) }
            if let result = attempt ?? nil { return result }
        }
        let slot = start % n
        return self.replicas[slot < 0 ? slot + n : slot].replica.withLock { replica in body(replica) }
    }
}

/// A candidate park or zone (its index) and what is known of it so far: `nil` until decided.
struct Verdict: Sendable {
    /// 32 bits, so that a verdict takes 8 bytes: a lookup's verdicts are copied as a block.
    private var place: Int32
    var containment: Containment?

    var area: Int { Int(self.place) }

    init(area: Int, containment: Containment?) {
        self.place = Int32(area)
        self.containment = containment
    }
}

/// One lookup's candidates: the first few in place, the rest (a wide accuracy circle) in an
/// array. A point meets one or two parks and a few zones; lists of them on the heap were an
/// allocation and a free each, a third of a point lookup.
struct Verdicts: Sendable {
    private static let inPlace = 8
    private var first = InlineArray<8, Verdict>(repeating: Verdict(area: 0, containment: nil))
    private var more: [Verdict] = []
    private(set) var count = 0

    var indices: Range<Int> { 0..<self.count }

    subscript(i: Int) -> Verdict {
        get { i < Self.inPlace ? self.first[i] : self.more[i - Self.inPlace] }
        set {
            if i < Self.inPlace { self.first[i] = newValue } else { self.more[i - Self.inPlace] = newValue }
        }
    }

    mutating func append(_ verdict: Verdict) {
        if self.count < Self.inPlace { self.first[self.count] = verdict } else { self.more.append(verdict) }
        self.count += 1
    }

    /// Keeps the verdicts that do not match, in order.
    mutating func removeAll(where matches: (Verdict) -> Bool) {
        var kept = 0
        for i in self.indices where !matches(self[i]) {
            if kept != i { self[kept] = self[i] }
            kept += 1
        }
        if self.count > Self.inPlace { self.more.removeLast(self.count - max(kept, Self.inPlace)) }
        self.count = kept
    }

    /// Insertion sort: lookups find a few parks and zones, seldom out of order.
    mutating func sort(by precedes: (Verdict, Verdict) -> Bool) {
        for i in 1..<max(1, self.count) {
            let v = self[i]
            var j = i
            while j > 0, precedes(v, self[j - 1]) {
                self[j] = self[j - 1]
                j -= 1
            }
            self[j] = v
        }
    }

    func firstIndex(where matches: (Verdict) -> Bool) -> Int? {
        for i in self.indices where matches(self[i]) { return i }
        return nil
    }

    func contains(where matches: (Verdict) -> Bool) -> Bool { self.firstIndex(where: matches) != nil }
}

/// What ``FenceIndex/matches(_:accuracy:)`` found: the parks the circle is in or may be in and
/// their zones, as places in the index that made it, in answer order (inside first, then by name;
/// each park's zones after it). Meaningful only to that index.
public struct FenceMatches: Sendable {
    /// Parks, none outside (while the lookup runs: its candidates).
    var parks = Verdicts()
    /// Zones of those parks, none outside, grouped by park in the parks' order (while the lookup
    /// runs: its candidates).
    var zones = Verdicts()
    /// The index that made them (``FenceIndex/generation``): places mean nothing to another.
    let generation: Int

    init(generation: Int) { self.generation = generation }

    /// Parks found.
    public var parkCount: Int { self.parks.count }
    /// Zones found, over all parks.
    public var zoneCount: Int { self.zones.count }
    public var isEmpty: Bool { self.parks.count == 0 }
}
