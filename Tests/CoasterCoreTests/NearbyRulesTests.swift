@testable import CoasterCore
import Foundation
import Testing

@Suite("Nearby rules")
struct NearbyRulesTests {
    /// The shortcut distance never changes an answer: on both sides of every bucket boundary up to
    /// 5 km and of the radius, by a hair, the bucket and the radius test are the geodesic's.
    @Test func distanceAnswersAsTheGeodesicWould() {
        var boundaries: [Double] = stride(from: 10.0, through: 100, by: 10).map { $0 }
        boundaries += stride(from: 150.0, through: 1_000, by: 50)
        boundaries += stride(from: 1_500.0, through: 5_000, by: 500)
        var g = SystemRandomNumberGenerator()
        var checked = 0
        for boundary in boundaries {
            for offset in [-1e-3, -1e-5, -1e-7, 0, 1e-7, 1e-5, 1e-3] {
                for _ in 0..<20 {
                    let a = Coordinate(lat: Double.random(in: -70...70, using: &g), lon: Double.random(in: -170...170, using: &g))
                    let b = Geodesy.destination(from: a, azimuth: Double.random(in: 0..<360, using: &g), distance: boundary + offset)
                    let exact = Geodesy.distance(a, b)
                    for radius in [boundary, 500, 5_000] {
                        let d = NearbyRules.distance(a, b, radius: radius)
                        #expect(DistanceBuckets.bucket(d) == DistanceBuckets.bucket(exact), "\(a) → \(b): \(d) vs \(exact)")
                        #expect((d <= radius) == (exact <= radius), "\(a) → \(b): \(d) vs \(exact), radius \(radius)")
                        checked += 1
                    }
                }
            }
        }
        #expect(checked > 10_000)
    }

    /// Four distances at a time give each lane the same bits as one at a time, whenever the
    /// four-lane pass answers (it leaves to the one-by-one pass any lane the plane cannot settle):
    /// points on both sides of every bucket boundary, by a hair, from viewers all over the globe.
    /// Ages are whole minutes rounded down, as `floor` rounds, for every kind of interval: the
    /// rules work them out without calling `floor`.
    @Test func agesRoundDownToWholeMinutesAsFloorDoes() {
        var generator = SeededGenerator(seed: 7)
        var cases: [Double] = [0, 59.999, 60, 60.000001, 119.9, -0.001, -59.99, -60, -60.5, 1e9 + 0.5, -1e9 - 0.5, 0x1p60, -0x1p60,
                               .infinity, -.infinity, .nan, .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .leastNonzeroMagnitude]
        for _ in 0..<10_000 { cases.append(Double.random(in: -100_000...100_000, using: &generator)) }
        for k in -2_000...2_000 { cases.append(Double(k) * 60); cases.append(Double(k) * 60 - 1e-9); cases.append((Double(k) * 60).nextDown) }
        for seconds in cases {
            let expected = (seconds / 60).rounded(.down) * 60
            let age = NearbyRules.age(seconds)
            #expect(age.bitPattern == expected.bitPattern || (age.isNaN && expected.isNaN) || (age == 0 && expected == 0), "\(seconds)")
        }
    }

