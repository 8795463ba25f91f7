import Foundation

/// The coarse grid of `approximate` sharing: cells of about 1 km, fixed on the globe so that a
/// position always snaps to the same cell centre, whoever asks and from wherever.
public enum ApproximateGrid {
    /// Cell height in degrees of latitude (about 1 km).
    public static let latitudeStep = 0.009

    /// The centre of the cell holding `c`.
    public static func snap(_ c: Coordinate) -> Coordinate {
        let row = (c.lat / latitudeStep).rounded(.down)
        let lat = min(89.99, max(-89.99, (row + 0.5) * latitudeStep))
        let lonStep = latitudeStep / max(0.01, cos(lat * Double.pi / 180))
        let column = (c.lon / lonStep).rounded(.down)
        return Coordinate(lat: lat, lon: Geodesy.normalizedLongitude((column + 0.5) * lonStep))
    }

    /// Metres from a cell's centre to its corner: the most a snapped position can be off.
    public static let cellRadius = 0.5 * (2.0).squareRoot() * latitudeStep * 111_320
}

/// A friend's position as one viewer may see it.
public enum SharedLocation: Hashable, Sendable {
    /// As reported, with its accuracy (metres).
    case exact(Coordinate, accuracy: Double)
    /// Snapped to the ``ApproximateGrid`` centre; `accuracy` is the cell radius.
    case approximate(Coordinate, accuracy: Double)
    /// Only the parks the friend is visiting.
    case parkOnly(Set<ParkID>)

    /// The position a viewer may compute with, or `nil` for park-only.
    public var coordinate: Coordinate? {
        switch self {
        case .exact(let c, _), .approximate(let c, _): c
        case .parkOnly: nil
        }
    }
}

/// The rules that decide what a viewer sees of another user's location. Every location answer of
/// the service goes through ``view(_:sharing:visiting:viewer:relationship:now:)``.
public struct LocationPrivacy: Hashable, Sendable {
    /// Locations older than this (seconds) are never shown.
    public var timeToLive: TimeInterval = 2 * 3600

    public init() {}

    /// When others may learn that a user was at a place at `at` (a ride log that checks a list
    /// item, the visit behind a post's "I was there"): once it is older than the time-to-live, so
    /// that no record of the past tells where someone is now. The one rule for every such answer.
    public func placeShownAt(_ at: Date) -> Date { at.addingTimeInterval(self.timeToLive) }

    /// Whether a place `viewer` did not witness, reached at `at`, may be shown at `now`
    /// (``placeShownAt(_:)``).
    public func revealsPlace(at: Date, now: Date) -> Bool { now >= self.placeShownAt(at) }

    /// The end of the past whose places may be shown at `now`, even counted among others (a park's
    /// density map): everything before it, nothing from it on (``placeShownAt(_:)`` inverted).
    public func placesShownBefore(_ now: Date) -> Date { now.addingTimeInterval(-self.timeToLive) }

    /// What `viewer` sees of a user whose latest accepted fix is `fix`, or `nil` for nothing: the
    /// one rule behind every answer and push that reveals where someone is or was.
    ///
    /// - Accepted friends see the user as their sharing allows them (per-friend overrides).
    /// - Anyone else sees nothing, except a user who opted in to being `discoverable`: they are
    ///   shown to people visiting one of the same parks, never more precisely than approximate.
    /// - Ghost mode, per-friend hiding and staleness hide everything.
    /// - Park-only sharing reveals a park only to a viewer visiting it too, and only that park.
    ///
    /// Approximate positions are snapped here, before anyone computes a distance from them.
    /// `visiting` (the parks the user is on a visit to) and `viewerVisiting` (the viewer's) are
    /// evaluated only where the answer depends on them.
    public func view(_ fix: AcceptedFix?, sharing: SharingSettings, discoverable: Bool = false, visiting: @autoclosure () -> Set<ParkID>,
                     viewerVisiting: @autoclosure () -> Set<ParkID>, viewer: UserID, relationship: Relationship, now: Date) -> SharedLocation? {
        guard let fix, now.timeIntervalSince(fix.recordedAt) <= self.timeToLive else { return nil }
        let precision: Precision
        switch relationship {
        case .friends:
            guard let shown = sharing.visibility(to: viewer, at: now) else { return nil }
            precision = shown
        case .none:
            guard discoverable, !sharing.ghost.isHidden(at: now) else { return nil }
            let together = visiting().intersection(viewerVisiting())
            guard !together.isEmpty else { return nil }
            return sharing.precision == .parkOnly ? .parkOnly(together)
                : .approximate(ApproximateGrid.snap(fix.position), accuracy: ApproximateGrid.cellRadius)
        case .requestSent, .requestReceived, .blocking, .blockedBy:
            return nil
        }
        switch precision {
        case .exact: return .exact(fix.position, accuracy: fix.accuracy)
        case .approximate: return .approximate(ApproximateGrid.snap(fix.position), accuracy: ApproximateGrid.cellRadius)
        case .parkOnly:
            let together = visiting().intersection(viewerVisiting())
            return together.isEmpty ? nil : .parkOnly(together)
        }
    }
}
