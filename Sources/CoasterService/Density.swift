import CoasterCore
import CoasterStore
import Foundation

/// A park's density map for its admins: where people were on one day of the park's calendar,
/// by cell, never a person (``DensityRules``, ``DensityStore``).
public struct Density: Sendable {
    public let store: any Store
    public let rules: DensityRules
    public let now: @Sendable () -> Date

    public init(store: any Store, rules: DensityRules = DensityRules(), now: @escaping @Sendable () -> Date = Date.init) {
        self.store = store
        self.rules = rules
        self.now = now
    }

    /// The map of `park` on `day` (`YYYY-MM-DD`, a day of the park's own calendar).
    /// - Throws: ``DensityError/badDay(_:)`` for a day that is not `YYYY-MM-DD`, no day of the
    ///   calendar, more than ``DensityRules/daysBack`` days back or after tomorrow (checked
    ///   before the park is looked up); ``DensityError/noSuchPark(_:)``; the store's errors.
    public func day(park: ParkID, day text: String) async throws -> ParkDensity {
        let day: CalendarDay
        do {
            day = try self.rules.day(text, now: self.now())
        } catch {
            throw DensityError.badDay(error)
        }
        guard let density = try await self.store.density(of: park, on: day, rules: self.rules) else {
            throw DensityError.noSuchPark(park)
        }
        return density
    }
}
