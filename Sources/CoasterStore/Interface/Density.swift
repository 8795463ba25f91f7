import CoasterCore
import Foundation

/// A park's density map: accepted fixes and explicit check-ins counted by cell of the park's grid
/// over one day of its calendar (``DensityRules``). Counting is the database's (grouped in SQL);
/// a cell with fewer than ``DensityRules/minimumPeople`` distinct people never leaves it.
///
/// What is counted, on both stores alike:
/// - fixes recorded in the day (the park's time zone) before `before`;
/// - explicit check-ins (visits of how `explicit`) made at the park in the day before `before`,
///   each at the rider's newest fix from ``DensityRules/checkinFixBefore`` before it to
///   ``DensityRules/checkinFixAfter`` after it (the fix it was decided on);
/// - in whole cells whose square touches the park (its boundary, not its box): a park drawn as an
///   L shows nothing in the corner its box has and it does not, and a cell the boundary crosses
///   counts what lies outside the park too, so that no edge moved within a cell (the park loaded
///   again, another park over the same ground) changes a count, and no difference of two
///   answers isolates a strip narrower than a cell.
///
/// The day's fixes are read by recorded time, at most ``DensityRules/maximumFixesRead`` of
/// them; past that the answer ends early and says when (``ParkDensity/readUntil``).
public protocol DensityStore: Sendable {
    /// The density of `park` on `day` from what was recorded before `before` (the privacy rule's
    /// end of the past: ``LocationPrivacy/placesShownBefore(_:)``), or `nil` if there is no such
    /// park; one read, one snapshot.
    func density(of park: ParkID, on day: CalendarDay, before: Date, rules: DensityRules) async throws -> ParkDensity?
}
