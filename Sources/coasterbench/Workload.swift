import ArgumentParser
import CoasterCore
import Foundation

/// Which generated world a command works on: `load` and `export` must agree for the levels to
/// compare the same data.
struct WorldOptions: ParsableArguments {
    @Option(help: "Users to generate.")
    var users = 10_000

    @Option(help: "Workload seed.")
    var seed: UInt64 = 20_261_121
}

/// The benchmark's world (issue "Benchmarks"): 50 star-shaped parks over the continental US,
/// 100–300 vertices, 0.35–2 km across, each with 20–60 non-overlapping ride zones of 9–25
/// vertices and 20–90 m across and 8–16 places (restrooms, food, first aid); users placed 70 %
/// in parks in groups, 15 % a few km from one, 15 % anywhere; a symmetric friend graph of about
/// 50 friends each.
struct Workload {
    var parks: [Park] = []
    var zones: [Zone] = []
    /// Ride-zone centres per park, to place people near rides.
    var rideCentres: [[Coordinate]] = []
    var people: [UserID: PersonState] = [:]
    var probes: [IncomingFix] = []

    /// The generator's version, which a kept world (``KeptWorld``) is loaded by: raise it with any
    /// change to what ``make(users:seed:parks:)`` makes, or to what `coasterbench load` or the
    /// store's bulk loaders write of it that no migration marks.
    static let version = 1

    /// How many askers every level draws nearby's callers from.
    static let askerCount = 10_000

