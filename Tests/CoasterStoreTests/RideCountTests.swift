import CoasterCore
@testable import CoasterStore
import CoasterTestSupport
import Foundation
import GRDB
import Testing

/// A rider's facts and a park's ride counts from the counts the triggers keep, against the ride
/// logs themselves.
@Suite("Ride counts")
struct RideCountTests {
    /// Every rider's facts and counts in every park equal what their ride logs say.
    static func check(_ store: SpatiaLiteStore, users: [Int64]) async throws {
        try await store.pool.read { db in
            let logs = try Row.fetchAll(db, sql: """
                SELECT l.user_id, l.ride_id, r.park_id, r.type FROM ride_logs l JOIN rides r ON r.id = l.ride_id
                """)
            let kept = try Row.fetchAll(db, sql: "SELECT user_id, ride_id, rides FROM ride_counts").map {
                "\($0["user_id"] as Int64) \($0["ride_id"] as String) \($0["rides"] as Int)"
            }
            var counts: [String: Int] = [:]
            for log in logs { counts["\(log["user_id"] as Int64) \(log["ride_id"] as String)", default: 0] += 1 }
            #expect(kept.sorted() == counts.map { "\($0.key) \($0.value)" }.sorted())
            let parks = Set(logs.map { $0["park_id"] as String })
            for user in users {
                let mine = logs.filter { $0["user_id"] == user }
                var byRide: [String: Int] = [:]
                for log in mine { byRide[log["ride_id"], default: 0] += 1 }
                let coasters = Set(mine.filter { $0["type"] == "coaster" }.map { $0["ride_id"] as String })
                let facts = try SpatiaLiteStore.riderFacts(UserID(user), db)
                #expect(facts.totalRides == mine.count, "\(user)")
                #expect(facts.distinctRides == byRide.count, "\(user)")
                #expect(facts.coasterCredits == coasters.count, "\(user)")
                #expect(facts.mostRidesOfOneRide == byRide.values.max() ?? 0, "\(user)")
                for park in parks {
                    var want: [String: Int] = [:]
                    for log in mine where log["park_id"] == park { want[log["ride_id"], default: 0] += 1 }
                    let got = try Row.fetchAll(db, sql: SpatiaLiteStore.parkRideCounts, arguments: [user, park]).map { "\($0["ride_id"] as String) \($0["n"] as Int)" }
                    #expect(got.sorted() == want.map { "\($0.key) \($0.value)" }.sorted(), "\(user) in \(park)")
                }
            }
        }
    }

    @Test(.enabled(if: TestDatabase.isSQLite)) func factsAndCountsFollowEveryRideLoggedMovedAndDeleted() async throws {
        let t = try await TemporaryStore(now: { Date(timeIntervalSince1970: 1_781_100_000) })
        defer { t.remove() }
        _ = try await t.store.replaceParks([try Parks.definition("cedar-point"), try Parks.definition("kings-island")])
        var g = SeededGenerator(seed: 20261124)
        let users = Array(Int64(1)...12)
        let rides = try await t.sql.strings("SELECT id FROM rides ORDER BY id")
        // Few rides a rider, so that most are ridden more than once.
        let favourites = Dictionary(uniqueKeysWithValues: users.map { user in (user, (0..<5).map { _ in rides.randomElement(using: &g)! }) })
        let logs = (0..<400).map { n in
            let user = users.randomElement(using: &g)!
            return (user, favourites[user]!.randomElement(using: &g)!, n)
        }
        try await t.sql.addRiders(users)
        for (user, ride, n) in logs {
            try await t.sql.execute("INSERT INTO ride_logs (user_id, ride_id, ridden_at) VALUES (?, ?, ?)", [user, ride, n])
        }
        try await Self.check(t.sqlite, users: users)
        #expect(try await t.sql.int("SELECT max(rides) FROM ride_counts") ?? 0 > 1)

        // Logs moved to another rider and ride, deleted, and an account deleted (a cascade).
        try await t.sql.execute("UPDATE ride_logs SET user_id = 12 - user_id WHERE id % 5 = 0 AND user_id < 12")
        try await t.sql.execute("UPDATE ride_logs SET ride_id = ? WHERE id % 7 = 0", [rides[0]])
        try await t.sql.execute("DELETE FROM ride_logs WHERE id % 3 = 0")
        try await t.sql.execute("DELETE FROM users WHERE id = 4")
        try await Self.check(t.sqlite, users: users.filter { $0 != 4 })
        #expect(try await t.sql.int("SELECT count(*) FROM ride_counts WHERE user_id = 4") == 0)

        try await t.sql.execute("DELETE FROM ride_logs")
        #expect(try await t.sql.int("SELECT count(*) FROM ride_counts") == 0)
        try await Self.check(t.sqlite, users: users)
    }

