import CoasterCore
import CoasterService
import Foundation
import Synchronization
import Testing

@Suite("Rate limits")
struct RateLimitTests {
    /// A rate set alone (what `serve`'s flags do) brings the burst its limit keeps: some seconds'
    /// worth, never under the limit's floor.
    @Test func aRateSetAloneScalesItsBurst() {
        var limits = RateLimits()
        #expect(limits.fixes.perSecond == 5 && limits.fixes.burst == 30)
        limits.fixes.setRate(10)
        #expect(limits.fixes.perSecond == 10 && limits.fixes.burst == 60)
        limits.fixes.setRate(0.01)
        #expect(limits.fixes.burst == 1)
        limits.nearby.setRate(0.1)
        #expect(limits.nearby.burst == 10, "nearby's floor")
        limits.registrations.setRate(1)
        #expect(limits.registrations.burst == 300)
    }

    /// The burst is taken at once, then one request per 1/rate seconds; a refusal says what was
    /// limited and when the next would pass.
    @Test func aLimiterRefusesPastItsBurstAndSaysWhen() throws {
        let now = Mutex(Date(timeIntervalSince1970: 1_000_000))
        let rates = RequestRates(RateLimit(perSecond: 0.5, burst: 2), now: { now.withLock { $0 } })
        let user = UserID(rawValue: 7)
        try rates.take(user, what: "nearby")
        try rates.take(user, what: "nearby")
        let refused = #expect(throws: RateLimited.self) { try rates.take(user, what: "nearby") }
        #expect(refused?.what == "nearby")
        #expect((refused?.retryAfter ?? 0) > 0 && (refused?.retryAfter ?? 0) <= 2)
        now.withLock { $0 = $0.addingTimeInterval(2) }
        try rates.take(user, what: "nearby")
        try rates.take(UserID(rawValue: 8), what: "nearby")
    }
}
