import CoasterCore
import Foundation
import Testing

@Suite("Fix pipeline")
struct FixPipelineTests {
    static let index = FenceIndexTests.index
    static let now = Date(timeIntervalSince1970: 1_795_000_000)
    static let millenniumForce = Coordinate(lat: 41.481656, lon: -82.688132)
    static let pipeline = FixPipeline()

    static func fix(_ c: Coordinate, accuracy: Double? = 10, secondsAgo: Double = 0, id: String? = nil) -> IncomingFix {
        IncomingFix(clientID: id, lat: c.lat, lon: c.lon, accuracy: accuracy, recordedAt: now.addingTimeInterval(-secondsAgo))
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var fix: IncomingFix
        var previous: AcceptedFix?
        var reason: FixRejection?
        var testDescription: String { self.name }
    }

    static let previous = AcceptedFix(position: millenniumForce, accuracy: 10, recordedAt: now.addingTimeInterval(-60))
    static let cases: [Case] = [
        Case(name: "good", fix: fix(millenniumForce), previous: previous, reason: nil),
        Case(name: "NaN latitude", fix: IncomingFix(lat: .nan, lon: 0, accuracy: 5, recordedAt: now), reason: .invalidCoordinates),
        Case(name: "latitude 91", fix: IncomingFix(lat: 91, lon: 0, accuracy: 5, recordedAt: now), reason: .invalidCoordinates),
        Case(name: "no accuracy", fix: fix(millenniumForce, accuracy: nil), reason: .accuracyMissing),
        Case(name: "negative accuracy", fix: fix(millenniumForce, accuracy: -1), reason: .accuracyMissing),
        Case(name: "accuracy 101 m", fix: fix(millenniumForce, accuracy: 101), reason: .accuracyTooLow),
        Case(name: "accuracy 100 m", fix: fix(millenniumForce, accuracy: 100), reason: nil),
        Case(name: "3 minutes ahead", fix: fix(millenniumForce, secondsAgo: -180), reason: .inFuture),
        Case(name: "1 minute ahead (skew)", fix: fix(millenniumForce, secondsAgo: -60), reason: nil),
        Case(name: "13 hours old", fix: fix(millenniumForce, secondsAgo: 13 * 3600), reason: .tooOld),
        Case(name: "spoofed jump to Texas", fix: fix(Coordinate(lat: 29.5990, lon: -98.6100)), previous: previous, reason: .tooFast),
        Case(name: "same time, same place", fix: fix(millenniumForce, secondsAgo: 60), previous: previous, reason: .duplicate),
        Case(name: "jitter within accuracy", fix: fix(Geodesy.destination(from: millenniumForce, azimuth: 90, distance: 15), secondsAgo: 59),
             previous: previous, reason: nil),
        Case(name: "car speed is fine", fix: fix(Geodesy.destination(from: millenniumForce, azimuth: 0, distance: 2_000)), previous: previous, reason: nil),
    ]

    @Test(arguments: cases)
    func plausibility(_ c: Case) {
        switch Self.pipeline.assess(c.fix, previous: c.previous, now: Self.now) {
        case .success: #expect(c.reason == nil)
        case .failure(let reason): #expect(reason == c.reason)
        }
    }

    /// A straight walk at 1.4 m/s through Cedar Point, from 400 m outside to 400 m beyond.
    static func walkThroughCedarPoint() -> [IncomingFix] {
        let cp = FenceIndexTests.parks[0].park.boundary
        let box = cp.boundingBox!
        let start = Geodesy.destination(from: Coordinate(lat: box.center.lat, lon: box.minLon), azimuth: 270, distance: 400)
        let length = Geodesy.distance(start, Coordinate(lat: box.center.lat, lon: box.maxLon)) + 400
        let steps = Int(length / 14)
        return (0...steps).map { i in
            let p = Geodesy.destination(from: start, azimuth: 90, distance: Double(i) * 14)
            return IncomingFix(lat: p.lat, lon: p.lon, accuracy: 8, recordedAt: now.addingTimeInterval(Double(i - steps) * 10))
        }
    }

