import CoasterCore
import CoasterService
import Foundation
import Testing

@Suite("Live messages")
struct LiveMessageTests {
    /// A friend's location as the live connection pushes it: exactly where shared exactly, at the
    /// approximate cell's centre where shared approximately, and for park-only sharing the parks
    /// alone, with no coordinate at all; never the friend's own position past what they share.
    @Test func aLocationCarriesOnlyWhatIsShared() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let position = Coordinate(lat: 41.481656, lon: -82.688132)
        let fix = AcceptedFix(position: position, accuracy: 7, recordedAt: now.addingTimeInterval(-30))
        let privacy = LocationPrivacy()
        func pushed(_ precision: Precision) throws -> [String: Any] {
            let person = PersonState(id: UserID(2), username: "bob", displayName: "Bob", latest: fix, visits: ["cedar-point": now],
                                     sharing: SharingSettings(precision: precision), friends: [UserID(1)])
            let shared = try #require(privacy.view(fix, sharing: person.sharing, visiting: person.visiting(at: now, timeout: 3600),
                                                   viewerVisiting: ["cedar-point"], viewer: UserID(1), relationship: .friends, now: now))
            let text = LiveMessage.location(user: person, shared: shared, at: fix.recordedAt, park: nil, zone: nil).json
            return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        }
        let exact = try pushed(.exact)
        #expect(exact["precision"] as? String == "exact")
        #expect(exact["lat"] as? Double == position.lat && exact["lon"] as? Double == position.lon)

        let approximate = try pushed(.approximate)
        let cell = ApproximateGrid.snap(position)
        #expect(approximate["precision"] as? String == "approximate")
        // Within JSON's rounding of the cell centre, and a cell's size away from the friend.
        let shown = Coordinate(lat: approximate["lat"] as? Double ?? 0, lon: approximate["lon"] as? Double ?? 0)
        #expect(Geodesy.distance(shown, cell) < 0.01)
        #expect(Geodesy.distance(shown, position) > 10)
        #expect((approximate["accuracy"] as? Double ?? 0) >= ApproximateGrid.cellRadius.rounded(.down))

        let parkOnly = try pushed(.parkOnly)
        #expect(parkOnly["precision"] as? String == "park-only")
        #expect(parkOnly["parks"] as? [String] == ["cedar-point"])
        #expect(parkOnly["lat"] == nil && parkOnly["lon"] == nil && parkOnly["accuracy"] == nil)
        #expect((parkOnly["user"] as? [String: Any])?["username"] as? String == "bob")
    }
}
