import Foundation
import Synchronization

/// Where a position, blurred by its accuracy circle, stands relative to an area.
///
/// The rule (README "Inside, uncertain, outside"): with accuracy *r* metres, the fix may be anywhere
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

/// The in-memory geofence index: parks and zones as prepared GEOS geometries behind bounding-box
/// trees. Built from the store at start and rebuilt (then swapped) after each import; the store is
/// the source of truth.
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
    private let parkByID: [ParkID: Int]
    private let zoneByID: [ZoneID: Int]
    private let parkTree: BoxTree
    private let zoneTree: BoxTree
    /// The same areas rasterised (`parkGrids[i]` is `parkEntries[i]`'s): most lookups end here.
    private let parkGrids: [AreaGrid]
    private let zoneGrids: [AreaGrid]
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
        self.parkByID = parkIndex
        self.zoneByID = Dictionary(zoneEntries.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { a, _ in a })
        self.parkTree = BoxTree(parkEntries.map(\.box))
        self.zoneTree = BoxTree(zoneEntries.map(\.box))
        self.parkGrids = grids ? parkAreas.map { AreaGrid($0) } : []
        self.zoneGrids = grids ? zoneAreas.map { AreaGrid($0) } : []
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
        guard let entry = self.zoneByID[id].map({ self.zoneEntries[$0] }) else { return nil }
        return (self.parkEntries[entry.park].id, entry.kind, entry.name, entry.ride)
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

    /// The parks (and their zones) that the accuracy circle of `position` lies in or crosses,
    /// inside before uncertain, then by name.
    ///
    /// - Parameters:
    ///   - position: SRID 4326; must be valid.
    ///   - accuracy: radius in metres (0 = an exact point); capped at ``maximumAccuracy``.
    public func locate(_ position: Coordinate, accuracy: Double = 0) -> [ParkHit] {
        let radius = accuracy.isFinite ? min(max(accuracy, 0), Self.maximumAccuracy) : Self.maximumAccuracy
        let query = radius > 0
            ? Geodesy.boundingBox(center: position, radius: radius)
            : BoundingBox(minLon: position.lon, minLat: position.lat, maxLon: position.lon, maxLat: position.lat)
        // A circle that crosses ±180° cannot be tested as one polygon; it can only touch.
        let crossesAntimeridian = query.minLon < -180 || query.maxLon > 180
        if self.useGrids, !crossesAntimeridian, let hits = self.locateOnGrids(position, radius: radius, box: query) {
            return hits
        }
        let parkCandidates = self.parkTree.search(query)
        guard !parkCandidates.isEmpty else { return [] }
        let zoneCandidates = self.zoneTree.search(query)
        let ring = radius > 0 ? Geodesy.circumscribedCircle(center: position, radius: radius) : []

        // Degrees to metres, conservatively: a planar distance d in degrees is at least d / max(dLat, dLon) metres.
        let (dLat, dLon) = Geodesy.degreesPerMetre(at: position.lat)
        let degreesPerMetre = max(dLat, dLon)
        // The circle is tested as a circumscribed 32-gon; past this reach (metres) it cannot touch a boundary.
        let reach = radius / cos(Double.pi / 32) * 1.02

        return self.withReplica { replica -> [ParkHit] in
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
                var hits: [Int: ParkHit] = [:]
                for p in parkCandidates {
                    let c = try test(replica.parks[p], replica.parkEdges[p])
                    guard c != .outside else { continue }
                    let entry = self.parkEntries[p]
                    hits[p] = ParkHit(id: entry.id, name: entry.name, containment: c, zones: [])
                }
                for z in zoneCandidates {
                    let entry = self.zoneEntries[z]
                    guard hits[entry.park] != nil else { continue }
                    let c = try test(replica.zones[z], replica.zoneEdges[z])
                    guard c != .outside else { continue }
                    hits[entry.park]!.zones.append(
                        ZoneHit(id: entry.id, kind: entry.kind, name: entry.name, ride: entry.ride, containment: c))
                }
                return hits.values.map { hit in
                    var hit = hit
                    hit.zones.sort(by: Self.order)
                    return hit
                }.sorted(by: Self.order)
            } catch {
                // GEOS raised on geometry it accepted at import: treat as no match rather than fail a request.
                return []
            }
        }
    }

    /// The grids' answer, or `nil` when a candidate area's grid cannot decide (the position is in
    /// or near an edge cell): then exact geometry must. A circle is judged by `box`, the lookup's
    /// query box, which holds the circumscribed polygon the exact test uses
    /// (``Geodesy/boundingBox(center:radius:)``), so the grids never claim more than it would.
    private func locateOnGrids(_ position: Coordinate, radius: Double, box: BoundingBox) -> [ParkHit]? {
        func judge(_ grid: AreaGrid) -> Containment? {
            if radius > 0 { return grid.classify(box) }
            return grid.contains(position).map { $0 ? .inside : .outside }
        }
        var hits: [ParkHit] = []
        var parkOfHit: [Int] = []
        var undecided = false
        self.parkTree.search(box) { p in
            guard !undecided else { return }
            switch judge(self.parkGrids[p]) {
            case nil: undecided = true
            case .outside?: break
            case let c?:
                let entry = self.parkEntries[p]
                hits.append(ParkHit(id: entry.id, name: entry.name, containment: c, zones: []))
                parkOfHit.append(p)
            }
        }
        guard !undecided else { return nil }
        guard !hits.isEmpty else { return [] }
        self.zoneTree.search(box) { z in
            guard !undecided else { return }
            let entry = self.zoneEntries[z]
            guard let h = parkOfHit.firstIndex(of: entry.park) else { return }
            switch judge(self.zoneGrids[z]) {
            case nil: undecided = true
            case .outside?: break
            case let c?: hits[h].zones.append(ZoneHit(id: entry.id, kind: entry.kind, name: entry.name, ride: entry.ride, containment: c))
            }
        }
        guard !undecided else { return nil }
        if hits.count > 1 { hits.sort(by: Self.order) }
        for i in hits.indices where hits[i].zones.count > 1 { hits[i].zones.sort(by: Self.order) }
        return hits
    }

    private static func order(_ a: ParkHit, _ b: ParkHit) -> Bool {
        (a.containment == .inside ? 0 : 1, a.name, a.id.rawValue) < (b.containment == .inside ? 0 : 1, b.name, b.id.rawValue)
    }

    private static func order(_ a: ZoneHit, _ b: ZoneHit) -> Bool {
        (a.containment == .inside ? 0 : 1, a.name, a.id.rawValue) < (b.containment == .inside ? 0 : 1, b.name, b.id.rawValue)
    }

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