    @Test func aWalkIntoAndOutOfARealParkEntersOnceAndExitsOnce() {
        var state = TrackState()
        var parkEvents: [Transition.Event] = []
        for fix in Self.walkThroughCedarPoint() {
            guard case .accepted(true, let transitions) = Self.pipeline.process(fix, state: &state, index: Self.index, now: Self.now) else {
                Issue.record("fix refused: \(fix)")
                continue
            }
            parkEvents += transitions.filter { $0.zone == nil && $0.park == "cedar-point" }.map(\.event)
        }
        #expect(parkEvents == [.enter, .exit])
        #expect(state.parks.isEmpty && state.zones.isEmpty)
    }

    @Test func anUncertainFixChangesNothing() {
        let vertex = FenceIndexTests.vertex
        var state = TrackState(latest: AcceptedFix(position: Self.millenniumForce, accuracy: 5, recordedAt: Self.now.addingTimeInterval(-600)),
                               parks: ["cedar-point"])
        let decision = Self.pipeline.process(Self.fix(vertex, accuracy: 30), state: &state, index: Self.index, now: Self.now)
        guard case .accepted(true, let transitions) = decision else { Issue.record("\(decision)"); return }
        #expect(!transitions.contains { $0.zone == nil })
        #expect(state.parks == ["cedar-point"])
    }

    @Test func anOutOfOrderFixIsHistoryOnly() {
        var state = TrackState()
        _ = Self.pipeline.process(Self.fix(Self.millenniumForce), state: &state, index: Self.index, now: Self.now)
        let before = state
        let older = Self.fix(Coordinate(lat: 41.4561, lon: -82.7117), secondsAgo: 3600)
        #expect(Self.pipeline.process(older, state: &state, index: Self.index, now: Self.now) == .accepted(current: false, transitions: []))
        #expect(state == before)
    }

    @Test func afterTheStateTimeoutTheParkIsEnteredAgain() {
        var state = TrackState(latest: AcceptedFix(position: Self.millenniumForce, accuracy: 5, recordedAt: Self.now.addingTimeInterval(-13 * 3600)),
                               parks: ["cedar-point"], zones: ["cedar-point.millennium-force"])
        guard case .accepted(true, let transitions) = Self.pipeline.process(Self.fix(Self.millenniumForce), state: &state, index: Self.index, now: Self.now)
        else { Issue.record("refused"); return }
        #expect(transitions.contains { $0.event == .enter && $0.zone == nil && $0.park == "cedar-point" })
        #expect(transitions.contains { $0.event == .enter && $0.ride == "cedar-point.millennium-force" })
    }

    /// Real phone fixes inside Disneyland: sparse Timeline waypoints. The export stamps some
    /// waypoints with the same second (or 5 s apart) at places 224–635 m from each other; those
    /// are physically impossible and must be refused, and nothing else.
    @Test func realDisneylandFixesAreAcceptedButTheImpossibleOnes() throws {
        let points = try Traces.disneyland()
        #expect(points.count == 118)
        var state = TrackState()
        var refused: [(FixRejection, TimeInterval)] = []
        for p in points {
            let fix = IncomingFix(lat: p.position.lat, lon: p.position.lon, accuracy: 15, recordedAt: p.time)
            let gap = state.latest.map { p.time.timeIntervalSince($0.recordedAt) } ?? .infinity
            switch Self.pipeline.process(fix, state: &state, index: Self.index, now: p.time.addingTimeInterval(30)) {
            case .accepted(_, let transitions): #expect(transitions.isEmpty)
            case .rejected(let reason): refused.append((reason, gap))
            }
        }
        #expect(refused.allSatisfy { ($0.0 == .tooFast || $0.0 == .duplicate) && $0.1 <= 5 }, "refused: \(refused)")
        #expect(points.count - refused.count >= 110)
    }

