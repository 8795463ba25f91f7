import CoasterCore
import CoasterStore
import Foundation

/// A park's density map for its admins: where people were on one day of the park's calendar,
/// by cell, never a person (``DensityRules``, ``DensityStore``).
public struct Density: Sendable {
    public let store: any Store
    public let privacy: LocationPrivacy
    public let rules: DensityRules
    public let now: @Sendable () -> Date

    public init(store: any Store, privacy: LocationPrivacy, rules: DensityRules = DensityRules(), now: @escaping @Sendable () -> Date = Date.init) {
        self.store = store
        self.privacy = privacy
        self.rules = rules
        self.now = now
    }

    /// The map of `park` on `day` (`YYYY-MM-DD`, a day of the park's own calendar), from what
    /// the privacy rule lets anyone learn now (``LocationPrivacy/placesShownBefore(_:)``): today's
    /// latest hours are counted once they are as old as a place others may see.
    /// - Throws: ``DensityError/badDay(_:)`` for a day that is not `YYYY-MM-DD`, no day of the
    ///   calendar, more than ``DensityRules/daysBack`` days back or after tomorrow (checked
    ///   before the park is looked up); ``DensityError/noSuchPark(_:)``; the store's errors.
    public func day(park: ParkID, day text: String) async throws -> ParkDensity {
        let now = self.now()
        let day: CalendarDay
        do {
            day = try self.rules.day(text, now: now)
        } catch {
            throw DensityError.badDay(error)
        }
        guard let density = try await self.store.density(of: park, on: day, before: self.privacy.placesShownBefore(now), rules: self.rules) else {
            throw DensityError.noSuchPark(park)
        }
        return density
    }
}
