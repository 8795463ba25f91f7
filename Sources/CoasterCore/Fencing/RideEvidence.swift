import Foundation

/// What stands behind a logged ride. A ride log is the currency of counts, leaderboards, badges,
/// challenges and lists; each one says how close the geofences put its rider to the ride.
public enum RideEvidence: String, Sendable, Codable, CaseIterable, NamedCases {
    /// The rider's accepted fixes put them in the ride's zone or its queue within
    /// ``RideLogPolicy/atRideWindow`` of the log.
    case atRide = "at-ride"
    /// On an open visit to the ride's park, with no fix at the ride.
    case inPark = "in-park"
}

/// When a ride may be logged (docs: FixesAndVisits, "Ride logs").
public struct RideLogPolicy: Hashable, Sendable {
    /// A brisk walk, metres a second (6.5 km/h): faster than a crowd moves along a midway, so a
    /// rider who hurried from one ride to the next is never refused.
    public var briskPace: Double = 1.8
    /// How recent a fix in the ride's zone or queue must be for the log to count as `at-ride`:
    /// long enough for the queue of a popular coaster, where phones often send nothing.
    public var atRideWindow: TimeInterval = 45 * 60

    public init() {}

    /// Seconds that must pass after riding `previous` before another ride can be logged: its
    /// cycle (boarding to boarding), then the walk to the next ride at ``briskPace``.
    public func gap(after previous: Ride, walk metres: Double) -> TimeInterval {
        previous.cooldown + max(0, metres) / self.briskPace
    }

    /// Metres between two footprints, 0 where they touch: the shortest walk from one to the other,
    /// measured on a local plane around the first (rides of a park lie within a few kilometres, where
    /// the plane is exact to centimetres). `nil` when a footprint cannot be measured.
    public static func walk(from a: MultiPolygon, to b: MultiPolygon) -> Double? {
        guard let origin = a.boundingBox?.center else { return nil }
        let plane = Geodesy.LocalPlane(origin: origin)
        let context = GEOSContext()
        do {
            return try context.geometry(plane.project(a)).distance(context.geometry(plane.project(b)))
        } catch {
            return nil
        }
    }
}