    /// A real walk moved onto Cedar Point: park transitions alternate enter, exit, enter…, and the
    /// only refusal is the Cerknica track's GPS glitch (184 m in 2 s at 15:40:02Z).
    @Test(arguments: [("cerknicko-jezero.gpx", ["2010-08-05T15:40:02Z"]), ("korita-zbevnica.gpx", [])])
    func realWalkMovedOntoCedarPoint(file: String, glitches: [String]) throws {
        let center = FenceIndexTests.parks[0].park.boundary.boundingBox!.center
        let track = Traces.translated(try Traces.gpx(file), to: center)
        #expect(track.count > 250)
        var state = TrackState()
        var events: [Transition.Event] = []
        var refusedAt: [String] = []
        for p in track {
            let fix = IncomingFix(lat: p.position.lat, lon: p.position.lon, accuracy: 5, recordedAt: p.time)
            switch Self.pipeline.process(fix, state: &state, index: Self.index, now: p.time.addingTimeInterval(5)) {
            case .accepted(_, let transitions): events += transitions.filter { $0.zone == nil }.map(\.event)
            case .rejected(let reason):
                #expect(reason == .tooFast)
                refusedAt.append(p.time.formatted(.iso8601))
            }
        }
        #expect(refusedAt == glitches)
        #expect(events.first == .enter)
        for (a, b) in zip(events, events.dropFirst()) { #expect(a != b, "transitions must alternate: \(events)") }
    }
}

@Suite("Check-in and privacy rules")
struct CheckinAndPrivacyTests {
    static let index = FenceIndexTests.index
    static let now = FixPipelineTests.now
    static let policy = CheckinPolicy()

    @Test func checkinDecisions() {
        let inside = AcceptedFix(position: FixPipelineTests.millenniumForce, accuracy: 10, recordedAt: Self.now.addingTimeInterval(-60))
        #expect(Self.policy.decide(latest: inside, park: "cedar-point", index: Self.index, now: Self.now) == .success(.inside))
        #expect(Self.policy.decide(latest: nil, park: "cedar-point", index: Self.index, now: Self.now) == .failure(.noRecentFix))
        var old = inside
        old.recordedAt = Self.now.addingTimeInterval(-11 * 60)
        #expect(Self.policy.decide(latest: old, park: "cedar-point", index: Self.index, now: Self.now) == .failure(.noRecentFix))
        #expect(Self.policy.decide(latest: inside, park: "kings-island", index: Self.index, now: Self.now) == .failure(.notInPark))
        let gate = AcceptedFix(position: FenceIndexTests.vertex, accuracy: 30, recordedAt: Self.now)
        #expect(Self.policy.decide(latest: gate, park: "cedar-point", index: Self.index, now: Self.now) == .success(.uncertain))
        var vague = gate
        vague.accuracy = 90
        #expect(Self.policy.decide(latest: vague, park: "cedar-point", index: Self.index, now: Self.now) == .failure(.accuracyTooLow))
    }

