import CoasterCore
import Foundation

extension RideStatusChange {
    /// The change a crowd report at `crowdAt` made, if any.
    init?(ride: RideID, name: String, _ before: RideLiveState, _ after: RideLiveState, crowdAt: Date) {
        guard before != after else { return nil }
        self.init(ride: ride, name: name, previous: before, current: after, at: crowdAt)
    }
}

extension AcceptedReport {
    init(at: Date) { self.init(at: at, verdict: nil, statusChange: nil) }
}
