@testable import CoasterAPI
@testable import CoasterCore
@testable import CoasterStore
import CoasterHTTP
import CoasterService
import Foundation
import NIOCore
import Testing

/// The JSON the answers write says exactly what the shared `JSONEncoder` would say of the same
/// values (their `Encodable` conformance is the reference): the hand-written writers of the hot
/// answers, and the writers listed once with their `Encodable` form (``JSONObject``).
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

    /// Messages with bodies that need escaping, read and unread, times with fractions, before
    /// 1970 and far ahead, large ids; empty lists.
    @Test func messagePagesAndConversationListsAgree() throws {
        let bodies = ["Hi!", "Quote \" back\\slash\ttab\nnewline \u{1}ctl \u{7f} / slash ünïcödé 🎢", "", String(repeating: "x", count: 2000),
                      "\u{2028}line\u{2029}para \u{0}nul"]
        let times: [Double] = [1_781_092_800, 1_781_092_800.999, 0, -0.5, -86_400 * 400, 253_402_300_799.5, 253_402_300_800, 1e11]
        var messages: [MessageWire] = []
        for (n, body) in bodies.enumerated() {
            for (m, t) in times.enumerated() {
                let read: Date? = m % 3 == 0 ? nil : Date(timeIntervalSince1970: times[(m + n) % times.count])
                messages.append(MessageWire(Message(id: Int64(n * 100 + m + 1) * (m == 2 ? 1 << 40 : 1), sender: UserID(Int64(n + 1)),
                                                    recipient: UserID(Int64.max - Int64(m)), body: body,
                                                    sentAt: Date(timeIntervalSince1970: t), readAt: read)))
            }
        }
        try self.agree(MessageListResponse(messages: messages))
        try self.agree(MessageListResponse(messages: []))
        try self.agree(MessageListResponse(messages: [messages[0]]))
        let people = [UserWire(id: UserID(7), username: "ann", displayName: "Ann \"the\" Rider 🎢"), UserWire(id: UserID(1 << 50), username: "b", displayName: "")]
        try self.agree(ConversationListResponse(conversations: messages.enumerated().map { i, m in
            .init(user: people[i % 2], last: m, unread: i * 37)
        }))
        try self.agree(ConversationListResponse(conversations: []))
    }

    /// Buckets empty and full, medians whole and halves, posted waits with and without one,
    /// times with fractions and outside 1970…9999, an empty history.
    @Test func waitHistoriesAgree() throws {
        let starts: [Double] = [1_781_092_800, 1_781_093_700.5, 0, -900, 253_402_300_800]
        let medians: [Double?] = [nil, 0, 12.5, 45, 1e-7, 299.99999999999994, 1e15]
        let posted: [Double?] = [nil, 5, 62.5, 0]
        var buckets: [WaitHistoryResponse.Bucket] = []
        for (n, start) in starts.enumerated() {
            for (m, median) in medians.enumerated() {
                buckets.append(.init(start: Date(timeIntervalSince1970: start + Double(m) * 900), reports: median == nil ? 0 : n * 7 + m,
                                     reportedMedian: median, posted: posted[(n + m) % posted.count]))
            }
        }
        try self.agree(WaitHistoryResponse(ride: RideID(rawValue: "cedar-point.millennium-force"), bucketSeconds: 900, buckets: buckets))
        try self.agree(WaitHistoryResponse(ride: RideID(rawValue: "a \"quoted\" ride ü"), bucketSeconds: 3600, buckets: []))
    }

    /// Every ride of the three shipped parks, with counts and without, zones and none; rides
    /// whose every optional value is missing, or present with characters to escape.
    @Test func rideListsAgree() throws {
        for name in ["cedar-point", "kings-island", "six-flags-fiesta-texas"] {
            let data = try Data(contentsOf: TestService.repoRoot.appendingPathComponent("data/parks/\(name).geojson"))
            let definition = try ParkImporter().definition(from: data)
            let rides = definition.rides.enumerated().map { n, ride in
                var wire = RideWire(ride, zone: n % 3 == 0 ? nil : ZoneID(rawValue: ride.id.rawValue))
                wire.myCount = n % 4 == 0 ? nil : n * 7
                return wire
            }
            #expect(rides.contains { $0.stats != nil })
            try self.agree(RideListResponse(park: definition.park.id, rides: rides))
        }
        let bare = RideWire(Ride(id: RideID(rawValue: "p.r"), park: ParkID(rawValue: "p"), name: "R", type: .other, status: .closed), zone: nil)
        var full = bare
        full.name = "Quote \" back\\slash\ttab / ünïcödé 🎢"
        full.land = "Land \"A\""
        full.minHeightCm = 0
        full.maxHeightCm = 195
        full.myCount = 0
        full.zone = ZoneID(rawValue: "p.r")
        full.stats = .init(heightM: 93.3, speedKmh: 149.7, lengthM: 2_010.0, inversions: 0, manufacturer: "Intamin \"AG\"", model: "Giga",
                           opened: 2000, material: "steel", source: "https://en.wikipedia.org/wiki/Millennium_Force")
        try self.agree(RideListResponse(park: ParkID(rawValue: "p"), rides: [bare, full]))
        try self.agree(RideListResponse(park: ParkID(rawValue: "p"), rides: []))
    }

    @Test func friendListsAgree() throws {
        let names = [("ann", "Ann"), ("b", "Quote \" back\\slash\ttab\nnewline \u{1}ctl / ünïcödé 🎢"), ("c", "")]
        var friends: [FriendWire] = []
        for (n, (username, displayName)) in names.enumerated() {
            for (m, t) in [1_781_092_800, 1_781_092_800.75, 0, -1.5, 253_402_300_800].enumerated() {
                friends.append(FriendWire(id: UserID(Int64(n * 10 + m) * (m == 1 ? 1 << 45 : 1)), username: username, displayName: displayName,
                                          since: Date(timeIntervalSince1970: t),
                                          lastSeen: m % 2 == 0 ? Date(timeIntervalSince1970: t + 59.9) : nil, online: m % 3 == 0))
            }
        }
        try self.agree(FriendListResponse(friends: friends))
        try self.agree(FriendListResponse(friends: friends, next: NamePosition(displayName: "Quote \" 🎢", username: "b_c").cursor))
        try self.agree(FriendListResponse(friends: [], next: "\"\\"))
        try self.agree(FriendListResponse(friends: []))
    }

    @Test func leaderboardPagesAgree() throws {
        let users = [UserSummary(id: UserID(3), username: "ann", displayName: "Ann \"🎢\" \u{1}"), UserSummary(id: UserID(1 << 52), username: "b", displayName: "")]
        var entries: [LeaderboardResponse.Entry] = []
        for i in 0..<7 {
            let rank: Int = i == 6 ? 100_006 : i + 1
            let value: Int = 1000 - i * 77
            let entry = LeaderboardEntry(rank: rank, user: users[i % 2], value: value, reachedAt: 1_781_092_800.5 + Double(i))
            entries.append(LeaderboardResponse.Entry(entry))
        }
        let place = LeaderboardPosition(value: 12, reachedAt: 1_781_092_800.25, user: UserID(42))
        try self.agree(LeaderboardResponse(entries: entries, me: entries[2], next: place.cursor))
        try self.agree(LeaderboardResponse(entries: entries, me: nil, next: nil))
        try self.agree(LeaderboardResponse(entries: [], me: entries[0], next: nil))
        try self.agree(LeaderboardResponse(entries: [], me: nil, next: LeaderboardPosition(value: -1, reachedAt: -0.5, user: UserID(0)).cursor))
    }

    @Test func locateAnswersAgree() throws {
        let index = Self.cedarPoint.index
        for (lat, lon, accuracy) in [(41.481656, -82.688132, 5.0), (41.4822, -82.6835, 10), (41.4561, -82.7117, 0), (41.48, -82.68, 0.25)] {
            let position = Coordinate(lat: lat, lon: lon)
            try self.agree(LocateResponse(position: position, accuracy: accuracy, index: index))
        }
        // Names that need escaping, a land and a ride zone (the land without a ride), both crossed
        // by the circle; fractions and negative zero; nothing found.
        func square(_ minLon: Double, _ minLat: Double, _ size: Double) -> MultiPolygon {
            let ring = [Coordinate(lat: minLat, lon: minLon), Coordinate(lat: minLat, lon: minLon + size),
                        Coordinate(lat: minLat + size, lon: minLon + size), Coordinate(lat: minLat + size, lon: minLon),
                        Coordinate(lat: minLat, lon: minLon)]
            return MultiPolygon(polygons: [Polygon(rings: [ring])])
        }
        let odd = Park(id: "p", name: "Quote \" back\\slash\ttab\nnewline \u{1}ctl / slash ünïcödé 🎢", timeZone: "UTC", attribution: nil,
                       boundary: square(0, 0, 0.01))
        let zones = [Zone(id: "p.a", park: "p", kind: .land, name: "Land \"A\"", ride: nil, area: square(0.004, 0.004, 0.002)),
                     Zone(id: "p.b", park: "p", kind: .ride, name: "Ride", ride: "p.b", area: square(0.006, 0.004, 0.002))]
        let oddIndex = try FenceIndex(parks: [odd], zones: zones, replicas: 1)
        let crossing = LocateResponse(position: Coordinate(lat: 0.005, lon: 0.0059), accuracy: 20, index: oddIndex)
        #expect(oddIndex.hits(crossing.matches).first?.zones.map(\.id) == ["p.a", "p.b"])
        try self.agree(crossing)
        try self.agree(LocateResponse(position: Coordinate(lat: 0.005, lon: 0.005), accuracy: 0, index: oddIndex))
        try self.agree(LocateResponse(position: Coordinate(lat: -0.0, lon: 179.999999), accuracy: 1e-3, index: oddIndex))
        try self.agree(LocateResponse(position: Coordinate(lat: 12.5, lon: -1e-7), accuracy: 5_000, index: index))
        // Two parks in one answer: each park's zones close before the next park opens.
        let twoParks = try FenceIndex(parks: [odd, Park(id: "q", name: "Q", timeZone: "UTC", attribution: nil, boundary: square(0.004, 0.004, 0.004))],
                                      zones: zones, replicas: 1)
        let both = LocateResponse(position: Coordinate(lat: 0.005, lon: 0.0059), accuracy: 20, index: twoParks)
        #expect(twoParks.hits(both.matches).map(\.id) == ["p", "q"] || twoParks.hits(both.matches).map(\.id) == ["q", "p"])
        try self.agree(both)
    }

    @Test func fixAnswersAgree() throws {
        let at = Date(timeIntervalSince1970: 1_795_000_000.75)
        let fixes = [
            IncomingFix(clientID: "a\"1", lat: 41.48, lon: -82.68, accuracy: 8, recordedAt: at),
            IncomingFix(lat: 41.48, lon: -82.68, accuracy: 8, recordedAt: at.addingTimeInterval(-30)),
            IncomingFix(clientID: "c", lat: 91, lon: 0, accuracy: 8, recordedAt: at),
            IncomingFix(lat: 41.48, lon: -82.68, accuracy: 8, recordedAt: at.addingTimeInterval(5)),
        ]
        let transitions = [
            Transition(event: .enter, park: "cedar-point", at: at),
            Transition(event: .enter, park: "cedar-point", zone: "cedar-point.mf", zoneKind: .ride, ride: "cedar-point.millennium-force", at: at),
            Transition(event: .exit, park: "cedar-point", zone: "cedar-point.land", zoneKind: .land, at: at.addingTimeInterval(0.999)),
        ]
        let results = [
            FixResult(decision: .accepted(current: true, transitions: transitions), replayed: false),
            FixResult(decision: .accepted(current: false, transitions: []), replayed: false),
            FixResult(decision: .rejected(.invalidCoordinates), replayed: false),
            FixResult(decision: .accepted(current: true, transitions: []), replayed: true),
        ]
        try self.agree(FixesResponse(fixes: fixes, results: results))
        try self.agree(FixesResponse(fixes: [], results: []))
    }

    @Test func nearbyAnswersAgree() throws {
        let index = Self.cedarPoint.index
        let park = Self.cedarPoint.definition.park.id
        let zone = try #require(Self.cedarPoint.definition.zones.first { $0.kind == .land }?.id)
        let ride = try #require(Self.cedarPoint.definition.zones.first { $0.kind == .ride }?.id)
        let people = [
            NearbyPerson(id: UserID(1), username: "ada", displayName: "Ada \"the\" Rider", distance: 10, age: 60, precision: .exact, park: park, zone: zone),
            NearbyPerson(id: UserID(2), username: "bo", displayName: "Bø", distance: 350, age: 0, precision: .approximate, park: park, zone: nil),
            NearbyPerson(id: UserID(3), username: "cy", displayName: "", distance: nil, age: 7_200, precision: .parkOnly, park: park, zone: nil),
            NearbyPerson(id: UserID(4), username: "di", displayName: "Di", distance: 2_500, age: 120, precision: .exact, park: nil, zone: nil),
            NearbyPerson(id: UserID(5), username: "ed", displayName: "Ed\\", distance: 20, age: 0, precision: .exact, park: park, zone: ride),
            // A park the index does not know, between two that it does: no park, and the next one's name again.
            NearbyPerson(id: UserID(6), username: "fy", displayName: "Fy", distance: 30, age: 0, precision: .exact, park: ParkID(rawValue: "gone"), zone: nil),
            NearbyPerson(id: UserID(7), username: "gu", displayName: "Gu", distance: 40, age: 0, precision: .exact, park: park, zone: nil),
            // Numbers in every form the writer has, and names at their longest once escaped.
            NearbyPerson(id: UserID(9_007_199_254_740_993), username: String(repeating: "\u{1}", count: 40),
                         displayName: String(repeating: "\"\\\u{1F}", count: 30), distance: 12.75, age: 59_940, precision: .exact, park: park, zone: ride),
            NearbyPerson(id: UserID(8), username: "hy", displayName: String(repeating: "Ω", count: 50), distance: 1e-7, age: 0, precision: .approximate,
                         park: park, zone: nil),
            NearbyPerson(id: UserID(-8), username: "iz", displayName: "Iz", distance: -0.0, age: 0, precision: .exact, park: park, zone: zone),
        ]
        try self.agree(NearbyResponse(radius: 500, people: people, index: index))
        try self.agree(NearbyResponse(radius: nil, people: people, index: index))
        try self.agree(NearbyResponse(radius: 12.5, people: [], index: index))
    }

    /// A zone the rules found by its place in the index is written from that place; a place
    /// marked in another index (a park import since) is not trusted: the zone is found by its id.
    @Test func nearbyZonesWrittenByTheirMarks() throws {
        let index = Self.cedarPoint.index
        let park = Self.cedarPoint.definition.park.id
        let zones = Self.cedarPoint.definition.zones.map(\.id)
        let other = try FenceIndex(parks: [Self.cedarPoint.definition.park], zones: Self.cedarPoint.definition.zones.reversed(), replicas: 1)
        var people: [NearbyPerson] = []
        for (i, zone) in zones.prefix(12).enumerated() {
            let here = try #require(index.zonePosition(zone)), there = try #require(other.zonePosition(zone))
            #expect(here != there || zones.count == 1)
            var person = NearbyPerson(id: UserID(Int64(i + 1)), username: "u\(i)", displayName: "U", distance: 10, age: 0, precision: .exact,
                                      park: park, zone: zone)
            // Marked here, marked in the other index (its place there names another zone here), unmarked.
            person.zoneMark = i % 3 == 0 ? ZoneMark(position: here, in: index) : i % 3 == 1 ? ZoneMark(position: there, in: other) : .unmarked
            people.append(person)
        }
        try self.agree(NearbyResponse(radius: 500, people: people, index: index))
    }

    /// Names that need escaping, in the park and zone parts written once per index.
    @Test func nearbyPlacesWithAwkwardNamesAgree() throws {
        let square = MultiPolygon(polygons: [Polygon(rings: [[Coordinate(lat: 0, lon: 0), Coordinate(lat: 0, lon: 0.01), Coordinate(lat: 0.01, lon: 0.01),
                                                               Coordinate(lat: 0.01, lon: 0), Coordinate(lat: 0, lon: 0)]])])
        let park = ParkID(rawValue: "odd-park")
        let ride = RideID(park: park, slug: "quote")
        let zones = [
            Zone(id: ZoneID(rawValue: "odd-park/land"), park: park, kind: .land, name: "Land\tof \"Tabs\"", ride: nil, area: square),
            Zone(id: ZoneID(rawValue: ride.rawValue), park: park, kind: .ride, name: "Back\\slash \u{1}Ride Ω", ride: ride, area: square),
        ]
        let index = try FenceIndex(parks: [Park(id: park, name: "Park \"Q\"\n", timeZone: "UTC", attribution: nil, boundary: square)],
                                   zones: zones, replicas: 1)
        let people = zones.enumerated().map { i, zone in
            NearbyPerson(id: UserID(Int64(i + 1)), username: "u\(i)", displayName: "U", distance: 10, age: 0, precision: .exact, park: park, zone: zone.id)
        }
        try self.agree(NearbyResponse(radius: 500, people: people, index: index))
    }
}
