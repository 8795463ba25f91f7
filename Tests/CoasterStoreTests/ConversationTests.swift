import CoasterCore
@testable import CoasterStore
import CoasterTestSupport
import Foundation
import GRDB
import Testing

/// Conversations from the rows the triggers keep, and pages of one from the pair index, against
/// what the messages themselves say.
@Suite("Conversations")
struct ConversationTests {
    /// What the triggers should hold for the stored messages: for each side of each conversation,
    /// "user other" → its newest message and how many the other side sent it unread.
    static func sides(_ db: Database) throws -> [String: (last: Int64, unread: Int)] {
        var sides: [String: (last: Int64, unread: Int)] = [:]
        func note(_ user: Int64, _ other: Int64, _ id: Int64, unread: Bool) {
            var side = sides["\(user) \(other)"] ?? (id, 0)
            side.last = max(side.last, id)
            if unread { side.unread += 1 }
            sides["\(user) \(other)"] = side
        }
        for m in try Row.fetchAll(db, sql: "SELECT id, sender, recipient, read_at IS NULL AS unread FROM messages") {
            note(m["sender"], m["recipient"], m["id"], unread: false)
            note(m["recipient"], m["sender"], m["id"], unread: m["unread"])
        }
        return sides
    }

    /// The kept rows equal what the messages say; every user's list is theirs without the
    /// blocked, newest first, whole and in pages; every conversation read in pages of 3 is all its messages, newest
    /// first, unless the other side blocked the viewer.
    static func check(_ store: SpatiaLiteStore, users: [Int64], blocks: [(Int64, Int64)]) async throws {
        let (sides, kept, messages) = try await store.pool.read { db in
            let kept = try Row.fetchAll(db, sql: "SELECT * FROM conversations").map { row in
                ("\(row["user_id"] as Int64) \(row["other_id"] as Int64)", row["last_id"] as Int64, row["unread"] as Int)
            }
            return (try Self.sides(db), kept, try Row.fetchAll(db, sql: "SELECT id, sender, recipient FROM messages ORDER BY id DESC"))
        }
        #expect(kept.map { "\($0.0) \($0.1) \($0.2)" }.sorted() == sides.map { "\($0.key) \($0.value.last) \($0.value.unread)" }.sorted())
        for viewer in users {
            let blocked = Set(blocks.compactMap { $0.0 == viewer ? $0.1 : $0.1 == viewer ? $0.0 : nil })
            let want = sides.compactMap { key, side -> (other: Int64, last: Int64, unread: Int)? in
                let pair = key.split(separator: " ").map { Int64($0)! }
                return pair[0] == viewer && !blocked.contains(pair[1]) ? (pair[1], side.last, side.unread) : nil
            }.sorted { $0.last > $1.last }
            // The whole list, and the list read in pages of 3, each after the last message of
            // the page before.
            let list = try await store.conversations(of: UserID(viewer), limit: 200, before: nil)
            var paged: [Conversation] = []
            for _ in 0...list.count / 3 {
                let page = try await store.conversations(of: UserID(viewer), limit: 3, before: paged.last?.last.id)
                paged += page
                if page.count < 3 { break }
            }
            #expect(paged == list, "\(viewer)'s conversations in pages")
            #expect(list.map { "\($0.with.id.rawValue) \($0.last.id) \($0.unread)" } == want.map { "\($0.other) \($0.last) \($0.unread)" },
                    "\(viewer)'s conversations")
            for other in users {
                let between = messages.filter { m in
                    let (s, r): (Int64, Int64) = (m["sender"], m["recipient"])
                    return (s, r) == (viewer, other) || (s, r) == (other, viewer)
                }.map { $0["id"] as Int64 }
                // Someone who blocked the viewer is no one to them: no page at all.
                let blockedBy = blocks.contains { $0 == (other, viewer) }
                var paged: [Int64] = []
                var before: Int64?
                while true {
                    let page = try await store.messages(of: UserID(viewer), with: UserID(other), limit: 3, before: before)
                    #expect((page == nil) == blockedBy, "\(viewer) with \(other): blocked by them")
                    guard let page else { break }
                    paged += page.map(\.id)
                    guard page.count == 3, let last = page.last else { break }
                    before = last.id
                }
                #expect(paged == (blockedBy ? [] : between), "\(viewer) with \(other)")
            }
        }
    }

    @Test(.enabled(if: TestDatabase.isSQLite)) func listsAndPagesFollowEveryMessageSentReadAndDeleted() async throws {
        let t = try await TemporaryStore(now: { Date(timeIntervalSince1970: 1_781_100_000) })
        defer { t.remove() }
        var g = SeededGenerator(seed: 20261124)
        let users = Array(Int64(1)...14)
        var friends: [(Int64, Int64)] = []
        for a in users {
            for b in users where a < b && Int.random(in: 0..<3, using: &g) == 0 { friends.append((a, b)) }
        }
        let blocks: [(Int64, Int64)] = [(3, 7), (9, 2)]
        try await t.sql.addRiders(users)
        for (a, b) in friends {
            try await t.sql.execute("INSERT INTO friendships (requester, addressee, status, created_at, accepted_at) VALUES (?, ?, 'accepted', 0, 0)",
                           [a, b])
        }
        for (a, b) in blocks {
            try await t.sql.execute("INSERT INTO blocks (blocker, blocked, created_at) VALUES (?, ?, 0)", [a, b])
        }
        // History from before a friendship ended (with a block, between the blocked), and a
        // message a user sent themselves: neither can be sent today, both can be stored.
        for (sender, recipient, read) in [(3, 7, true), (7, 3, false), (2, 9, false), (5, 6, false), (6, 5, true), (8, 8, false)] {
            try await t.sql.execute("INSERT INTO messages (sender, recipient, body, sent_at, read_at) VALUES (?, ?, 'hi', 0, ?)",
                           [sender, recipient, read ? 1 : nil])
        }
        for round in 0..<3 {
            for _ in 0..<80 {
                let (a, b) = friends.randomElement(using: &g)!
                let (sender, recipient) = Bool.random(using: &g) ? (a, b) : (b, a)
                if Int.random(in: 0..<4, using: &g) == 0 {
                    try await t.store.markRead(of: UserID(recipient), from: UserID(sender))
                } else {
                    _ = try await t.store.sendMessage(from: UserID(sender), to: UserID(recipient), body: "round \(round)")
                }
            }
            try await Self.check(t.sqlite, users: users, blocks: blocks)
        }
        #expect(try await t.sql.int("SELECT count(*) FROM conversations WHERE unread > 0") ?? 0 > 0)

        // Messages unread again and deleted (the newest of a conversation among them), and
        // accounts deleted: their messages cascade.
        try await t.sql.execute("UPDATE messages SET read_at = NULL WHERE id % 5 = 0")
        try await t.sql.execute("UPDATE messages SET read_at = 2 WHERE id % 3 = 0")
        try await t.sql.execute("DELETE FROM messages WHERE id % 7 = 0 OR id IN (SELECT last_id FROM conversations WHERE user_id = 1)")
        try await t.sql.execute("DELETE FROM users WHERE id IN (4, 11)")
        let left = users.filter { ![4, 11].contains($0) }
        try await Self.check(t.sqlite, users: left, blocks: blocks)
        #expect(try await t.sqlite.pool.read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM conversations WHERE user_id IN (4, 11) OR other_id IN (4, 11)")
        } == 0)

        // A message keeps its parties.
        await #expect(throws: DatabaseError.self) {
            try await t.sql.execute("UPDATE messages SET recipient = 1 WHERE sender = 8")
        }
        try await t.sql.execute("DELETE FROM messages")
        #expect(try await t.sql.int("SELECT count(*) FROM conversations") == 0)
    }

    /// A store made before the rows were kept gets them from its messages, and keeps them after.
    @Test(.enabled(if: TestDatabase.isSQLite)) func theMigrationKeepsTheConversationsAlreadyHeld() async throws {
        let file = try OldStore(upTo: "2026-11-24 leaderboard ranks from counts")
        defer { file.remove() }
        let (old, path) = (file.pool, file.path)
        try await old.write { db in
            try db.addRiders(1...5)
            try db.execute(sql: "INSERT INTO friendships (requester, addressee, status, created_at, accepted_at) VALUES (1, 2, 'accepted', 0, 0)")
            for (n, (sender, recipient)) in [(1, 2), (2, 1), (1, 2), (3, 1), (1, 3), (4, 5), (5, 5), (2, 1)].enumerated() {
                try db.execute(sql: "INSERT INTO messages (sender, recipient, body, sent_at, read_at) VALUES (?, ?, 'hi', ?, ?)",
                               arguments: [sender, recipient, n, n % 2 == 0 ? nil : n])
            }
        }
        try old.close()
        let store = try SpatiaLiteStore(path: path, now: { Date(timeIntervalSince1970: 1_781_100_000) })
        defer { try? store.close() }
        try await Self.check(store, users: Array(1...5), blocks: [])
        _ = try await store.sendMessage(from: UserID(2), to: UserID(1), body: "after")
        try await store.markRead(of: UserID(2), from: UserID(1))
        try await Self.check(store, users: Array(1...5), blocks: [])
    }
}

