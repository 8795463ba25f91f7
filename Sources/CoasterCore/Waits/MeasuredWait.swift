import Foundation

/// A wait the fences timed: a rider's enter into a ride's queue zone, then their enter into the
/// ride's own zone (boarding), with no boarding of that ride between (docs: Waits).
public enum MeasuredWait {
    /// How far back a queue enter is looked for before boarding.
    public static let lookback: TimeInterval = 3 * 3600
    /// Shorter than this is walking through the queue's zone, not waiting in it.
    public static let shortest: Double = 0.5
    /// Longer than this is a phone left in the queue's zone, not a wait.
    public static let longest: Double = 300

    /// The minutes waited between joining the queue at `queuedAt` and boarding at `boardedAt`
    /// (seconds since 1970), if the pair is a wait: the rider did not board in between, and the
    /// time is within ``shortest``…``longest`` minutes.
    public static func minutes(queuedAt: Double, boardedAt: Double, boardingsBetween: Int) -> Double? {
        let minutes = (boardedAt - queuedAt) / 60
        guard boardingsBetween == 0, minutes >= Self.shortest, minutes <= Self.longest else { return nil }
        return minutes
    }
}
