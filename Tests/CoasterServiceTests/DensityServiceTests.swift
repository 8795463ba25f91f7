import CoasterCore
import CoasterService
import CoasterStore
import Foundation
import Testing

/// The density map's use case: a bad day is bad input whatever the park, an unknown park is none.
@Suite("Density service")
struct DensityServiceTests {
    @Test func aBadDayOrAnUnknownParkIsATypedError() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coasterlife-density-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let now = Date(timeIntervalSince1970: 1_783_209_600)  // 2026-07-05T00:00:00Z
        let density = Density(store: try await openStore(directory.appendingPathComponent("d.sqlite").path), privacy: LocationPrivacy(), now: { now })
        await #expect(throws: DensityError.badDay(.noSuchDay("2026-02-30"))) { try await density.day(park: "nowhere", day: "2026-02-30") }
        await #expect(throws: DensityError.badDay(.malformed)) { try await density.day(park: "nowhere", day: "2026-7-4") }
        await #expect(throws: DensityError.badDay(.inTheFuture)) { try await density.day(park: "nowhere", day: "2026-07-07") }
        await #expect(throws: DensityError.noSuchPark("nowhere")) { try await density.day(park: "nowhere", day: "2026-07-06") }
        await #expect(throws: DensityError.noSuchPark("nowhere")) { try await density.day(park: "nowhere", day: "2026-07-04") }
    }

    /// Today is counted up to the privacy rule's end of the past (now less the time-to-live of a
    /// place), yesterday whole.
    @Test func todayIsCountedUpToWhatThePrivacyRuleLetsAnyoneLearn() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coasterlife-density-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try await openStore(directory.appendingPathComponent("d.sqlite").path)
        let ring = [(0.0, 0.0), (0.01, 0.0), (0.01, 0.01), (0.0, 0.01), (0.0, 0.0)].map { Coordinate(lat: $0.1 + 41, lon: $0.0 - 82) }
        _ = try await store.replaceParks([ParkDefinition(
            park: Park(id: "square", name: "Square", timeZone: "UTC", attribution: nil, boundary: MultiPolygon(polygons: [Polygon(rings: [ring])])),
            zones: [], rides: [])])
        let now = Date(timeIntervalSince1970: 1_783_166_400)  // 2026-07-04T12:00:00Z
        var privacy = LocationPrivacy()
        privacy.timeToLive = 3 * 3600
        let density = Density(store: store, privacy: privacy, now: { now })
        let today = try await density.day(park: "square", day: "2026-07-04")
        #expect(today.heldBack && today.readUntil == now.addingTimeInterval(-3 * 3600))
        let yesterday = try await density.day(park: "square", day: "2026-07-03")
        #expect(!yesterday.heldBack && yesterday.isComplete)
    }
}
