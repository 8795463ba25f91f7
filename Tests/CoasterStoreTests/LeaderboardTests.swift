import CoasterCore
@testable import CoasterStore
import CoasterTestSupport
import Foundation
import GRDB
import Testing

/// A leaderboard's pages and the viewer's rank, from the rank index and the counts the triggers
/// keep, against every rider sorted by the rule (value, then who got there first, then the lower
/// id) with the blocked left out.
@Suite("Leaderboards")
struct LeaderboardTests {
    struct Tally: Hashable {
        var user: Int64
        var value: Int
        var reached: Double
    }

    /// Times close together around the edges of the counts' minutes, hours and days, before 1970
    /// and at it, so that most riders tie on value and many on time.
    static let times: [Double] = [
        -90, -0.5, 0, 0.5, 59.5, 60, 60.5, 3599.4, 3600, 3600.25, 86_399.9, 86_400, 86_400 * 3 + 7,
        1_781_092_800, 1_781_092_800.25, 1_781_092_859.99, 1_781_092_860, 1_781_096_399.5, 1_781_096_400,
    ]

    /// What the board should say: the viewer's board (everyone, or the viewer and their friends)
    /// without anyone blocked either way, best first.
    static func expected(_ tallies: [Tally], viewer: Int64, friends: Set<Int64>?, blocked: Set<Int64>) -> [Tally] {
        tallies.filter { t in !blocked.contains(t.user) && (friends.map { $0.contains(t.user) || t.user == viewer } ?? true) }
            .sorted { ($1.value, $0.reached, $0.user) < ($0.value, $1.reached, $1.user) }
    }

    /// The counts the triggers should hold for these rows.
    static func counts(_ rows: [Row]) -> [String: Int] {
        var out: [String: Int] = [:]
        for row in rows {
            let (day, hour, minute) = TallyCounts.slots(row["reached_at"])
            let board = "\(row["metric"] as String) \(row["scope"] as String) \(row["period"] as String)"
            let value: Int = row["value"]
            for (level, slot) in [(0, Int64(0)), (1, day), (2, hour), (3, minute)] {
                out["\(board) \(level) \(value) \(slot)", default: 0] += 1
            }
        }
        return out
    }

    static func checkCounts(_ store: SpatiaLiteStore) async throws {
        let (stored, tallies) = try store.pool.read { db in
            (try Row.fetchAll(db, sql: "SELECT * FROM tally_counts"), try Row.fetchAll(db, sql: "SELECT * FROM tallies"))
        }
        var held: [String: Int] = [:]
        for row in stored {
            held["\(row["metric"] as String) \(row["scope"] as String) \(row["period"] as String) \(row["level"] as Int) \(row["value"] as Int) \(row["slot"] as Int64)"] = row["riders"]
        }
        #expect(held == Self.counts(tallies))
    }

