import Foundation

/// A GPS fix as a client sent it.
public struct IncomingFix: Hashable, Sendable {
    /// The client's id for this fix; a retry with the same id is answered, not stored twice.
    public var clientID: String?
    public var lat: Double
    public var lon: Double
    /// Horizontal accuracy radius, metres; `nil` when the device did not say.
    public var accuracy: Double?
    /// When the device took the fix.
    public var recordedAt: Date
    /// Metres per second, as the device reports it.
    public var speed: Double?
    /// Metres above the WGS84 ellipsoid or sea level, as the device reports it.
    public var altitude: Double?

    public init(clientID: String? = nil, lat: Double, lon: Double, accuracy: Double?, recordedAt: Date, speed: Double? = nil, altitude: Double? = nil) {
        self.clientID = clientID
        self.lat = lat
        self.lon = lon
        self.accuracy = accuracy
        self.recordedAt = recordedAt
        self.speed = speed
        self.altitude = altitude
    }
}

/// An accepted fix: what later decisions compare against.
public struct AcceptedFix: Hashable, Sendable {
    public var position: Coordinate
    /// Metres.
    public var accuracy: Double
    public var recordedAt: Date

    public init(position: Coordinate, accuracy: Double, recordedAt: Date) {
        self.position = position
        self.accuracy = accuracy
        self.recordedAt = recordedAt
    }
}

/// Why a fix was not accepted. The raw values are the stable reason codes of the API.
public enum FixRejection: String, Error, Sendable, CaseIterable, Codable {
    /// Latitude or longitude not finite or out of range.
    case invalidCoordinates = "invalid_coordinates"
    /// No accuracy, or a negative or non-finite one.
    case accuracyMissing = "accuracy_missing"
    /// Accuracy radius worse than the bound.
    case accuracyTooLow = "accuracy_too_low"
    /// Recorded further in the future than clock skew explains.
    case inFuture = "in_future"
    /// Recorded before the live window.
    case tooOld = "too_old"
    /// Reaching it from the previous accepted fix needs a speed no visitor reaches.
    case tooFast = "too_fast"
    /// The same time and position as a fix already accepted.
    case duplicate = "duplicate"
}

/// The plausibility bounds of the fix pipeline; every one is configurable.
public struct FixPolicy: Hashable, Sendable {
    /// Fixes with a larger accuracy radius (metres) are refused.
    public var maximumAccuracy: Double = 100
    /// How far in the future (seconds) a device clock may be.
    public var clockSkew: TimeInterval = 120
    /// Fixes recorded longer ago than this (seconds) are refused: a phone that was offline uploads
    /// its backlog, but a day-old position says nothing about today.
    public var liveWindow: TimeInterval = 12 * 3600
    /// Implied speed (km/h) from the previous accepted fix above which a fix is refused.
    public var maximumSpeedKmh: Double = 250
    /// After this long (seconds) without a fix, the previous fence state is forgotten: a new fix
    /// inside a park enters it again (and a stale visit ends at its last evidence).
    public var stateTimeout: TimeInterval = 12 * 3600

    public init() {}
}

/// A crossing of a park or zone boundary (Tile38's vocabulary).
public struct Transition: Hashable, Sendable {
    public enum Event: String, Hashable, Sendable, Codable {
        case enter, exit
    }

    public var event: Event
    public var park: ParkID
    /// `nil` when the park itself was entered or left.
    public var zone: ZoneID?
    public var zoneKind: ZoneKind?
    public var ride: RideID?
    /// The recorded time of the fix that caused it.
    public var at: Date

    public init(event: Event, park: ParkID, zone: ZoneID? = nil, zoneKind: ZoneKind? = nil, ride: RideID? = nil, at: Date) {
        self.event = event
        self.park = park
        self.zone = zone
        self.zoneKind = zoneKind
        self.ride = ride
        self.at = at
    }
}

/// What the pipeline remembers of one user between fixes.
public struct TrackState: Hashable, Sendable {
    /// The newest accepted fix by recorded time.
    public var latest: AcceptedFix?
    /// Parks the user is considered inside.
    public var parks: Set<ParkID>
    /// Zones the user is considered inside.
    public var zones: Set<ZoneID>

    public init(latest: AcceptedFix? = nil, parks: Set<ParkID> = [], zones: Set<ZoneID> = []) {
        self.latest = latest
        self.parks = parks
        self.zones = zones
    }
}

/// The decision for one fix.
public enum FixDecision: Hashable, Sendable {
    /// Accepted. `current` is false for an out-of-order fix: stored as history, the position and
    /// fence state do not move.
    case accepted(current: Bool, transitions: [Transition])
    case rejected(FixRejection)
}

