import CoasterCore
@testable import CoasterStore
import CoasterTestSupport
import Foundation
import GRDB
import Testing

/// The incoming friend requests in pages, against the rows themselves.
@Suite("Friend requests")
struct FriendRequestTests {
    /// Requests sent in bursts (several at the same instant, so that the sender breaks the tie),
    /// some accepted since, some the other way: every page of 4 is the next 4 pending requests
    /// to the user, newest first, and the pages together are all of them, each once. The
    /// outgoing list is whole.
    @Test func incomingRequestsComeInPagesNewestFirst() async throws {
        let t = try await TemporaryStore(now: { Date(timeIntervalSince1970: 1_781_100_000) })
        defer { t.remove() }
        try await t.sql.addRiders(1...43)
        for sender in Int64(2)...40 {
            // Three at a time: 2, 3 and 4 at one instant, 5, 6 and 7 at the next, …
            let status = sender % 7 == 0 ? "accepted" : "pending"
            try await t.sql.execute("INSERT INTO friendships (requester, addressee, status, created_at) VALUES (?, 1, ?, ?)",
                           [sender, status, 1_781_000_000.123456789 + Double((sender - 2) / 3) * 0.7])
        }
        for addressee in Int64(41)...43 {
            try await t.sql.execute("INSERT INTO friendships (requester, addressee, status, created_at) VALUES (1, ?, 'pending', ?)",
                           [addressee, 1_781_000_500 + Double(addressee)])
        }
        // The later the sender, the later (or as late as) the request: newest first is the
        // senders still pending, last first.
        let expected = Array((Int64(2)...40).filter { $0 % 7 != 0 }.reversed())
        var paged: [Int64] = []
        var after: ListPosition?
        for _ in 0...expected.count / 4 {
            let (incoming, outgoing) = try await t.store.friendRequests(of: UserID(1), limit: 4, after: after)
            #expect(outgoing.map(\.user.id.rawValue) == [43, 42, 41])
            paged += incoming.map(\.user.id.rawValue)
            guard incoming.count == 4, let last = incoming.last else { break }
            after = last.position
        }
        #expect(paged == expected)
        let whole = try await t.store.friendRequests(of: UserID(1), limit: 200, after: nil).incoming
        #expect(whole.map(\.user.id.rawValue) == expected)
    }