    /// Every viewer's global, park and friends boards, whole and in pages, and their own rank.
    static func checkBoards(_ store: SpatiaLiteStore, users: [Int64], friends: [Int64: Set<Int64>], blocks: [(Int64, Int64)]) async throws {
        let rows = try store.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM tallies WHERE metric = 'rides' AND period = 'all'")
        }
        for viewer in users {
            let blocked = Set(blocks.compactMap { $0.0 == viewer ? $0.1 : $0.1 == viewer ? $0.0 : nil })
            for scope in [LeaderboardQuery.Scope.global, .park(ParkID(rawValue: "p")), .friends] {
                let key = if case .park = scope { "park:p" } else { "global" }
                let board = rows.filter { $0["scope"] == key }.map { Tally(user: $0["user_id"], value: $0["value"], reached: $0["reached_at"]) }
                let want = Self.expected(board, viewer: viewer, friends: scope == .friends ? friends[viewer, default: []] : nil, blocked: blocked)
                let query = LeaderboardQuery(metric: .rides, scope: scope, window: .allTime)
                let whole = try await store.leaderboard(query, viewer: UserID(viewer), limit: 1000, offset: 0)
                #expect(whole.entries.map(\.user.id.rawValue) == want.map(\.user), "\(scope) of \(viewer)")
                #expect(whole.entries.map(\.rank) == want.indices.map { $0 + 1 })
                #expect(whole.entries.map(\.value) == want.map(\.value))
                let place = want.firstIndex { $0.user == viewer }
                #expect(whole.mine?.rank == place.map { $0 + 1 }, "\(viewer)'s rank, \(scope)")
                #expect(whole.mine?.value == place.map { want[$0].value })
                let page = try await store.leaderboard(query, viewer: UserID(viewer), limit: 3, offset: 2)
                #expect(page.entries.map(\.user.id.rawValue) == Array(want.dropFirst(2).prefix(3)).map(\.user))
                #expect(page.entries.map(\.rank) == Array(3..<(3 + page.entries.count)))
                #expect(page.mine == whole.mine)
                // Walked in pages of 2, each after the last entry of the one before: the whole board.
                var walked: [LeaderboardEntry] = []
                var after: LeaderboardPosition?
                repeat {
                    let next = try await store.leaderboard(query, viewer: UserID(viewer), limit: 2, offset: 0, after: after)
                    #expect(next.mine == whole.mine)
                    walked += next.entries
                    after = next.entries.count == 2 ? next.entries.last?.position : nil
                } while after != nil
                #expect(walked == whole.entries, "\(scope) of \(viewer), walked")
                // After any place, riders on the board or not: what follows it, ranked as on the whole
                // board (for the viewers with blocks and some others: a few thousand pages).
                for place in Self.places(board) where !blocked.isEmpty || viewer % 5 == 0 {
                    let rest = try await store.leaderboard(query, viewer: UserID(viewer), limit: 4, offset: 0, after: place)
                    #expect(rest.entries == Array(whole.entries.filter { place.precedes($0.position) }.prefix(4)), "\(scope) of \(viewer) after \(place)")
                }
            }
        }
    }

    /// Places to page after: every rider's own (the blocked ones' too), and places between and
    /// beyond them: a moment later, a higher id, a value no one has.
    static func places(_ board: [Tally]) -> [LeaderboardPosition] {
        var places: [LeaderboardPosition] = []
        for t in board {
            places.append(LeaderboardPosition(value: t.value, reachedAt: t.reached, user: UserID(t.user)))
            places.append(LeaderboardPosition(value: t.value, reachedAt: t.reached, user: UserID(t.user + 100)))
            places.append(LeaderboardPosition(value: t.value, reachedAt: t.reached.nextUp, user: UserID(0)))
        }
        places.append(LeaderboardPosition(value: 99, reachedAt: 0, user: UserID(1)))
        places.append(LeaderboardPosition(value: 0, reachedAt: 0, user: UserID(1)))
        return places
    }

    @Test(.enabled(if: TestDatabase.isSQLite)) func ranksAreEveryRiderSortedWithTheBlockedLeftOut() async throws {
        let t = try await TemporaryStore(now: { Date(timeIntervalSince1970: 1_781_100_000) })
        defer { t.remove() }
        var g = SeededGenerator(seed: 20261124)
        let users = Array(Int64(1)...40)
        var friends: [Int64: Set<Int64>] = [:]
        var friendships: [(Int64, Int64, String)] = []
        for a in users {
            for b in users where a < b && Int.random(in: 0..<4, using: &g) == 0 {
                let accepted = Int.random(in: 0..<5, using: &g) > 0
                friendships.append((a, b, accepted ? "accepted" : "pending"))
                if accepted {
                    friends[a, default: []].insert(b)
                    friends[b, default: []].insert(a)
                }
            }
        }
        let blocks: [(Int64, Int64)] = [(3, 7), (9, 3), (12, 30)]
        // Most riders on the global board and in the park; a few on one only, some on neither.
        var tallies: [(String, Int64, Int, Double)] = []
        for user in users {
            for scope in ["global", "park:p"] where Int.random(in: 0..<8, using: &g) > 0 {
                tallies.append((scope, user, Int.random(in: 1...4, using: &g), Self.times.randomElement(using: &g)!))
            }
        }
        try await t.sql.addRiders(users)
        for (a, b, status) in friendships {
            try await t.sql.execute("INSERT INTO friendships (requester, addressee, status, created_at, accepted_at) VALUES (?, ?, ?, 0, 0)",
                           [a, b, status])
        }
        for (a, b) in blocks {
            try await t.sql.execute("INSERT INTO blocks (blocker, blocked, created_at) VALUES (?, ?, 0)", [a, b])
        }
        for (scope, user, value, reached) in tallies {
            try await t.sql.execute("INSERT INTO tallies (metric, scope, period, user_id, value, reached_at) VALUES ('rides', ?, 'all', ?, ?, ?)",
                           [scope, user, value, reached])
        }
        try await Self.checkCounts(t.sqlite)
        try await Self.checkBoards(t.sqlite, users: users, friends: friends, blocks: blocks)

        // Rides logged (the ride log's own upserts), accounts deleted (a cascade), tallies moved.
        let ride = Ride(id: RideID(rawValue: "p.r"), park: ParkID(rawValue: "p"), name: "R", type: .coaster, status: .operating)
        let logged = (0..<60).map { _ in (UserID(users.randomElement(using: &g)!), Date(timeIntervalSince1970: Self.times.randomElement(using: &g)!)) }
        try await t.sqlite.pool.write { db in
            for (user, at) in logged { try SpatiaLiteStore.tally(user: user, ride: ride, at: at, db) }
            try db.execute(sql: "DELETE FROM users WHERE id IN (5, 17, 28)")
            try db.execute(sql: "UPDATE tallies SET reached_at = reached_at + 3600 WHERE user_id % 7 = 0")
        }
        try await Self.checkCounts(t.sqlite)
        #expect(try await t.sql.int("SELECT count(*) FROM tally_counts WHERE period != 'all'") ?? 0 > 0)
        try await Self.checkBoards(t.sqlite, users: users.filter { ![5, 17, 28].contains($0) }, friends: friends.mapValues { $0.subtracting([5, 17, 28]) },
                                   blocks: blocks)

        try await t.sql.execute("DELETE FROM tallies")
        #expect(try await t.sql.int("SELECT count(*) FROM tally_counts") == 0)
    }

    /// A store made before the counts existed gets them from its tallies.
    @Test(.enabled(if: TestDatabase.isSQLite)) func theMigrationCountsTheTalliesAlreadyKept() async throws {
        let file = try OldStore(upTo: "2026-11-22 fixes written with fewer pages")
        defer { file.remove() }
        let (old, path) = (file.pool, file.path)
        try await old.write { db in
            try db.addRiders(1...6)
            for user in 1...6 {
                try db.execute(sql: "INSERT INTO tallies (metric, scope, period, user_id, value, reached_at) VALUES ('rides', 'global', 'all', ?, ?, ?)",
                               arguments: [user, user % 3 + 1, Self.times[user * 3]])
            }
        }
        try old.close()
        let store = try SpatiaLiteStore(path: path, now: { Date(timeIntervalSince1970: 1_781_100_000) })
        defer { try? store.close() }
        try await Self.checkCounts(store)
        try await Self.checkBoards(store, users: Array(1...6), friends: [:], blocks: [])
    }
}
