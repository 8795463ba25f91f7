import CoasterCore
import Foundation
import Testing

/// The rules a store applies inside its transactions, on their own.
@Suite("Rules the store applies")
struct StoreRuleTests {
    static let park = ParkID(rawValue: "cedar-point")
    static func ride(_ slug: String, status: RideStatus = .operating, cycle: Int = 120) -> Ride {
        Ride(id: RideID(park: Self.park, slug: slug), park: Self.park, name: slug, type: .coaster, status: status, cycleSeconds: cycle)
    }
    static let visit = Visit(id: 1, park: Self.park, how: .automatic, enteredAt: Date(timeIntervalSince1970: 1_000), leftAt: nil)

    /// A ride log is admitted in order: the listing, then the live word, then the visit; a fact is
    /// not read once an earlier one refuses.
    @Test func aRideLogIsAdmittedByListingThenLiveStatusThenVisit() throws {
        let policy = RideLogPolicy()
        var asked: [String] = []
        let closed = policy.admits(Self.ride("a", status: .closed), live: { asked.append("live"); return .unknown },
                                   visit: { asked.append("visit"); return Self.visit })
        #expect(closed == .failure(.notOperating(.closed)))
        #expect(asked.isEmpty)
        let down = RideLiveState(status: .down, source: .crowd)
        #expect(policy.admits(Self.ride("a"), live: { asked.append("live"); return down }, visit: { asked.append("visit"); return Self.visit })
                == .failure(.reported(down)))
        #expect(asked == ["live"])
        #expect(policy.admits(Self.ride("a"), live: { .unknown }, visit: { nil }) == .failure(.notCheckedIn))
        #expect(policy.admits(Self.ride("a"), live: { RideLiveState(status: .operating, source: .posted) }, visit: { Self.visit })
                == .success(Self.visit))
    }

    /// The same ride again within its cycle is a cooldown; another ride before the cycle and the
    /// walk at a brisk pace is an impossible sequence; after that, nothing stands in the way.
    @Test func theGapAfterALoggedRideIsItsCycleAndTheWalk() {
        let policy = RideLogPolicy()
        let a = Self.ride("a", cycle: 120), b = Self.ride("b")
        #expect(policy.refusal(next: a, after: a, walk: 0, sinceLast: 100) == .cooldown(retryAfter: 20))
        #expect(policy.refusal(next: a, after: a, walk: 0, sinceLast: 120) == nil)
        let walk = 180.0  // 100 s at 1.8 m/s
        #expect(policy.refusal(next: b, after: a, walk: walk, sinceLast: 200)
                == .impossibleSequence(after: a.id, afterName: a.name, walk: walk, retryAfter: 20))
        #expect(policy.refusal(next: b, after: a, walk: walk, sinceLast: 220) == nil)
    }

    @Test func atRideNeedsAFixAtTheRideWithinTheWindow() {
        let policy = RideLogPolicy()
        let now = 100_000.0
        #expect(policy.evidence(lastFixAtRide: nil, now: now) == .inPark)
        #expect(policy.evidence(lastFixAtRide: now - policy.atRideWindow, now: now) == .atRide)
        #expect(policy.evidence(lastFixAtRide: now - policy.atRideWindow - 1, now: now) == .inPark)
    }

    @Test func aMeasuredWaitIsAQueueEnterThenABoardingWithinBounds() {
        #expect(MeasuredWait.minutes(queuedAt: 0, boardedAt: 600, boardingsBetween: 0) == 10)
        #expect(MeasuredWait.minutes(queuedAt: 0, boardedAt: 600, boardingsBetween: 1) == nil)
        #expect(MeasuredWait.minutes(queuedAt: 0, boardedAt: 29, boardingsBetween: 0) == nil)
        #expect(MeasuredWait.minutes(queuedAt: 0, boardedAt: 300 * 60, boardingsBetween: 0) == 300)
        #expect(MeasuredWait.minutes(queuedAt: 0, boardedAt: 300 * 60 + 1, boardingsBetween: 0) == nil)
    }

    @Test func recordsAreSeenByTheirOwnerAndAcceptedFriendsOnly() {
        let me = UserID(rawValue: 1), them = UserID(rawValue: 2)
        var asked = false
        #expect(Relationship.seesRecords(me, of: me) { asked = true; return .none })
        #expect(!asked, "oneself needs no relationship")
        #expect(Relationship.seesRecords(me, of: them) { .friends })
        for other in [Relationship.none, .requestSent, .requestReceived, .blocking, .blockedBy] {
            #expect(!Relationship.seesRecords(me, of: them) { other }, "\(other)")
        }
    }

    @Test func friendAndRequestLimits() {
        #expect(FriendRules.hasRoomForFriend(friends: FriendRules.maximumFriends - 1))
        #expect(!FriendRules.hasRoomForFriend(friends: FriendRules.maximumFriends))
        #expect(FriendRules.mayAsk(pending: FriendRules.maximumPendingRequests - 1))
        #expect(!FriendRules.mayAsk(pending: FriendRules.maximumPendingRequests))
    }
}
