import CoasterCore
import Foundation
import Testing

@Suite("Wait estimator")
struct WaitEstimatorTests {
    static let now = Date(timeIntervalSince1970: 1_795_000_000)
    static let estimator = WaitEstimator()
    static let noRatio = PostedModel.identity

    static func report(_ user: Int64?, _ minutes: Double, minutesAgo: Double, _ source: WaitObservation.Source = .crowd) -> WaitObservation {
        WaitObservation(user: user.map { UserID($0) }, minutes: minutes, at: now.addingTimeInterval(-minutesAgo * 60), source: source)
    }

    @Test func agreeingReportsGiveTheirValueWithARange() {
        let e = Self.estimator.estimate(observations: [Self.report(1, 40, minutesAgo: 5), Self.report(2, 44, minutesAgo: 3)],
                                        posted: nil, model: Self.noRatio, now: Self.now)
        #expect(e.minutes == 40 || e.minutes == 44)
        #expect(e.reports == 2)
        #expect(e.newestReportAge == 180)
        #expect(e.low! <= e.minutes! && e.minutes! <= e.high!)
        #expect(e.basis == [.crowd])
    }

    /// A report stored at this instant comes back from storage a hair later than `now`.
    @Test func aReportFromThisInstantCountsAfterAStorageRoundTrip() {
        let stored = Date(timeIntervalSince1970: Self.now.timeIntervalSince1970 + 1e-6)
        let e = Self.estimator.estimate(observations: [WaitObservation(user: UserID(1), minutes: 30, at: stored, source: .crowd)],
                                        posted: nil, model: Self.noRatio, now: Self.now)
        #expect(e.reports == 1)
        #expect(RideStatusRules().consensus([StatusReport(user: UserID(1), condition: .down, at: stored)], now: Self.now) == .down)
    }

    @Test func aWildOutlierBarelyMovesIt() {
        let honest = [Self.report(1, 40, minutesAgo: 6), Self.report(2, 45, minutesAgo: 4), Self.report(3, 42, minutesAgo: 5)]
        let before = Self.estimator.estimate(observations: honest, posted: nil, model: Self.noRatio, now: Self.now)
        let after = Self.estimator.estimate(observations: honest + [Self.report(4, 300, minutesAgo: 1)], posted: nil, model: Self.noRatio, now: Self.now)
        #expect(abs(after.minutes! - before.minutes!) <= 5)
        #expect(after.minutes! <= 45)
    }

    @Test func oneUserReportingManyTimesCountsOnce() {
        let spam = (0..<20).map { Self.report(9, 180, minutesAgo: Double($0) / 2) }
        let e = Self.estimator.estimate(observations: [Self.report(1, 30, minutesAgo: 3), Self.report(2, 32, minutesAgo: 4)] + spam,
                                        posted: nil, model: Self.noRatio, now: Self.now)
        #expect(e.reports == 3)
        #expect(e.minutes! <= 32)
    }

    @Test func recentEvidenceWeighsMore() {
        // Two old reports of 60 against one fresh report of 20: the fresh one wins the weighted median.
        let e = Self.estimator.estimate(observations: [Self.report(1, 60, minutesAgo: 80), Self.report(2, 60, minutesAgo: 75),
                                                       Self.report(3, 20, minutesAgo: 1)], posted: nil, model: Self.noRatio, now: Self.now)
        #expect(e.minutes == 20)
    }

    @Test func staleEvidenceIsUnknown() {
        let e = Self.estimator.estimate(observations: [Self.report(1, 40, minutesAgo: 121)],
                                        posted: PostedWait(minutes: 50, at: Self.now.addingTimeInterval(-61 * 60)), model: Self.noRatio, now: Self.now)
        #expect(e == .unknown)
        #expect(e.minutes == nil)
    }

    @Test func thePostedWaitIsAPriorScaledByTheLearnedRatio() {
        let model = PostedModel(intercept: 0, slope: 0.7, pairs: 50, lowFactor: 0.8, highFactor: 1.25)
        let e = Self.estimator.estimate(observations: [], posted: PostedWait(minutes: 60, at: Self.now.addingTimeInterval(-600)), model: model, now: Self.now)
        #expect(e.minutes == 42)
        #expect(e.low == 33 && e.high == 53)
        #expect(e.basis == [.posted])
        #expect(e.reports == 0)
        let down = Self.estimator.estimate(observations: [], posted: PostedWait(minutes: nil, at: Self.now), model: model, now: Self.now)
        #expect(down == .unknown)
    }

    @Test func measuredWaitsOutweighReports() {
        let e = Self.estimator.estimate(observations: [Self.report(1, 50, minutesAgo: 2), Self.report(2, 30, minutesAgo: 2, .measured)],
                                        posted: nil, model: Self.noRatio, now: Self.now)
        #expect(e.minutes == 30)
        #expect(e.basis == [.crowd, .measured])
    }

