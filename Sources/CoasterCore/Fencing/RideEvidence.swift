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

    /// Whether `ride` may be logged now, its sequence after the rider's last log aside: it must be
    /// listed as operating, nobody's word may say it is down or closed (the live status; only such
    /// a word refuses a log), and the rider must be on a visit to its park. Each fact is read only
    /// once the ones before it allow the log.
    /// - Returns: the rider's open visit to the ride's park, or why the log is refused.
    public func admits(_ ride: Ride, live: () throws -> RideLiveState, visit: () throws -> Visit?) rethrows -> Result<Visit, RideLogRefusal> {
        guard ride.status == .operating else { return .failure(.notOperating(ride.status)) }
        let state = try live()
        if state.status == .down || state.status == .closed { return .failure(.reported(state)) }
        guard let open = try visit() else { return .failure(.notCheckedIn) }
        return .success(open)
    }

    /// Why `next` cannot be logged yet, `sinceLast` seconds after the rider's last logged ride
    /// `previous` with `walk` metres between their footprints: the same ride again within its
    /// cycle is a cooldown; another ride before the first's cycle and the walk is a sequence no
    /// rider can make. `nil` when it can be logged.
    public func refusal(next: Ride, after previous: Ride, walk: Double, sinceLast: TimeInterval) -> RideLogRefusal? {
        let wait = self.gap(after: previous, walk: walk) - sinceLast
        guard wait > 0 else { return nil }
        return previous.id == next.id
            ? .cooldown(retryAfter: wait)
            : .impossibleSequence(after: previous.id, afterName: previous.name, walk: walk, retryAfter: wait)
    }

    /// What stands behind a log at `now` (seconds since 1970) whose rider's last accepted fix in
    /// the ride's zone or queue was at `lastFixAtRide` (`nil`: none on this visit).
    public func evidence(lastFixAtRide: Double?, now: Double) -> RideEvidence {
        guard let lastFixAtRide else { return .inPark }
        return lastFixAtRide >= now - self.atRideWindow ? .atRide : .inPark
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
