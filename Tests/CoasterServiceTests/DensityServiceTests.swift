import CoasterCore
import CoasterService
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
        let density = Density(store: try await openStore(directory.appendingPathComponent("d.sqlite").path), now: { now })
        await #expect(throws: DensityError.badDay(.noSuchDay("2026-02-30"))) { try await density.day(park: "nowhere", day: "2026-02-30") }
        await #expect(throws: DensityError.badDay(.malformed)) { try await density.day(park: "nowhere", day: "2026-7-4") }
        await #expect(throws: DensityError.badDay(.inTheFuture)) { try await density.day(park: "nowhere", day: "2026-07-07") }
        await #expect(throws: DensityError.noSuchPark("nowhere")) { try await density.day(park: "nowhere", day: "2026-07-06") }
        await #expect(throws: DensityError.noSuchPark("nowhere")) { try await density.day(park: "nowhere", day: "2026-07-04") }
    }
}