    @Test func fourAtATimeAnswersAsOneAtATime() {
        var boundaries: [Double] = stride(from: 10.0, through: 100, by: 10).map { $0 }
        boundaries += stride(from: 150.0, through: 1_000, by: 50)
        boundaries += stride(from: 1_500.0, through: 5_000, by: 500)
        var g = SeededGenerator(seed: 17)
        var answered = 0, quads = 0
        for _ in 0..<2_000 {
            let a = Coordinate(lat: Double.random(in: -85...85, using: &g), lon: Double.random(in: -180...180, using: &g))
            let distances = Geodesy.LocalDistances(from: a)
            let wanted = (0..<4).map { _ in boundaries.randomElement(using: &g)! + [-3, -0.5, 0.5, 3, -1e-7, 1e-7, 0].randomElement(using: &g)! }
            let points = wanted.map { Geodesy.destination(from: a, azimuth: Double.random(in: 0..<360, using: &g), distance: $0) }
            // A radius on a boundary, and one through the first point (inside no bucket's edge).
            for radius in [500.0, boundaries.randomElement(using: &g)!, wanted[0]] {
                quads += 1
                guard let (metres, buckets) = NearbyRules.measure(from: distances, lat: SIMD4(points.map(\.lat)), lon: SIMD4(points.map(\.lon)),
                                                                  radius: radius)
                else { continue }
                answered += 1
                for k in 0..<4 {
                    let one = NearbyRules.measure(from: distances, to: points[k], radius: radius)
                    #expect(metres[k].bitPattern == one.metres.bitPattern && buckets[k].bitPattern == one.bucket.bitPattern,
                            "\(a) → \(points[k]): \(metres[k]), \(buckets[k]) against \(one)")
                }
            }
        }
        // A lane within a hair of a boundary (three offsets in seven) sends its quad one by one;
        // about a tenth of the quads have none.
        #expect(answered > quads / 20, "\(answered) of \(quads)")
    }

    /// Far from any boundary it takes the shortcut (within its tolerance of the geodesic).
    @Test func distanceUsesTheLocalPlaneWhenItCannotMatter() {
        let a = Coordinate(lat: 41.4822, lon: -82.6835)
        let b = Geodesy.destination(from: a, azimuth: 40, distance: 123.4)
        let d = NearbyRules.distance(a, b, radius: 500)
        #expect(d == Geodesy.localDistance(a, b))
        #expect(abs(d - 123.4) < Geodesy.localDistanceTolerance(123.4))
    }

    /// Only friends both ways, blocked neither way, are listed, whatever the directory holds: a
    /// one-way friend, a blocked one and a stranger standing beside the viewer are not; the one-way
    /// friend is once they list the viewer back.
    /// Nearest first, ties (shared buckets) by username, park-only (no distance) last: every
    /// answer kept whole, whatever permutation the sort takes (cycles of every length, none).
    @Test func answersComeNearestFirstThenByUsername() {
        var g = SeededGenerator(seed: 5)
        for count in [0, 1, 2, 3, 7, 34, 120] {
            for _ in 0..<20 {
                var people = (0..<count).map { i in
                    NearbyPerson(id: UserID(Int64(i)), username: "user\(UInt32.random(in: 0...UInt32.max, using: &g))-\(i)", displayName: "U \(i)",
                                 distance: [10, 20, 50, 150, nil].randomElement(using: &g)!, age: Double(i * 60), precision: .exact,
                                 park: nil, zone: nil)
                }
                let expected = people.sorted { a, b in
                    let da = a.distance ?? .infinity, db = b.distance ?? .infinity
                    return da != db ? da < db : a.username < b.username
                }
                NearbyRules.sortNearestFirst(&people)
                #expect(people == expected)
            }
        }
    }

    /// Each sharing level as nearby lists it: exact with its distance and zone, approximate
    /// measured to its cell's centre and with no zone, park-only without a distance; a friend
    /// inside the search box but beyond the radius is not listed.
    @Test func eachPrecisionIsListedAsShared() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let station = Coordinate(lat: 41.481656, lon: -82.688132)
        // The viewer 95 m north of the centre of the approximate cell holding the station.
        let here = Geodesy.destination(from: ApproximateGrid.snap(station), azimuth: 0, distance: 95)
        func fix(_ c: Coordinate) -> AcceptedFix { AcceptedFix(position: c, accuracy: 5, recordedAt: now.addingTimeInterval(-30)) }
        let visits: [ParkID: Date] = ["cedar-point": now]
        let viewer = PersonState(id: UserID(1), username: "viewer", displayName: "V", latest: fix(here), visits: visits,
                                 friends: [UserID(2), UserID(3), UserID(4), UserID(5)])
        func friend(_ id: Int64, at c: Coordinate, _ precision: Precision) -> PersonState {
            PersonState(id: UserID(id), username: "f\(id)", displayName: "F", latest: fix(c), zones: ["cedar-point.millennium-force"],
                        visits: visits, sharing: SharingSettings(precision: precision), friends: [UserID(1)])
        }
        let east = Geodesy.destination(from: here, azimuth: 90, distance: 120)
        let friends = [
            friend(2, at: east, .exact),
            friend(3, at: station, .approximate),
            friend(4, at: Geodesy.destination(from: here, azimuth: 180, distance: 520), .exact),  // beyond 500 m
            friend(5, at: east, .parkOnly),
        ]
        let found = try NearbyRules().friendsNearby(MutualFriends(viewer: viewer, among: friends), radius: 500, now: now,
                                                    index: FenceIndexTests.index).get()
        #expect(found.map(\.id) == [UserID(3), UserID(2), UserID(5)])
        #expect(found.map(\.precision) == [.approximate, .exact, .parkOnly])
        #expect(found.map(\.distance) == [100, 150, nil])
        #expect(found.map(\.zone) == [nil, "cedar-point.millennium-force", nil])
        #expect(found.map(\.park) == ["cedar-point", "cedar-point", "cedar-point"])
    }

    /// Park-only friends are listed by nearby when they visit a park the viewer visits, however
    /// far their last fix, and never for a park the viewer is not in; a park's friend list holds
    /// only friends visiting it, a zone only for exact sharing.
    @Test func parkListsFollowVisits() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let station = Coordinate(lat: 41.481656, lon: -82.688132)
        let kingsIsland = Coordinate(lat: 39.3440, lon: -84.2680)
        func fix(_ c: Coordinate) -> AcceptedFix { AcceptedFix(position: c, accuracy: 5, recordedAt: now.addingTimeInterval(-30)) }
        let viewer = PersonState(id: UserID(1), username: "viewer", displayName: "V", latest: fix(station), visits: ["cedar-point": now],
                                 friends: [UserID(2), UserID(3), UserID(4), UserID(5), UserID(6), UserID(7)])
        func friend(_ id: Int64, at c: Coordinate, visiting park: ParkID, _ precision: Precision) -> PersonState {
            PersonState(id: UserID(id), username: "f\(id)", displayName: "F", latest: fix(c), zones: ["cedar-point.millennium-force"],
                        visits: [park: now], sharing: SharingSettings(precision: precision), friends: [UserID(1)])
        }
        let near = Geodesy.destination(from: station, azimuth: 90, distance: 120)
        let friends = MutualFriends(viewer: viewer, among: [
            friend(2, at: near, visiting: "kings-island", .parkOnly),  // beside the viewer, on a visit elsewhere
            friend(7, at: kingsIsland, visiting: "kings-island", .parkOnly),
            friend(3, at: Geodesy.destination(from: station, azimuth: 0, distance: 5_000), visiting: "cedar-point", .parkOnly),
            friend(4, at: near, visiting: "cedar-point", .approximate),
            friend(5, at: near, visiting: "kings-island", .exact),  // beside the viewer, on a visit elsewhere
            friend(6, at: near, visiting: "cedar-point", .exact),
        ])
        let rules = NearbyRules()
        let nearby = try rules.friendsNearby(friends, radius: 500, now: now, index: FenceIndexTests.index).get()
        #expect(nearby.filter { $0.precision == .parkOnly }.map(\.id) == [UserID(3)])
        #expect(nearby.first { $0.id == UserID(3) }?.park == "cedar-point")
        #expect(nearby.first { $0.id == UserID(5) }?.park == "kings-island")
        let inPark = rules.friendsInPark(friends, park: "cedar-point", now: now, index: FenceIndexTests.index)
        #expect(inPark.map(\.id) == [UserID(3), UserID(4), UserID(6)])
        #expect(inPark.map(\.precision) == [.parkOnly, .approximate, .exact])
        #expect(inPark.map(\.zone) == [nil, nil, "cedar-point.millennium-force"])
    }

    /// Nearby decides most friends from their ``NearbyCard`` and reads the record only for the
    /// rest: the answers are those of the rules applied to each record, with every sharing choice
    /// in the mix (each precision, ghost mode on, ended and not yet ended, per-friend overrides
    /// hiding or coarsening, stale and missing fixes, no, one and several visits, friends near, at
    /// the radius and out of reach), through a snapshot and through the directory read in place.
    @Test func cardsAnswerAsTheRecordsWould() throws {
        var g = SeededGenerator(seed: 11)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let station = Coordinate(lat: 41.481656, lon: -82.688132)
        let index = FenceIndexTests.index
        let zones = index.zoneIDs
        // Zones marked in an index since replaced, whose kinds and positions differ.
        let replaced = try Self.replacedIndex()
        let parks: [ParkID] = ["cedar-point", "kings-island", "six-flags"]
        let rules = NearbyRules()
        var shown: [Precision: Int] = [:]
        for round in 0..<80 {
            let viewerID = UserID(1)
            let count = 40
            func randomPerson(_ id: UserID) -> PersonState {
                let distance = [Double.random(in: 0...600, using: &g), Double.random(in: 480...520, using: &g),
                                Double.random(in: 2_000...9_000, using: &g)].randomElement(using: &g)!
                let position = Geodesy.destination(from: station, azimuth: Double.random(in: 0..<360, using: &g), distance: distance)
                let age = [30.0, 3_000, 7_300, 90_000].randomElement(using: &g)!
                let latest = Int.random(in: 0..<10, using: &g) == 0 ? nil
                    : AcceptedFix(position: position, accuracy: 5, recordedAt: now.addingTimeInterval(-age))
                var visits: [ParkID: Date] = [:]
                for park in parks where Int.random(in: 0..<3, using: &g) == 0 {
                    visits[park] = now.addingTimeInterval(-[60.0, 50_000].randomElement(using: &g)!)
                }
                let ghost: GhostMode = [.off, .off, .off, .on, .until(now.addingTimeInterval(600)), .until(now.addingTimeInterval(-600))]
                    .randomElement(using: &g)!
                var overrides: [UserID: SharingOverride] = [:]
                if Int.random(in: 0..<4, using: &g) == 0 {
                    overrides[viewerID] = [SharingOverride(hidden: true), SharingOverride(precision: .parkOnly),
                                           SharingOverride(precision: .approximate), SharingOverride(precision: .exact)].randomElement(using: &g)!
                } else if Int.random(in: 0..<6, using: &g) == 0 {
                    overrides[UserID(999)] = SharingOverride(hidden: true)  // someone else's
                }
                let sharing = SharingSettings(ghost: ghost, precision: Precision.allCases.randomElement(using: &g)!, overrides: overrides)
                var person = PersonState(id: id, username: "p\(Int.random(in: 0..<1_000, using: &g))-\(id.rawValue)", displayName: "P",
                                         latest: latest, zones: Set(zones.shuffled(using: &g).prefix(Int.random(in: 0...3, using: &g))),
                                         visits: visits, sharing: sharing, friends: [viewerID])
                // Zones marked in the index in force, in one replaced since, or not at all.
                switch Int.random(in: 0..<3, using: &g) {
                case 0: person.markZones(in: index)
                case 1: person.markZones(in: replaced)
                default: break
                }
                return person
            }
            var viewer = randomPerson(viewerID)
            viewer.latest = AcceptedFix(position: station, accuracy: 5, recordedAt: now.addingTimeInterval(-60))
            viewer.visits["cedar-point"] = now
            viewer.friends = UserIDSet((2..<(2 + Int64(count))).map { UserID($0) })
            // Ids past the directory's array as well, which it keeps in a side table.
            let friends = (2..<(2 + Int64(count))).map { randomPerson(UserID($0 == 2 ? 9_000_000_000 + $0 : $0)) }
            viewer.friends = UserIDSet(friends.map(\.id))

            // The rules as written, record by record.
            let myParks = viewer.visiting(at: now, timeout: rules.visitTimeout)
            var expected: [NearbyPerson] = []
            for friend in friends {
                guard let fix = friend.latest,
                      let shared = rules.privacy.view(fix, sharing: friend.sharing, visiting: friend.visiting(at: now, timeout: rules.visitTimeout),
                                                      viewerVisiting: myParks, viewer: viewerID, relationship: .friends, now: now)
                else { continue }
                let age = (now.timeIntervalSince(fix.recordedAt) / 60).rounded(.down) * 60
                func listed(_ c: Coordinate, _ precision: Precision) {
                    let d = Geodesy.distance(station, c)
                    guard d <= 500 else { return }
                    expected.append(NearbyPerson(id: friend.id, username: friend.username, displayName: friend.displayName,
                                                 distance: DistanceBuckets.bucket(d), age: age, precision: precision,
                                                 park: friend.firstVisited(at: now, timeout: rules.visitTimeout),
                                                 zone: precision == .exact ? NearbyRules.mostSpecific(friend.zones, index: index) : nil))
                }
                switch shared {
                case .exact(let c, _): listed(c, .exact)
                case .approximate(let c, _): listed(c, .approximate)
                case .parkOnly(let visited):
                    guard let park = visited.intersection(myParks).sorted().first else { continue }
                    expected.append(NearbyPerson(id: friend.id, username: friend.username, displayName: friend.displayName,
                                                 distance: nil, age: age, precision: .parkOnly, park: park, zone: nil))
                }
            }
            expected.sort { ($0.distance ?? .infinity, $0.username) < ($1.distance ?? .infinity, $1.username) }
            for person in expected { shown[person.precision, default: 0] += 1 }

            let snapshot = try rules.friendsNearby(MutualFriends(viewer: viewer, among: friends), radius: 500, now: now, index: index).get()
            #expect(snapshot == expected, "round \(round)")
            let directory = PersonDirectory([viewer] + friends)
            let inPlace = try #require(directory.withFriends(of: viewerID) { try? rules.friendsNearby($0, radius: 500, now: now, index: index).get() })
            #expect(inPlace == expected, "round \(round)")
            let ids = try #require(directory.withFriends(of: viewerID) { try? rules.findFriendsNearby($0, radius: 500, now: now).get() } ?? nil)
            #expect(Set(ids.map(\.id)) == Set(expected.map(\.id)), "round \(round)")
        }
        // The mix reached every kind of answer.
        #expect(Precision.allCases.allSatisfy { shown[$0, default: 0] >= 30 }, "\(shown)")
    }

    /// The test parks' index as a park import might replace it: the same zones in the opposite
    /// order, each of another kind.
    static func replacedIndex() throws -> FenceIndex {
        let kinds: [ZoneKind: ZoneKind] = [.ride: .land, .queue: .poi, .poi: .ride, .land: .queue]
        let zones = FenceIndexTests.parks.flatMap(\.zones).reversed().map { zone in
            var zone = zone
            zone.kind = kinds[zone.kind]!
            return zone
        }
        return try FenceIndex(parks: FenceIndexTests.parks.map(\.park), zones: zones, replicas: 1)
    }

    /// A person's zones marked in an index name their most specific zone in that index, read
    /// from the mark; in any other index they are ranked again; changed, they lose the mark.
    @Test func zoneMarksHoldForTheirIndexOnly() throws {
        let index = FenceIndexTests.index, replaced = try Self.replacedIndex()
        let ride: ZoneID = "cedar-point.millennium-force"
        let land = try #require(index.zoneIDs.first { id in index.zone(id)?.kind == .land && index.zone(id)?.park == "cedar-point" })
        var person = PersonState(id: UserID(1), username: "ann", displayName: "Ann", zones: [ride, land])
        #expect(person.mostSpecificZone(in: index).map(index.zoneID(at:)) == ride)
        // Ranked again in the replaced index, where the ride is a land and the land a queue.
        #expect(person.mostSpecificZone(in: replaced).map(replaced.zoneID(at:)) == land)
        person.markZones(in: index)
        #expect(person.mostSpecificZone(in: index) == index.zonePosition(ride))
        #expect(person.mostSpecificZone(in: replaced) == replaced.zonePosition(land))
        person.markZones(in: replaced)
        #expect(person.mostSpecificZone(in: replaced) == replaced.zonePosition(land))
        #expect(person.mostSpecificZone(in: index) == index.zonePosition(ride))
        // Changing the zones drops the mark, in place or in a copy.
        person.markZones(in: index)
        var moved = person
        moved.zones = [land]
        #expect(moved.mostSpecificZone(in: index) == index.zonePosition(land))
        #expect(person.mostSpecificZone(in: index) == index.zonePosition(ride))
        moved.markZones(in: index)
        moved.zones.insert(ride)
        #expect(moved.mostSpecificZone(in: index) == index.zonePosition(ride))
        // None of the zones known: no zone, marked or not.
        var lost = PersonState(id: UserID(2), username: "bo", displayName: "Bo", zones: ["nowhere.ride"])
        #expect(lost.mostSpecificZone(in: index) == nil)
        lost.markZones(in: index)
        #expect(lost.mostSpecificZone(in: index) == nil)
        // Marks are not part of who a person is.
        #expect(person == PersonState(id: UserID(1), username: "ann", displayName: "Ann", zones: [ride, land]))
    }

    /// People nearby lists discoverable strangers visiting the viewer's park, measured to their
    /// approximate cell's centre (never their position) and without a zone; never a friend, a
    /// ghost (until the ghost mode ends), a stale fix, someone undiscoverable, blocked, beyond the
    /// radius or visiting another park.
    @Test func peopleNearbyAreStrangersShownApproximately() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let station = Coordinate(lat: 41.481656, lon: -82.688132)
        let viewerID = UserID(1)
        var viewer = PersonState(id: viewerID, username: "viewer", displayName: "V",
                                 latest: AcceptedFix(position: station, accuracy: 5, recordedAt: now.addingTimeInterval(-60)),
                                 visits: ["cedar-point": now], friends: [UserID(3)])
        viewer.blocks = [UserID(7)]
        func person(_ id: Int64, _ name: String, metres: Double = 300, age: Double = 60, park: ParkID = "cedar-point",
                    ghost: GhostMode = .off, discoverable: Bool = true) -> PersonState {
            let at = Geodesy.destination(from: station, azimuth: 45, distance: metres)
            return PersonState(id: UserID(id), username: name, displayName: name,
                               latest: AcceptedFix(position: at, accuracy: 5, recordedAt: now.addingTimeInterval(-age)),
                               zones: ["cedar-point.millennium-force"], visits: [park: now], sharing: SharingSettings(ghost: ghost),
                               friends: id == 3 ? [viewerID] : [], discoverable: discoverable)
        }
        let candidates = [
            person(2, "stranger"),
            person(3, "friend"),
            person(4, "ghost", ghost: .on),
            person(5, "stale", age: 3 * 3600),
            person(6, "shy", discoverable: false),
            person(7, "blocked"),
            person(8, "far", metres: 2_500),
            person(9, "elsewhere", park: "kings-island"),
            person(10, "hiding", ghost: .until(now.addingTimeInterval(600))),
            person(11, "back", metres: 120, ghost: .until(now.addingTimeInterval(-600))),
        ]
        let found = try NearbyRules().peopleNearby(viewer: viewer, candidates: candidates + [viewer], radius: 1_000, now: now).get()
        #expect(found.map(\.username) == ["back", "stranger"])
        #expect(found.allSatisfy { $0.precision == .approximate && $0.zone == nil && $0.park == "cedar-point" })
        for person in found {
            let truth = candidates.first { $0.id == person.id }!.latest!.position
            #expect(person.distance == DistanceBuckets.bucket(Geodesy.distance(station, ApproximateGrid.snap(truth))))
        }
        // Measured to the cell's centre, which here is farther than the stranger stands.
        #expect(found.last?.distance != DistanceBuckets.bucket(300))
        // Not on a visit, the viewer is told so.
        viewer.visits = [:]
        #expect(NearbyRules().peopleNearby(viewer: viewer, candidates: candidates, radius: 1_000, now: now) == .failure(.notInPark))
    }

    @Test func onlyMutualUnblockedFriendsAreListed() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let here = Coordinate(lat: 41.481656, lon: -82.688132)
        let fix = AcceptedFix(position: here, accuracy: 5, recordedAt: now.addingTimeInterval(-30))
        let visits: [ParkID: Date] = ["cedar-point": now]
        func person(_ id: Int64, friends: UserIDSet) -> PersonState {
            PersonState(id: UserID(id), username: "u\(id)", displayName: "U \(id)", latest: fix, visits: visits, friends: friends)
        }
        var viewer = person(1, friends: [UserID(2), UserID(3), UserID(4)])
        viewer.blocks = [UserID(4)]
        let others = [
            person(2, friends: [UserID(1)]),  // mutual
            person(3, friends: []),  // one way
            person(4, friends: [UserID(1)]),  // blocked
            person(5, friends: [UserID(1)]),  // not the viewer's friend
        ]
        var directory = PersonDirectory([viewer] + others)
        let rules = NearbyRules()
        func listed(_ friends: MutualFriends?) -> [[UserID]] {
            guard let friends else { return [] }
            let nearby = (try? rules.friendsNearby(friends, radius: 500, now: now, index: FenceIndexTests.index).get()) ?? []
            let inPark = rules.friendsInPark(friends, park: "cedar-point", now: now, index: FenceIndexTests.index)
            return [friends.people.map(\.id), nearby.map(\.id), inPark.map(\.id)]
        }
        #expect(listed(directory.friends(of: UserID(1))) == Array(repeating: [UserID(2)], count: 3))
        #expect(listed(MutualFriends(viewer: viewer, among: others)) == Array(repeating: [UserID(2)], count: 3))
        directory[UserID(3)] = person(3, friends: [UserID(1)])
        #expect(listed(directory.friends(of: UserID(1))) == Array(repeating: [UserID(2), UserID(3)], count: 3))
    }

    /// None, one and several open visits read back as they were set, and answer the same questions.
    @Test func openVisitsKeepWhatWasSet() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let a = ParkID(rawValue: "a"), b = ParkID(rawValue: "b")
        for visits in [[:], [a: now], [a: now.addingTimeInterval(-7_200)], [a: now.addingTimeInterval(-7_200), b: now]] as [[ParkID: Date]] {
            var person = PersonState(id: UserID(1), username: "ann", displayName: "Ann")
            person.visits = visits
            #expect(person.visits == visits)
            #expect(person.openVisits.count == visits.count)
            #expect(Dictionary(uniqueKeysWithValues: person.openVisits.map { ($0.park, $0.at) }) == visits)
            #expect(person.visiting(at: now, timeout: 3_600) == Set(visits.filter { now.timeIntervalSince($0.value) <= 3_600 }.keys))
            #expect(person.firstVisited(at: now, timeout: 3_600) == person.visiting(at: now, timeout: 3_600).min())
            for parks in [[], [a], [b], [a, b]] as [Set<ParkID>] {
                #expect(person.openVisits.includesAny(of: parks) == !parks.isDisjoint(with: visits.keys))
            }
            for park in [a, b] { #expect(person.openVisits.includes(park) == (visits[park] != nil)) }
        }
    }

    @Test func firstVisitedIsTheSmallestFreshVisit() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let person = PersonState(id: UserID(1), username: "ann", displayName: "Ann",
                                 visits: [ParkID(rawValue: "b"): now, ParkID(rawValue: "a"): now.addingTimeInterval(-7_200),
                                          ParkID(rawValue: "c"): now.addingTimeInterval(-60)])
        #expect(person.firstVisited(at: now, timeout: 3_600) == ParkID(rawValue: "b"))
        #expect(person.firstVisited(at: now, timeout: 3_600) == person.visiting(at: now, timeout: 3_600).min())
        #expect(person.firstVisited(at: now, timeout: 8_000) == ParkID(rawValue: "a"))
        #expect(person.firstVisited(at: now.addingTimeInterval(10_000), timeout: 3_600) == nil)
    }
}