/// A conversation request reads its own rows, not the user's history.
@Suite("Conversation query plans", .enabled(if: TestDatabase.isSQLite))
struct ConversationPlanTests {
    @Test(arguments: [
        // The list: a page of the viewer's rows newest first, each one's last message by id.
        (SpatiaLiteStore.conversationList, "SEARCH c USING INDEX conversations_by_last (user_id=? AND last_id<?)"),
        (SpatiaLiteStore.conversationList, "SEARCH m USING INTEGER PRIMARY KEY (rowid=?)"),
        // A page: each direction newest first on the pair index, merged (no sort of either).
        (SpatiaLiteStore.conversationPage, "SEARCH messages USING INDEX messages_by_pair (sender=? AND recipient=? AND id<?)"),
        (SpatiaLiteStore.conversationPage, "MERGE (UNION ALL)"),
        // Marking read: the unread messages of the pair only.
        (SpatiaLiteStore.markRead, "SEARCH messages USING COVERING INDEX messages_unread (recipient=? AND read_at=? AND sender=?)"),
    ])
    func readsByKey(_ sql: String, _ step: String) async throws {
        let plan = try await QueryPlanTests.plan(sql, ["me": 1, "other": 2, "before": 1000, "limit": 50, "now": 0])
        #expect(plan.contains(step), "\(plan)")
        // Nothing scanned, nothing sorted (the block list's union aside).
        #expect(plan.allSatisfy { !$0.hasPrefix("SCAN") }, "\(plan)")
        #expect(plan.allSatisfy { !$0.contains("TEMP B-TREE") || $0 == "UNION USING TEMP B-TREE" }, "\(plan)")
    }
}