/// Decides fixes: plausibility first, then enter/exit against the fence index.
///
/// A fix is evidence, not truth. Its accuracy circle is located against parks and zones: an
/// `inside` answer enters, an `outside` answer exits, and `uncertain` changes nothing
/// (docs: FixesAndVisits).
public struct FixPipeline: Sendable {
    public var policy: FixPolicy

    public init(policy: FixPolicy = FixPolicy()) {
        self.policy = policy
    }

    /// The plausibility checks alone, in the order the reasons are listed.
    public func assess(_ fix: IncomingFix, previous: AcceptedFix?, now: Date) -> Result<AcceptedFix, FixRejection> {
        guard let position = try? Coordinate.validated(lat: fix.lat, lon: fix.lon) else { return .failure(.invalidCoordinates) }
        guard let accuracy = fix.accuracy, accuracy.isFinite, accuracy >= 0 else { return .failure(.accuracyMissing) }
        guard accuracy <= self.policy.maximumAccuracy else { return .failure(.accuracyTooLow) }
        guard fix.recordedAt.timeIntervalSince(now) <= self.policy.clockSkew else { return .failure(.inFuture) }
        guard now.timeIntervalSince(fix.recordedAt) <= self.policy.liveWindow else { return .failure(.tooOld) }
        let accepted = AcceptedFix(position: position, accuracy: accuracy, recordedAt: fix.recordedAt)
        if let previous {
            if previous.recordedAt == accepted.recordedAt && previous.position == accepted.position {
                return .failure(.duplicate)
            }
            if self.impliedSpeedKmh(from: previous, to: accepted) > self.policy.maximumSpeedKmh {
                return .failure(.tooFast)
            }
        }
        return .success(accepted)
    }

    /// Speed (km/h) needed to go from one fix to the other. Both accuracy radii are taken off the
    /// distance first, so a standing phone whose fixes jitter within their accuracy is not "fast".
    public func impliedSpeedKmh(from a: AcceptedFix, to b: AcceptedFix) -> Double {
        let distance = max(0, Geodesy.distance(a.position, b.position) - a.accuracy - b.accuracy)
        guard distance > 0 else { return 0 }
        let seconds = abs(b.recordedAt.timeIntervalSince(a.recordedAt))
        guard seconds > 0 else { return .infinity }
        return distance / seconds * 3.6
    }

    /// Decides one fix and updates `state`.
    public func process(_ fix: IncomingFix, state: inout TrackState, index: FenceIndex, now: Date) -> FixDecision {
        let accepted: AcceptedFix
        switch self.assess(fix, previous: state.latest, now: now) {
        case .failure(let reason): return .rejected(reason)
        case .success(let a): accepted = a
        }
        if let latest = state.latest, accepted.recordedAt < latest.recordedAt {
            return .accepted(current: false, transitions: [])
        }
        if let latest = state.latest, accepted.recordedAt.timeIntervalSince(latest.recordedAt) > self.policy.stateTimeout {
            state.parks = []
            state.zones = []
        }
        let matches = index.matches(accepted.position, accuracy: accepted.accuracy)
        let transitions = Self.transitions(from: &state, matches: matches, at: accepted.recordedAt, index: index)
        state.latest = accepted
        return .accepted(current: true, transitions: transitions)
    }

    /// Enter what is certainly inside, exit what is certainly outside, keep the rest.
    static func transitions(from state: inout TrackState, matches: FenceMatches, at time: Date, index: FenceIndex) -> [Transition] {
        var out: [Transition] = []
        var touchedParks: Set<ParkID> = []
        var touchedZones: Set<ZoneID> = []
        index.forEach(matches) { park, containment in
            touchedParks.insert(park)
            if containment == .inside, state.parks.insert(park).inserted {
                out.append(Transition(event: .enter, park: park, at: time))
            }
        } zone: { park, zone, kind, ride, containment in
            touchedZones.insert(zone)
            if containment == .inside, state.zones.insert(zone).inserted {
                out.append(Transition(event: .enter, park: park, zone: zone, zoneKind: kind, ride: ride, at: time))
            }
        }
        // Zones first, then their park: an exit reads inside-out.
        for zone in state.zones.subtracting(touchedZones).sorted() {
            state.zones.remove(zone)
            let info = index.zone(zone)
            out.append(Transition(event: .exit, park: info?.park ?? ParkID(rawValue: String(zone.rawValue.prefix { $0 != "." })),
                                  zone: zone, zoneKind: info?.kind, ride: info?.ride, at: time))
        }
        for park in state.parks.subtracting(touchedParks).sorted() {
            state.parks.remove(park)
            out.append(Transition(event: .exit, park: park, at: time))
        }
        return out
    }
}

/// What rules on each fix a store records: the fix pipeline over the fences in force
/// (``FixPipeline/process(_:state:index:now:)``), moving `state` on for an accepted fix.
public typealias FixDecider = @Sendable (_ fix: IncomingFix, _ state: inout TrackState, _ now: Date) -> FixDecision