@Suite("Person directory")
struct PersonDirectoryTests {
    static func person(_ id: Int64) -> PersonState { PersonState(id: UserID(id), username: "u\(id)", displayName: "U \(id)") }

    @Test func findsWhatWasPutWhereverItsIdFalls() {
        var directory = PersonDirectory()
        // Dense ids, a far one (the side table), zero and a negative one.
        let ids: [Int64] = [1, 2, 3, 1_000, 5_000_000_000, 0, -7, 999_999]
        for id in ids { directory[UserID(id)] = Self.person(id) }
        #expect(directory.count == ids.count)
        for id in ids { #expect(directory[UserID(id)]?.username == "u\(id)") }
        for id in ids { #expect(directory.contains(UserID(id))) }
        #expect(directory[UserID(4)] == nil)
        #expect(directory[UserID(6_000_000_000)] == nil)
        for id: Int64 in [4, 1_001, 6_000_000_000, -8] { #expect(!directory.contains(UserID(id))) }
        // Replacing does not count twice; removing does count.
        directory[UserID(2)] = Self.person(2)
        directory[UserID(5_000_000_000)] = nil
        directory[UserID(3)] = nil
        directory[UserID(3)] = nil
        #expect(directory.count == ids.count - 2)
        #expect(directory[UserID(5_000_000_000)] == nil)
        #expect(directory[UserID(3)] == nil)
        #expect(!directory.contains(UserID(5_000_000_000)) && !directory.contains(UserID(3)) && directory.contains(UserID(2)))
    }

    @Test func anIdLeavesTheSideTableWhenThePopulationGrowsPastIt() {
        var directory = PersonDirectory()
        let far = UserID(3_000_000)
        directory[far] = Self.person(3_000_000)
        // A million people later the same id is within the array's reach; it must not live twice.
        for id in 1...1_000_000 { directory[UserID(Int64(id))] = Self.person(Int64(id)) }
        directory[far] = Self.person(3_000_000)
        #expect(directory.count == 1_000_001)
        directory[far] = nil
        #expect(directory[far] == nil)
        #expect(directory.count == 1_000_000)
    }

    /// One random change among `ids`: someone leaves, or someone's list gains or loses a friend
    /// (the path a refresh after a friendship takes); or, two times in three, the id of someone
    /// for the caller to place anew (an arrival, or a whole new record).
    static func randomChange(_ directory: inout PersonDirectory, among ids: [UserID], using g: inout some RandomNumberGenerator) -> UserID? {
        let id = ids.randomElement(using: &g)!
        switch Int.random(in: 0..<6, using: &g) {
        case 0: directory[id] = nil
        case 1:
            guard var p = directory[id] else { return nil }
            let other = ids.randomElement(using: &g)!
            if p.friends.contains(other) { p.friends.remove(other) } else if other != id { p.friends.insert(other) }
            directory[id] = p
        default: return id
        }
        return nil
    }

    /// The directory's one-way friendships, kept up to date change by change, are always those a
    /// look at everyone's friend lists finds; so are the mutual friends it hands out, as a snapshot
    /// or read in place. Random lists,
    /// blocks, arrivals and departures among a few people; the bulk load agrees with the steps.
    @Test func oneWayFriendshipsFollowEveryChange() {
        var g = SystemRandomNumberGenerator()
        let ids = (1...12).map { UserID(Int64($0)) } + [UserID(5_000_000_000)]
        var directory = PersonDirectory()
        func randomPerson(_ id: UserID) -> PersonState {
            var p = PersonState(id: id, username: "u\(id)", displayName: "U")
            p.friends = UserIDSet(ids.filter { $0 != id && Int.random(in: 0..<3, using: &g) > 0 })
            p.blocks = Set(ids.filter { _ in Int.random(in: 0..<8, using: &g) == 0 })
            // Something for the directory's cards to follow.
            if Bool.random(using: &g) {
                p.latest = AcceptedFix(position: Coordinate(lat: 41, lon: Double.random(in: -83 ... -82, using: &g)), accuracy: 5,
                                       recordedAt: Date(timeIntervalSince1970: Double.random(in: 0...1e9, using: &g)))
            }
            p.sharing.precision = Precision.allCases.randomElement(using: &g)!
            if Bool.random(using: &g) { p.visits = ["cedar-point": Date(timeIntervalSince1970: 0)] }
            return p
        }
        for step in 0..<3_000 {
            if let id = Self.randomChange(&directory, among: ids, using: &g) { directory[id] = randomPerson(id) }
            let present = ids.compactMap { directory[$0] }
            let lists = Dictionary(uniqueKeysWithValues: present.map { ($0.id, $0.friends) })
            var expected: [(UserID, UserID)] = []
            for p in present.sorted(by: { $0.id < $1.id }) {
                for f in p.friends where !(lists[f]?.contains(p.id) ?? false) { expected.append((p.id, f)) }
            }
            #expect(directory.oneWayFriendships.map { "\($0)→\($1)" } == expected.map { "\($0)→\($1)" }, "step \(step)")
            func walked(_ friends: some FriendGroup) -> [UserID] {
                var ids: [UserID] = []
                friends.forEachFriend { ids.append($0.id) }
                return ids
            }
            for p in present {
                let expected = MutualFriends(viewer: p, among: present).people.map(\.id)
                #expect(directory.friends(of: p.id)?.people.map(\.id) == expected)
                #expect(directory.friends(of: p.id).map(walked) == expected)
                // Read in place, as the nearby route does: the same friends, the side table's too.
                #expect(directory.withFriends(of: p.id) { walked($0) } == expected)
                // By card as well, each the card of the record the directory holds.
                let carded = directory.withFriends(of: p.id) { friends in
                    var cards: [UserID] = []
                    friends.forEachCard { id, card in
                        if card == NearbyCard(directory[id]!) { cards.append(id) }
                    }
                    return cards
                }
                #expect(carded == expected)
            }
            if step % 100 == 0 {
                #expect(PersonDirectory(present).oneWayFriendships.map { "\($0)→\($1)" } == expected.map { "\($0)→\($1)" })
            }
        }
    }
}

extension PersonDirectoryTests {
    /// The hints the nearby path asks for the first cards through lead to the first friend ids
    /// below 2³² of the record each slot holds, however people and lists change, and a copy of the
    /// directory keeps its own (its records keep their lists).
    @Test func friendHintsFollowTheRecords() {
        var g = SystemRandomNumberGenerator()
        let ids = (1...40).map { UserID(Int64($0)) } + [UserID(5_000_000_000), UserID(-3)]
        var directory = PersonDirectory()
        var copies: [(PersonDirectory, [UserID: [UserID]])] = []
        func firstNarrow(_ person: PersonState) -> [UserID] {
            Array(person.friends.filter { UInt32(exactly: $0.rawValue) != nil }.prefix(FriendsInPlace.prefetchDistance))
        }
        func expected(_ directory: PersonDirectory) -> [UserID: [UserID]] {
            Dictionary(uniqueKeysWithValues: ids.compactMap { id in directory[id].map { (id, firstNarrow($0)) } })
        }
        for step in 0..<2_000 {
            if let id = Self.randomChange(&directory, among: ids, using: &g) {
                var p = PersonState(id: id, username: "u\(id)", displayName: "U")
                p.friends = UserIDSet(ids.filter { $0 != id && Int.random(in: 0..<3, using: &g) > 0 })
                directory[id] = p
            }
            if step % 400 == 0 { copies.append((directory, expected(directory))) }
            for (id, friends) in expected(directory) where id.rawValue >= 0 && id.rawValue < 1 << 20 {
                #expect(directory.hintedFriends(of: id) == friends, "step \(step), \(id)")
            }
        }
        for (copy, friends) in copies {
            for (id, first) in friends where id.rawValue >= 0 && id.rawValue < 1 << 20 { #expect(copy.hintedFriends(of: id) == first) }
        }
        // Someone with more friends than a hint holds: the first of them, in order.
        var many = PersonState(id: UserID(7), username: "u7", displayName: "U")
        many.friends = UserIDSet((100..<160).map { UserID(Int64($0)) } + [UserID(-1), UserID(1 << 40)])
        directory[UserID(7)] = many
        #expect(directory.hintedFriends(of: UserID(7)) == (100..<(100 + Int64(FriendsInPlace.prefetchDistance))).map { UserID($0) })
    }
}

@Suite("User id sets")
struct UserIDSetTests {
    /// Random inserts, removals and lookups against `Set<UserID>`, over ids that fit in 32 bits and
    /// ids that do not (negative, 2³² and beyond): same members, same count, iteration in id order.
    @Test func behavesLikeASortedSet() {
        var g = SystemRandomNumberGenerator()
        let pool: [Int64] = (0..<200).map { _ in Int64.random(in: 0...5_000, using: &g) }
            + [-1, -5_000_000_000, 0, Int64(UInt32.max), Int64(UInt32.max) + 1, 9_000_000_000, Int64.max, Int64.min]
        var set = UserIDSet()
        var reference: Set<UserID> = []
        for step in 0..<20_000 {
            let id = UserID(pool.randomElement(using: &g)!)
            switch Int.random(in: 0..<3, using: &g) {
            case 0: #expect(set.insert(id) == reference.insert(id).inserted)
            case 1: #expect(set.remove(id) == reference.remove(id))
            default: #expect(set.contains(id) == reference.contains(id))
            }
            if step % 1_000 == 0 {
                set.compact()
                #expect(Array(set) == reference.sorted())
                #expect(set.count == reference.count)
            }
        }
        #expect(Array(set) == reference.sorted())
        #expect(UserIDSet(reference.shuffled()) == set)
        #expect(UserIDSet([UserID(3), UserID(-2), UserID(3), UserID(5_000_000_000)]).description == "[-2, 3, 5000000000]")
    }
}
