import CoasterCore
import CoasterHTTP
import CoasterService
import CoasterStore
import Foundation
import Hummingbird

struct TransitionWire: Encodable, Sendable {
    var event: Transition.Event
    var park: ParkID
    var zone: ZoneID?
    var zoneKind: ZoneKind?
    var ride: RideID?
    var at: Date

    init(_ t: Transition) {
        self.event = t.event
        self.park = t.park
        self.zone = t.zone
        self.zoneKind = t.zoneKind
        self.ride = t.ride
        self.at = t.at
    }
}

/// What `POST /v1/fixes` did with each fix. Written by ``JSONWriter`` (Foundation's encoder was a
/// seventh of the request's cost); the `Encodable` form is the reference `JSONWriterTests` holds it to.
struct FixesResponse: Encodable, JSONWritable, Sendable {
    struct Result: Encodable, Sendable {
        var index: Int
        var id: String?
        var status: String
        var reason: FixRejection?
        /// False for an out-of-order fix kept as history only.
        var current: Bool?
        var replayed: Bool?
        var transitions: [TransitionWire]
    }

    /// The request's fixes and the store's outcomes, in the same order; the wire structs are built
    /// only for the `Encodable` form.
    let fixes: [IncomingFix]
    let outcomes: [FixResult]
    let accepted: Int
    var rejected: Int { self.outcomes.count - self.accepted }

    init(fixes: [IncomingFix], results: [FixResult]) {
        self.fixes = fixes
        self.outcomes = results
        self.accepted = results.count { if case .accepted = $0.decision { true } else { false } }
    }

    private enum CodingKeys: String, CodingKey { case accepted, rejected, results }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.accepted, forKey: .accepted)
        try container.encode(self.rejected, forKey: .rejected)
        try container.encode(zip(self.fixes, self.outcomes).enumerated().map { i, pair in
            switch pair.1.decision {
            case .accepted(let current, let transitions):
                Result(index: i, id: pair.0.clientID, status: "accepted", reason: nil, current: current,
                       replayed: pair.1.replayed ? true : nil, transitions: transitions.map(TransitionWire.init))
            case .rejected(let reason):
                Result(index: i, id: pair.0.clientID, status: "rejected", reason: reason, current: nil, replayed: nil, transitions: [])
            }
        }, forKey: .results)
    }

    func write(to json: inout JSONWriter) {
        json.beginObject()
        json.key("accepted")
        json.number(Int64(self.accepted))
        json.key("rejected")
        json.number(Int64(self.rejected))
        json.key("results")
        json.beginArray()
        for (i, (fix, outcome)) in zip(self.fixes, self.outcomes).enumerated() {
            json.beginObject()
            // Keys in sorted order: current, id, index, reason, replayed, status, transitions.
            var current: Bool?
            var reason: FixRejection?
            var transitions: [Transition] = []
            switch outcome.decision {
            case .accepted(let isCurrent, let t):
                current = isCurrent
                transitions = t
            case .rejected(let why):
                reason = why
            }
            json.member("current", current)
            json.member("id", fix.clientID)
            json.key("index")
            json.number(Int64(i))
            json.member("reason", reason?.rawValue)
            if outcome.replayed, reason == nil {
                json.key("replayed")
                json.bool(true)
            }
            json.key("status")
            json.string(reason == nil ? "accepted" : "rejected")
            json.key("transitions")
            json.beginArray()
            for t in transitions {
                json.beginObject()
                json.key("at")
                json.date(t.at)
                json.key("event")
                json.string(t.event.rawValue)
                json.key("park")
                json.string(t.park.rawValue)
                json.member("ride", t.ride?.rawValue)
                json.member("zone", t.zone?.rawValue)
                json.member("zoneKind", t.zoneKind?.rawValue)
                json.endObject()
            }
            json.endArray()
            json.endObject()
        }
        json.endArray()
        json.endObject()
    }
}

struct CheckinRequest: Decodable, Sendable {
    var parkId: String
}

struct VisitWire: Encodable, Sendable, ResponseEncodable {
    var id: Int64
    var park: ParkID
    var how: Visit.How
    var enteredAt: Date
    var leftAt: Date?
    var open: Bool

    init(_ v: Visit) {
        self.id = v.id
        self.park = v.park
        self.how = v.how
        self.enteredAt = v.enteredAt
        self.leftAt = v.leftAt
        self.open = v.leftAt == nil
    }
}

struct VisitListResponse: ResponseEncodable, Sendable {
    var visits: [VisitWire]
}

struct RideLogWire: Encodable, Sendable {
    var id: Int64
    var ride: RideID
    var rideName: String
    var park: ParkID
    var riddenAt: Date
    /// `at-ride` or `in-park`: how close the rider's fixes put them to the ride.
    var evidence: RideEvidence

    init(_ e: RideLogEntry) {
        self.id = e.id
        self.ride = e.ride
        self.rideName = e.rideName
        self.park = e.park
        self.riddenAt = e.riddenAt
        self.evidence = e.evidence
    }
}

struct RideLoggedResponse: ResponseEncodable, Sendable {
    var log: RideLogWire
    /// How many times the caller has ridden this ride, this one included.
    var count: Int
}

struct RideHistoryResponse: ResponseEncodable, Sendable {
    var rides: [RideLogWire]
}

struct RiderStatsResponse: ResponseEncodable, Sendable {
    var totalRides: Int
    var distinctRides: Int
    var coasterCredits: Int
    var parksVisited: Int
    var challengesWon: Int

    init(_ s: RiderStats) {
        self.totalRides = s.totalRides
        self.distinctRides = s.distinctRides
        self.coasterCredits = s.coasterCredits
        self.parksVisited = s.parksVisited
        self.challengesWon = s.challengesWon
    }
}