    @Test(.enabled(if: TestDatabase.isSQLite)) func aPageOfIncomingRequestsIsARangeOfTheIndex() async throws {
        let plan = try await QueryPlanTests.plan(SpatiaLiteStore.incomingRequests, ["me": 1, "at": 1e9, "user": 5, "limit": 50])
        #expect(plan.contains("SEARCH f USING COVERING INDEX friendships_by_addressee_and_time (addressee=? AND status=? AND (created_at,requester)<(?,?))"),
                "\(plan)")
        #expect(plan.allSatisfy { !$0.hasPrefix("SCAN") && !$0.contains("TEMP B-TREE") }, "\(plan)")
    }

    /// The users one has blocked in pages, the same way: blocks made three at an instant (the
    /// blocked user breaks the tie), some lifted since; every page is the next blocks, newest
    /// first, and the pages together are all of them, each once. Another user's blocks are not in
    /// it.
    @Test func blocksComeInPagesNewestFirst() async throws {
        let t = try await TemporaryStore(now: { Date(timeIntervalSince1970: 1_781_100_000) })
        defer { t.remove() }
        try await t.sql.addRiders(1...40)
        for blocked in Int64(3)...40 {
            try await t.sql.execute("INSERT INTO blocks (blocker, blocked, created_at) VALUES (1, ?, ?)",
                           [blocked, 1_781_000_000.123456789 + Double((blocked - 3) / 3) * 0.7])
        }
        try await t.sql.execute("DELETE FROM blocks WHERE blocker = 1 AND blocked % 5 = 0")
        try await t.sql.execute("INSERT INTO blocks (blocker, blocked, created_at) VALUES (2, 1, 1781000100), (2, 3, 1781000101)")
        let expected = Array((Int64(3)...40).filter { $0 % 5 != 0 }.reversed())
        var paged: [Int64] = []
        var after: ListPosition?
        for _ in 0...expected.count / 4 {
            let page = try await t.store.blocks(of: UserID(1), limit: 4, after: after)
            paged += page.map(\.user.id.rawValue)
            guard page.count == 4, let last = page.last else { break }
            after = last.position
        }
        #expect(paged == expected)
        #expect(try await t.store.blocks(of: UserID(2), limit: 50, after: nil).map(\.user.id.rawValue) == [3, 1])
    }

    /// Friends by display name in pages: names equal but for ASCII case (one place, then by
    /// username), names equal but for a non-ASCII letter's case (two places: NOCASE folds ASCII
    /// only), a name that is a prefix of another, friends both ways; a pending request and other
    /// people's friends left out. Every page size gives the whole list once, in order.
    @Test func friendsComeInPagesByName() async throws {
        let t = try await TemporaryStore()
        defer { t.remove() }
        let names = ["bob", "Bob", "BOB", "Émile", "émile", "Ann", "Anna", "ann", "zed", "Z", "_x", "42"]
        try await t.sql.execute("INSERT INTO users (id, username, display_name, password_hash, role, created_at) VALUES (1, 'me', 'Me', 'x', 'member', 0)")
        for (i, name) in names.enumerated() {
            // Usernames against the names' order, so that the tie-break shows.
            try await t.sql.execute("INSERT INTO users (id, username, display_name, password_hash, role, created_at) VALUES (?, ?, ?, 'x', 'member', 0)",
                           [i + 2, "u\(99 - i)", name])
            let (requester, addressee) = i % 2 == 0 ? (1, i + 2) : (i + 2, 1)
            try await t.sql.execute("INSERT INTO friendships (requester, addressee, status, created_at, accepted_at) VALUES (?, ?, ?, 0, 0)",
                           [requester, addressee, "accepted"])
        }
        try await t.sql.addRiders(100...102)
        try await t.sql.execute("""
            INSERT INTO friendships (requester, addressee, status, created_at, accepted_at)
            VALUES (100, 101, 'accepted', 0, 0), (102, 1, 'pending', 0, NULL)
            """)
        let whole = try await t.store.friends(of: UserID(1))
        #expect(whole.map(\.user.displayName) == ["42", "_x", "ann", "Ann", "Anna", "BOB", "Bob", "bob", "Z", "zed", "Émile", "émile"])
        #expect(whole.map(\.user.username) == ["u88", "u89", "u92", "u94", "u93", "u97", "u98", "u99", "u90", "u91", "u96", "u95"])
        for size in 1...4 {
            var paged: [String] = []
            var after: NamePosition?
            for _ in 0...whole.count {
                let page = try await t.store.friends(of: UserID(1), limit: size, after: after)
                paged += page.map(\.user.username)
                guard page.count == size, let last = page.last else { break }
                after = last.position
            }
            #expect(paged == whole.map(\.user.username), "pages of \(size)")
        }
        #expect(try await t.store.friends(of: UserID(100)).map(\.user.id) == [UserID(101)])
    }

    @Test(.enabled(if: TestDatabase.isSQLite)) func aPageOfBlocksIsARangeOfTheIndex() async throws {
        let plan = try await QueryPlanTests.plan(SpatiaLiteStore.blockList, ["me": 1, "at": 1e9, "user": 5, "limit": 50])
        #expect(plan.contains("SEARCH b USING COVERING INDEX blocks_by_blocker_and_time (blocker=? AND (created_at,blocked)<(?,?))"), "\(plan)")
        #expect(plan.allSatisfy { !$0.hasPrefix("SCAN") && !$0.contains("TEMP B-TREE") }, "\(plan)")
    }
}