    @Test func theLineIsRobustAndNeedsEnoughPairs() {
        #expect(PostedModel.learn([(30, 60)]) == .identity)
        // actual = 5 + 0.6 × posted, plus two absurd pairs that a least-squares line would follow.
        var pairs = stride(from: 10.0, through: 120, by: 5).map { (actual: 5 + 0.6 * $0, posted: $0) }
        pairs += [(actual: 400, posted: 20), (actual: 0, posted: 110)]
        let model = PostedModel.learn(pairs)
        #expect(abs(model.slope - 0.6) < 0.02)
        #expect(abs(model.intercept - 5) < 1)
        #expect(model.pairs == 25)
        #expect(model.lowFactor! <= 1 && model.highFactor! >= 1)
    }

    @Test(arguments: [(3, 2), (4, 2), (5, 0), (9, 0), (10, 1), (15, 1), (16, 2), (23, 2)])
    func partsOfTheDay(hour: Int, bucket: Int) {
        #expect(WaitHours.bucket(localHour: hour) == bucket)
    }
}

@Suite("Wait reports, ride status and posted feeds")
struct WaitReportTests {
    static let index = FenceIndexTests.index
    static let now = WaitEstimatorTests.now
    static let policy = WaitReportPolicy()
    static let zones: Set<ZoneID> = ["cedar-point.millennium-force"]

    @Test func whoMayReport() {
        let at = AcceptedFix(position: FixPipelineTests.millenniumForce, accuracy: 10, recordedAt: Self.now.addingTimeInterval(-60))
        #expect(Self.check(at, visiting: true, last: nil) == nil)
        #expect(Self.check(at, visiting: false, last: nil) == .notCheckedIn)
        #expect(Self.check(nil, visiting: true, last: nil) == .noRecentFix)
        let far = AcceptedFix(position: Coordinate(lat: 41.4822, lon: -82.6835), accuracy: 10, recordedAt: Self.now)
        #expect(Self.check(far, visiting: true, last: nil) == .notNearRide)
        let near = AcceptedFix(position: Geodesy.destination(from: FixPipelineTests.millenniumForce, azimuth: 0, distance: 80), accuracy: 10, recordedAt: Self.now)
        #expect(Self.check(near, visiting: true, last: nil) == nil)
        #expect(Self.check(at, visiting: true, last: Self.now.addingTimeInterval(-60)) == .tooSoon)
        #expect(Self.check(at, visiting: true, last: Self.now.addingTimeInterval(-16 * 60)) == nil)
    }

    static func check(_ fix: AcceptedFix?, visiting: Bool, last: Date?) -> WaitReportRefusal? {
        switch Self.policy.check(latest: fix, visiting: visiting, zones: Self.zones, lastReport: last, index: Self.index, now: Self.now) {
        case .success: nil
        case .failure(let r): r
        }
    }

    @Test func statusConsensus() {
        let rules = RideStatusRules()
        let t = Self.now
        #expect(rules.consensus([], now: t) == nil)
        let reports = [StatusReport(user: UserID(1), condition: .operating, at: t.addingTimeInterval(-20 * 60)),
                       StatusReport(user: UserID(2), condition: .down, at: t.addingTimeInterval(-60)),
                       StatusReport(user: UserID(3), condition: .down, at: t.addingTimeInterval(-120))]
        #expect(rules.consensus(reports, now: t) == .down)
        // One user changing their mind counts once, newest.
        let flip = [StatusReport(user: UserID(1), condition: .down, at: t.addingTimeInterval(-300)),
                    StatusReport(user: UserID(1), condition: .operating, at: t.addingTimeInterval(-60))]
        #expect(rules.consensus(flip, now: t) == .operating)
        #expect(rules.consensus([StatusReport(user: UserID(1), condition: .closed, at: t.addingTimeInterval(-31 * 60))], now: t) == nil)
    }