    @Test func privacyViews() {
        let p = LocationPrivacy()
        let viewer = UserID(7)
        let fix = AcceptedFix(position: FixPipelineTests.millenniumForce, accuracy: 5, recordedAt: Self.now.addingTimeInterval(-60))
        let exact = SharingSettings()
        #expect(p.view(fix, sharing: exact, visiting: [], viewerVisiting: [], viewer: viewer, relationship: .friends, now: Self.now) == .exact(fix.position, accuracy: 5))
        for r in [Relationship.none, .requestSent, .requestReceived, .blocking, .blockedBy] {
            #expect(p.view(fix, sharing: exact, visiting: [], viewerVisiting: [], viewer: viewer, relationship: r, now: Self.now) == nil)
        }
        var stale = fix
        stale.recordedAt = Self.now.addingTimeInterval(-2 * 3600 - 1)
        #expect(p.view(stale, sharing: exact, visiting: [], viewerVisiting: [], viewer: viewer, relationship: .friends, now: Self.now) == nil)
        #expect(p.view(fix, sharing: SharingSettings(ghost: .on), visiting: [], viewerVisiting: [], viewer: viewer, relationship: .friends, now: Self.now) == nil)
        let ghostOver = SharingSettings(ghost: .until(Self.now.addingTimeInterval(-1)))
        #expect(p.view(fix, sharing: ghostOver, visiting: [], viewerVisiting: [], viewer: viewer, relationship: .friends, now: Self.now) != nil)
        let approx = p.view(fix, sharing: SharingSettings(precision: .approximate), visiting: [], viewerVisiting: [], viewer: viewer, relationship: .friends, now: Self.now)
        #expect(approx?.coordinate == ApproximateGrid.snap(fix.position))
        // Park-only: the park, and only to a friend visiting it too.
        let parkOnly = SharingSettings(precision: .parkOnly)
        #expect(p.view(fix, sharing: parkOnly, visiting: ["cedar-point", "kings-island"], viewerVisiting: ["cedar-point"], viewer: viewer,
                       relationship: .friends, now: Self.now) == .parkOnly(["cedar-point"]))
        #expect(p.view(fix, sharing: parkOnly, visiting: ["cedar-point"], viewerVisiting: [], viewer: viewer, relationship: .friends,
                       now: Self.now) == nil)
        #expect(p.view(fix, sharing: parkOnly, visiting: ["cedar-point"], viewerVisiting: ["kings-island"], viewer: viewer,
                       relationship: .friends, now: Self.now) == nil)
        let hiddenFromViewer = SharingSettings(overrides: [viewer: SharingOverride(hidden: true)])
        #expect(p.view(fix, sharing: hiddenFromViewer, visiting: [], viewerVisiting: [], viewer: viewer, relationship: .friends, now: Self.now) == nil)
        let coarserForViewer = SharingSettings(overrides: [viewer: SharingOverride(precision: .approximate)])
        if case .approximate? = p.view(fix, sharing: coarserForViewer, visiting: [], viewerVisiting: [], viewer: viewer, relationship: .friends, now: Self.now) {
        } else {
            Issue.record("a per-friend precision override was not applied")
        }
        // Strangers: nothing, unless the user is discoverable and both visit one park; then never
        // better than approximate, and park-only stays park-only (no position, no distance).
        #expect(p.view(fix, sharing: exact, discoverable: false, visiting: ["cedar-point"], viewerVisiting: ["cedar-point"], viewer: viewer,
                       relationship: .none, now: Self.now) == nil)
        #expect(p.view(fix, sharing: exact, discoverable: true, visiting: ["cedar-point"], viewerVisiting: [], viewer: viewer,
                       relationship: .none, now: Self.now) == nil)
        #expect(p.view(fix, sharing: exact, discoverable: true, visiting: ["cedar-point"], viewerVisiting: ["cedar-point"], viewer: viewer,
                       relationship: .none, now: Self.now) == .approximate(ApproximateGrid.snap(fix.position), accuracy: ApproximateGrid.cellRadius))
        #expect(p.view(fix, sharing: parkOnly, discoverable: true, visiting: ["cedar-point"], viewerVisiting: ["cedar-point"], viewer: viewer,
                       relationship: .none, now: Self.now) == .parkOnly(["cedar-point"]))
        #expect(p.view(fix, sharing: SharingSettings(ghost: .on), discoverable: true, visiting: ["cedar-point"], viewerVisiting: ["cedar-point"],
                       viewer: viewer, relationship: .none, now: Self.now) == nil)
        #expect(p.view(fix, sharing: exact, discoverable: true, visiting: ["cedar-point"], viewerVisiting: ["cedar-point"], viewer: viewer,
                       relationship: .blockedBy, now: Self.now) == nil)
    }

    @Test func approximateSnappingIsAFixedGrid() {
        let c = FixPipelineTests.millenniumForce
        let snapped = ApproximateGrid.snap(c)
        #expect(ApproximateGrid.snap(snapped) == snapped)
        #expect(Geodesy.distance(c, snapped) <= ApproximateGrid.cellRadius * 1.01)
        // Anywhere within a few metres lands on the same centre (unless on a cell edge).
        let near = Geodesy.destination(from: c, azimuth: 45, distance: 3)
        #expect(ApproximateGrid.snap(near) == snapped || Geodesy.distance(near, snapped) > 400)
    }

    @Test func rateLimiterRefillsAndSaysHowLongToWait() {
        var limiter = RateLimiter(perSecond: 2, burst: 3)
        let t = Self.now
        #expect((0..<3).allSatisfy { _ in limiter.take("u", now: t) == nil })
        let wait = limiter.take("u", now: t)
        #expect(wait != nil && abs(wait! - 0.5) < 1e-9)
        #expect(limiter.take("u", now: t.addingTimeInterval(0.5)) == nil)
        #expect(limiter.take("other", now: t) == nil)
    }

    @Test func failureThrottleWindow() {
        var throttle = FailureThrottle(limit: 2, window: 60)
        let t = Self.now
        throttle.recordFailure("k", now: t)
        #expect(throttle.retryAfter("k", now: t) == nil)
        throttle.recordFailure("k", now: t.addingTimeInterval(10))
        #expect(throttle.retryAfter("k", now: t.addingTimeInterval(10)) == 50)
        #expect(throttle.retryAfter("k", now: t.addingTimeInterval(61)) == nil)
    }
}
