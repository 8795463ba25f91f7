import CoasterCore
import Foundation
import Testing

@Suite("Login throttling")
struct LoginThrottleTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    /// After the free failures, each failure of a pair doubles its wait; a success resets it.
    @Test func aPairBacksOffExponentiallyAndASuccessResetsIt() {
        var throttle = LoginThrottle(freeFailures: 3, accountLimit: 1000, addressLimit: 1000, window: 900)
        var now = Self.t0
        for _ in 0..<2 { throttle.recordFailure(account: "ann", address: "a", now: now) }
        #expect(throttle.retryAfter(account: "ann", address: "a", now: now) == nil)
        var waits: [TimeInterval] = []
        for _ in 0..<4 {
            throttle.recordFailure(account: "ann", address: "a", now: now)
            let wait = throttle.retryAfter(account: "ann", address: "a", now: now) ?? 0
            waits.append(wait)
            now = now.addingTimeInterval(wait)
        }
        #expect(waits == [1, 2, 4, 8])
        throttle.recordSuccess(account: "ann", address: "a", now: now)
        throttle.recordFailure(account: "ann", address: "a", now: now)
        #expect(throttle.retryAfter(account: "ann", address: "a", now: now) == nil)
    }

    @Test func theWaitIsCapped() {
        var throttle = LoginThrottle(freeFailures: 1, accountLimit: 10_000, addressLimit: 10_000, window: 900)
        for _ in 0..<100 { throttle.recordFailure(account: "ann", address: "a", now: Self.t0) }
        #expect(abs((throttle.retryAfter(account: "ann", address: "a", now: Self.t0) ?? 0) - 15 * 60) < 1e-6)
    }

    /// An attacker exhausting the account's and the address's limits from elsewhere: the owner's
    /// known address still logs in; an unknown one waits.
    @Test func knownAddressesAreSparedTheSharedLimits() {
        var throttle = LoginThrottle(freeFailures: 1_000, accountLimit: 5, addressLimit: 5, window: 900)
        throttle.recordSuccess(account: "ann", address: "home", now: Self.t0)
        for i in 0..<10 { throttle.recordFailure(account: "ann", address: "evil\(i)", now: Self.t0) }
        #expect(throttle.retryAfter(account: "ann", address: "home", now: Self.t0) == nil)
        #expect(throttle.retryAfter(account: "ann", address: "new-phone", now: Self.t0) != nil)
        // One address failing on many accounts: those accounts' own known addresses are spared.
        throttle.recordSuccess(account: "bob", address: "nat", now: Self.t0)
        for i in 0..<10 { throttle.recordFailure(account: "guess\(i)", address: "nat", now: Self.t0) }
        #expect(throttle.retryAfter(account: "bob", address: "nat", now: Self.t0) == nil)
        #expect(throttle.retryAfter(account: "carl", address: "nat", now: Self.t0) != nil)
    }

    /// Keys are bounded: a million-character name is counted under one shared key, and the maps
    /// never hold more than their maximum.
    @Test func keysAreBoundedInLengthAndNumber() {
        var throttle = LoginThrottle(freeFailures: 1, accountLimit: 3, addressLimit: 1_000_000, window: 900, maximumKeys: 100)
        let huge = String(repeating: "x", count: 1_000_000)
        for i in 0..<3 { throttle.recordFailure(account: huge + "\(i)", address: "a\(i)", now: Self.t0) }
        #expect(throttle.retryAfter(account: huge + "9", address: "b", now: Self.t0) != nil)
        for i in 0..<1_000 { throttle.recordFailure(account: "u\(i)", address: "b\(i)", now: Self.t0) }
        #expect(throttle.keyCount <= 3 * 100)
    }
}