    /// A store made before the counts existed gets them from its ride logs.
    @Test(.enabled(if: TestDatabase.isSQLite)) func theMigrationCountsTheRideLogsAlreadyKept() async throws {
        let file = try OldStore(upTo: "2026-11-24 conversations kept by triggers")
        defer { file.remove() }
        let (old, path) = (file.pool, file.path)
        try await old.write { db in
            try db.execute(sql: """
                INSERT INTO parks (id, name, time_zone, imported_at, boundary)
                VALUES ('p', 'P', 'UTC', 0, GeomFromText('MULTIPOLYGON(((0 0, 1 0, 1 1, 0 0)))', 4326))
                """)
            for (ride, type) in [("p.a", "coaster"), ("p.b", "coaster"), ("p.c", "flat")] {
                try db.execute(sql: "INSERT INTO rides (id, park_id, name, type, status) VALUES (?, 'p', ?, ?, 'operating')", arguments: [ride, ride, type])
            }
            try db.addRiders(1...3)
            for (n, (user, ride)) in [(1, "p.a"), (1, "p.a"), (1, "p.c"), (2, "p.b"), (2, "p.a"), (1, "p.b"), (3, "p.c")].enumerated() {
                try db.execute(sql: "INSERT INTO ride_logs (user_id, ride_id, ridden_at) VALUES (?, ?, ?)", arguments: [user, ride, n])
            }
        }
        try old.close()
        let store = try SpatiaLiteStore(path: path, now: { Date(timeIntervalSince1970: 1_781_100_000) })
        defer { try? store.close() }
        try await Self.check(store, users: [1, 2, 3])
        let facts = try await store.pool.read { db in try SpatiaLiteStore.riderFacts(UserID(1), db) }
        #expect(facts == RiderFacts(totalRides: 4, coasterCredits: 2, parksVisited: 0, mostRidesOfOneRide: 2, distinctRides: 3))
    }
}

/// A rider's facts read the rides they have ridden, not their ride logs, and the parks they
/// have visited, not their visits.
@Suite("Ride count query plans", .enabled(if: TestDatabase.isSQLite))
struct RideCountPlanTests {
    @Test func aParksCountsAreReadByKey() async throws {
        let plan = try await QueryPlanTests.plan(SpatiaLiteStore.parkRideCounts, [1, "cedar-point"])
        #expect(plan.contains { $0.hasPrefix("SEARCH c USING PRIMARY KEY (user_id=?") }, "\(plan)")
        #expect(plan.allSatisfy { !$0.hasPrefix("SCAN") && !$0.contains("ride_logs") }, "\(plan)")
    }

    /// The facts read the rider's counts by key, and of their ride logs only those from the
    /// settling time on (none for the rider's own), a range of `ride_logs_by_time`.
    @Test func aRidersFactsAreReadByKey() async throws {
        let plan = try await QueryPlanTests.plan(SpatiaLiteStore.rideFacts, ["user": 1, "settled": 0.0])
        #expect(plan.contains { $0.hasPrefix("SEARCH c USING PRIMARY KEY (user_id=?") }, "\(plan)")
        #expect(plan.contains { $0.contains("ride_logs USING INDEX ride_logs_by_time (user_id=? AND ridden_at>?)") }, "\(plan)")
        #expect(plan.allSatisfy { !$0.hasPrefix("SCAN") }, "\(plan)")
    }

    @Test(.enabled(if: TestDatabase.isSQLite)) func parksVisitedSearchesOneParkAfterAnother() async throws {
        let plan = try await QueryPlanTests.plan(SpatiaLiteStore.parksVisited, ["user": 1, "settled": 0.0])
        #expect(plan.contains("SEARCH visits USING INDEX visits_by_park (user_id=? AND park_id>?)"), "\(plan)")
        // The only scans are of the parks found so far.
        #expect(plan.allSatisfy { !$0.hasPrefix("SCAN") || ["SCAN seen", "SCAN CONSTANT ROW"].contains($0) }, "\(plan)")
    }
}

/// The parks a rider has visited, one park after another on the index, against a count of the
/// distinct parks of their visits.
@Suite("Parks visited", .enabled(if: TestDatabase.isSQLite))
struct ParksVisitedTests {
    @Test(.enabled(if: TestDatabase.isSQLite)) func parksVisitedIsTheDistinctParksOfEveryVisit() async throws {
        let t = try await TemporaryStore(now: { Date(timeIntervalSince1970: 1_781_100_000) })
        defer { t.remove() }
        // The three parks and three copies of each (no zones, no rides): twelve to visit.
        var parks: [ParkID] = []
        for id in Parks.all {
            let definition = try Parks.definition(id)
            var copies = [definition]
            for n in 1...3 {
                var copy = definition
                copy.park.id = ParkID(rawValue: "\(id)-\(n)")
                copy.zones = []
                copy.rides = []
                copies.append(copy)
            }
            _ = try await t.store.replaceParks(copies)
            parks += copies.map(\.park.id)
        }
        var g = SeededGenerator(seed: 20261124)
        let users = Array(Int64(1)...12)
        // Rider 1 never visits; the rest visit a few of the parks or all of them, often again.
        let visits = (0..<1200).map { n in
            let user = users.dropFirst().randomElement(using: &g)!
            return (user, parks.prefix(Int(user) % parks.count + 1).randomElement(using: &g)!, n)
        }
        try await t.sql.addRiders(users)
        for (user, park, n) in visits {
            try await t.sql.execute("""
                INSERT INTO visits (user_id, park_id, how, entered_at, left_at, last_evidence_at) VALUES (?, ?, 'automatic', ?, ?, ?)
                """, [user, park.rawValue, n, n + 1, n + 1])
        }
        let all = parks.count
        try await t.sqlite.pool.read { db in
            var counts: Set<Int> = []
            for user in users {
                let want = try Int.fetchOne(db, sql: "SELECT count(DISTINCT park_id) FROM visits WHERE user_id = ?", arguments: [user])!
                #expect(try SpatiaLiteStore.riderFacts(UserID(user), db).parksVisited == want, "\(user)")
                counts.insert(want)
            }
            #expect(counts.contains(0) && counts.contains(all) && counts.count > 5, "\(counts.sorted())")
        }
    }
}