    @Test func postedFeedsInCSVAndJSON() throws {
        let ny = TimeZone(identifier: "America/New_York")!
        let csv = "ride,at,minutes\nmillennium-force,2026-07-04 12:00:00,45\ncedar-point.gatekeeper,2026-07-04T16:05:00Z,-999\nmaverick,2026-07-04 12:10:00,\n"
        let rows = try PostedWaitFeed.parse(Data(csv.utf8), park: "cedar-point", timeZone: ny, csv: true)
        #expect(rows.map(\.ride) == ["cedar-point.millennium-force", "cedar-point.gatekeeper", "cedar-point.maverick"])
        #expect(rows.map(\.minutes) == [45, nil, nil])
        #expect(rows[0].at == rows[1].at.addingTimeInterval(-300))
        let json = #"[{"ride":"millennium-force","at":"2026-07-04T16:00:00Z","minutes":45},{"ride":"valravn","at":"2026-07-04T16:00:00Z","minutes":null}]"#
        #expect(try PostedWaitFeed.parse(Data(json.utf8), park: "cedar-point", timeZone: ny, csv: false).count == 2)
        let lax = #"[{"ride":"valravn","at":"2026-07-04T16:00:00Z","minutes":5},]"#
        let laxRejection = try #require(throws: ImportRejection.self) {
            try PostedWaitFeed.parse(Data(lax.utf8), park: "cedar-point", timeZone: ny, csv: false)
        }
        #expect(laxRejection.issues.map(\.reason) == ["not valid JSON: a comma before the ] at byte 59 (line 1, column 60)"])
        let bad = "ride,at,minutes\nmillennium-force,noon,45\nNOT A RIDE,2026-07-04 12:00:00,45\nmaverick,2026-07-04 12:00:00,9999\n"
        let rejection = try #require(throws: ImportRejection.self) { try PostedWaitFeed.parse(Data(bad.utf8), park: "cedar-point", timeZone: ny, csv: true) }
        #expect(rejection.issues.map(\.pointer) == ["/1/at", "/2/ride", "/3/minutes"])
        // 02:30 on the spring-forward night does not exist in New York.
        #expect(PostedWaitFeed.time("2026-03-08 02:30:00", timeZone: ny) == nil)
    }
}

@Suite("Wait replay on real data")
struct WaitReplayTests {
    /// Na'vi River Journey, TouringPlans 2017–2019: the estimate must keep beating the posted wait
    /// by a wide margin, and its range must hold about half of the actual waits.
    @Test func theEstimateBeatsThePostedWaitOnRealData() throws {
        let eastern = TimeZone(identifier: "America/New_York")!
        let text = try String(contentsOf: Fixtures.thirdParty.appendingPathComponent("touringplans-animal-kingdom-waits/AK85.csv"), encoding: .utf8)
        let score = WaitReplay(timeZone: eastern).score(WaitReplay.touringPlans(text, timeZone: eastern))
        #expect(score.scored > 1_500)
        #expect(score.declined < 30)
        #expect(score.improvement > 25, "improvement \(score.improvement) %")
        #expect((0.4...0.65).contains(score.coverage), "coverage \(score.coverage)")
    }

    /// Nothing from the future: the prediction for an actual wait cannot see that wait, nor any
    /// wait whose rider had not boarded yet.
    @Test func noEvidenceFromTheFuture() {
        let eastern = TimeZone(identifier: "America/New_York")!
        let t = Date(timeIntervalSince1970: 1_550_000_000)
        let readings: [WaitReplay.Reading] = [
            .init(at: t, day: "d", kind: .posted(60)),
            // Entered 10 min later, known 100 min after that: too late to help the next one.
            .init(at: t.addingTimeInterval(600), day: "d", kind: .actual(100)),
            .init(at: t.addingTimeInterval(1200), day: "d", kind: .actual(10)),
        ]
        let score = WaitReplay(timeZone: eastern).score(readings)
        #expect(score.scored == 2)
        // Both predictions are the posted wait itself (no pairs, no known reports): |60−100| + |60−10|.
        #expect(score.estimateAbsoluteError == 90)
    }
}

@Suite("Images and badges")
struct ImageAndBadgeTests {
    @Test func garbageNeverCrashesTheInspector() {
        var generator = SeededGenerator(seed: 7)
        let prefixes: [[UInt8]] = [[0xFF, 0xD8, 0xFF], [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], Array("\0\0\0\u{18}ftypheic".utf8), []]
        for prefix in prefixes {
            for length in [0, 1, 5, 40, 300, 5_000] {
                for _ in 0..<20 {
                    let bytes = prefix + (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
                    _ = try? ImageInspector.inspect(bytes)
                }
            }
        }
        #expect(throws: ImageRefusal.notAnImage) { try ImageInspector.inspect(Array("hello".utf8)) }
    }

    @Test func badgesAreAwardedByFactsAndNeverTwice() {
        let facts = RiderFacts(totalRides: 12, coasterCredits: 10, parksVisited: 1, mostRidesOfOneRide: 3, distinctRides: 10)
        let first = Badge.newlyEarned(facts, earned: [])
        #expect(first.map(\.id) == ["first-park", "first-ride", "first-coaster", "credits-10"])
        #expect(Badge.newlyEarned(facts, earned: Set(first.map(\.id))).isEmpty)
        #expect(Badge.named("credits-50")?.progress(facts) == 0.2)
        #expect(Set(Badge.all.map(\.id)).count == Badge.all.count)
    }
}