    /// The askers of nearby, every level's same ones (engine, HTTP, PostGIS, Redis, numpy): asker
    /// `k` (0 ≤ k < ``askerCount``, or every user in a smaller world) is user
    /// `k × step mod users + 1`, a step near the golden ratio of the world's size and prime to it,
    /// so they are spread over every kind of user (in parks, near, anywhere; the ids follow how
    /// the world is made). A formula rather than a list: pgbench and a Redis script work each
    /// one out from `k`.
    static func askers(users: Int) -> (count: Int, step: Int) {
        func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? a : gcd(b, a % b) }
        var step = max(1, Int((Double(users) * 0.618_033_988_75).rounded()))
        while gcd(step, users) != 1 { step += 1 }
        return (min(Self.askerCount, users), step)
    }

    /// The askers (``askers(users:)``) in order, asker 0 first.
    static func askerIDs(users: Int) -> [UserID] {
        let (count, step) = Self.askers(users: users)
        return (0..<count).map { UserID(Int64($0 * step % users + 1)) }
    }

    static func circle(_ c: Coordinate, radius: Double, vertices: Int, jitter: Double, _ g: inout SeededGenerator) -> [Coordinate] {
        let (dLat, dLon) = Geodesy.degreesPerMetre(at: c.lat)
        var ring = (0..<vertices).map { i -> Coordinate in
            let theta = 2 * Double.pi * Double(i) / Double(vertices)
            // Alternate long and short rays for a star; jitter keeps it irregular.
            let r = radius * ((i % 2 == 0 ? 1.0 : 0.78) - jitter * Double.random(in: 0...1, using: &g))
            return Coordinate(lat: c.lat + r * cos(theta) * dLat, lon: c.lon + r * sin(theta) * dLon)
        }
        ring.append(ring[0])
        return ring
    }

    static func make(users: Int, seed: UInt64, parks parkCount: Int = 50) -> Workload {
        var g = SeededGenerator(seed: seed)
        var w = Workload()
        for p in 0..<parkCount {
            let centre = Coordinate(lat: Double.random(in: 27...47, using: &g), lon: Double.random(in: -122 ... -70, using: &g))
            let radius = Double.random(in: 175...1000, using: &g)
            let id = ParkID(rawValue: "park-\(p)")
            let boundary = circle(centre, radius: radius, vertices: Int.random(in: 100...300, using: &g) / 2 * 2, jitter: 0.05, &g)
            w.parks.append(Park(id: id, name: "Park \(p)", timeZone: "UTC", attribution: nil,
                                boundary: MultiPolygon(polygons: [Polygon(rings: [boundary])])))
            var centres: [(Coordinate, Double)] = []
            let want = Int.random(in: 20...60, using: &g)
            var attempts = 0
            while centres.count < want && attempts < 5_000 {
                attempts += 1
                let r = Double.random(in: 10...45, using: &g)
                let c = Geodesy.destination(from: centre, azimuth: Double.random(in: 0..<360, using: &g),
                                            distance: Double.random(in: 0...(radius * 0.6), using: &g))
                guard centres.allSatisfy({ Geodesy.distance($0.0, c) > $0.1 + r + 2 }) else { continue }
                centres.append((c, r))
                let ring = circle(c, radius: r, vertices: Int.random(in: 9...25, using: &g), jitter: 0.0, &g)
                let rideID = RideID(park: id, slug: "ride-\(centres.count)")
                w.zones.append(Zone(id: ZoneID(rawValue: rideID.rawValue), park: id, kind: .ride, name: "Ride \(centres.count)", ride: rideID,
                                    area: MultiPolygon(polygons: [Polygon(rings: [ring])])))
            }
            w.rideCentres.append(centres.map(\.0))
        }
        // People: 70 % in parks in groups of 1–6, 15 % within a few km of a park, 15 % anywhere.
        let now = Date()
        var groupsByPark: [[[UserID]]] = Array(repeating: [], count: parkCount)
        var outside: [UserID] = []
        var id: Int64 = 1
        while id <= Int64(users) {
            let roll = Double.random(in: 0..<1, using: &g)
            if roll < 0.7 {
                let p = Int.random(in: 0..<parkCount, using: &g)
                let size = min(Int.random(in: 1...6, using: &g), users - Int(id) + 1)
                let nearRide = Bool.random(using: &g)
                let anchor = nearRide
                    ? w.rideCentres[p].randomElement(using: &g)!
                    : Geodesy.destination(from: w.parks[p].boundary.boundingBox!.center, azimuth: Double.random(in: 0..<360, using: &g),
                                          distance: Double.random(in: 0...150, using: &g))
                var group: [UserID] = []
                for _ in 0..<size {
                    let at = Geodesy.destination(from: anchor, azimuth: Double.random(in: 0..<360, using: &g), distance: Double.random(in: 0...5, using: &g))
                    w.people[UserID(id)] = PersonState(id: UserID(id), username: "u\(id)", displayName: "User \(id)",
                        latest: AcceptedFix(position: at, accuracy: 8, recordedAt: now.addingTimeInterval(-60)),
                        visits: [w.parks[p].id: now])
                    group.append(UserID(id))
                    id += 1
                }
                groupsByPark[p].append(group)
            } else {
                let at = roll < 0.85
                    ? Geodesy.destination(from: w.parks[Int.random(in: 0..<parkCount, using: &g)].boundary.boundingBox!.center,
                                          azimuth: Double.random(in: 0..<360, using: &g), distance: Double.random(in: 2_000...8_000, using: &g))
                    : Coordinate(lat: Double.random(in: 25...49, using: &g), lon: Double.random(in: -124 ... -67, using: &g))
                w.people[UserID(id)] = PersonState(id: UserID(id), username: "u\(id)", displayName: "User \(id)",
                    latest: AcceptedFix(position: at, accuracy: 15, recordedAt: now.addingTimeInterval(-60)))
                outside.append(UserID(id))
                id += 1
            }
        }
        // Friends: group members, then ties mostly in the same park community, to about 50 each.
        func link(_ a: UserID, _ b: UserID) {
            guard a != b else { return }
            w.people[a]?.friends.insert(b)
            w.people[b]?.friends.insert(a)
        }
        for p in 0..<parkCount {
            let community = groupsByPark[p].flatMap { $0 }
            for group in groupsByPark[p] {
                for a in group { for b in group { link(a, b) } }
                for member in group where community.count > 1 {
                    for _ in 0..<21 { link(member, community.randomElement(using: &g)!) }
                }
            }
        }
        // Sorted: dictionary order changes from run to run (seeded hashing), the workload must not.
        let everyone = Array(w.people.keys).sorted()
        for member in everyone where (w.people[member]?.friends.count ?? 0) < 45 {
            for _ in 0..<(50 - (w.people[member]?.friends.count ?? 0)) / 2 + 1 { link(member, everyone.randomElement(using: &g)!) }
        }
        for id in everyone { w.people[id]?.friends.compact() }
        // 100k probe fixes: 55 % in a ride zone, 25 % elsewhere in a park, 10 % just outside a fence, 10 % anywhere.
        for _ in 0..<100_000 {
            let roll = Double.random(in: 0..<1, using: &g)
            let p = Int.random(in: 0..<parkCount, using: &g)
            let c: Coordinate
            if roll < 0.55 {
                c = Geodesy.destination(from: w.rideCentres[p].randomElement(using: &g)!, azimuth: Double.random(in: 0..<360, using: &g), distance: 5)
            } else if roll < 0.8 {
                c = Geodesy.destination(from: w.parks[p].boundary.boundingBox!.center, azimuth: Double.random(in: 0..<360, using: &g),
                                        distance: Double.random(in: 0...150, using: &g))
            } else if roll < 0.9 {
                let vertex = w.parks[p].boundary.polygons[0].exterior.randomElement(using: &g)!
                c = Geodesy.destination(from: vertex, azimuth: Double.random(in: 0..<360, using: &g), distance: 15)
            } else {
                c = Coordinate(lat: Double.random(in: 25...49, using: &g), lon: Double.random(in: -124 ... -67, using: &g))
            }
            w.probes.append(IncomingFix(lat: c.lat, lon: c.lon, accuracy: 10, recordedAt: now))
        }
        w.addPlaces(seed: seed)
        return w
    }

    /// 8–16 places a park, a third each restrooms, food and first aid, at points within half the
    /// park's radius of its centre, each a 10 m circle as a park file's point poi is drawn: what
    /// `GET /v1/parks/{parkId}/places` answers. From a generator of their own, drawn after the
    /// rest, so that the parks, rides, people and probes are the world they were before places.
    /// Each park's places follow its rides in the zone list.
    mutating func addPlaces(seed: UInt64) {
        var g = SeededGenerator(seed: seed ^ 0x706C_6163_6573)  // "places"
        let kinds: [(PlaceCategory, String)] = [(.restroom, "Restrooms"), (.food, "Snacks"), (.firstAid, "First Aid")]
        var zones: [Zone] = []
        for park in self.parks {
            zones += self.zones.filter { $0.park == park.id }
            guard let box = park.boundary.boundingBox else { continue }
            let centre = box.center
            // The star's first ray points north and is one of its long ones: about its radius.
            let radius = Geodesy.distance(centre, Coordinate(lat: box.maxLat, lon: centre.lon))
            for k in 0..<Int.random(in: 8...16, using: &g) {
                let (category, name) = kinds[k % kinds.count]
                let at = Geodesy.destination(from: centre, azimuth: Double.random(in: 0..<360, using: &g),
                                             distance: Double.random(in: 0...(radius * 0.5), using: &g))
                zones.append(Zone(id: ZoneID(park: park.id, slug: "place-\(k + 1)"), park: park.id, kind: .poi, name: name, ride: nil,
                                  category: category.rawValue, area: MultiPolygon(polygons: [Polygon(rings: [Geodesy.geodesicCircle(center: at, radius: 10)])]),
                                  position: at))
            }
        }
        self.zones = zones
    }
}
