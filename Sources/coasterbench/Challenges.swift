import ArgumentParser
import CoasterAPI
import CoasterCore
import CoasterService
import CoasterStore
import Foundation
import Synchronization

/// Prepares a store for tools/bench/challenges: one public `rides`
/// challenge of `--participants` members whose progress was logged ride by ride, so that its
/// ranking has ties and an order, and `--riders` riders on a visit to one park, each a member of
/// `--challenges` active challenges that a log of its ride counts for, so that every ride log the
/// benchmark sends updates them all; and `--plain-riders` on the same visit in no challenge, whose
/// logs say what the challenges add to one.
///
/// Everything but the users goes through the store's own operations (create, join, log a ride,
/// settle), as the service would have written it: the store's clock is set back for the load,
/// so that the participants' rides are older than the location time-to-live and shown to
/// everyone, as a week-old challenge's are.
struct ChallengesLoad: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "challenges",
        abstract: "Load a new database for the challenges benchmark (tools/bench/challenges), and write session tokens for wrk.",
        discussion: """
            The world is the generated one (`load`'s) of participants + riders + plain riders users. Writes into \
            --directory: `stats` (every participant: `token lat lon park ride -`, for GET /v1/me/stats), \
            `members` (the participants ranked in the middle fifth of the big challenge, for its ranking), \
            `riders` (the riders in the order the ride-log script takes them; `ride` is the ride to log), `plain` \
            (the riders in no challenge, the same way), \
            `challenge` (the big challenge's id) and `ride` (the ride's id).
            """)

    @Option(help: "Members of the big public challenge, whose ranking is read.")
    var participants = 10_000

    @Option(help: "Riders, each a member of --challenges challenges; each can log the ride once (then its cycle refuses a second log for 150 s).")
    var riders = 20_000

    @Option(help: "Active challenges every rider is a member of, each counting a log of the ride.")
    var challenges = 20

    @Option(help: "Riders on the same visit in no challenge, whose ride logs are the reference of what the challenges add (0: none).")
    var plainRiders = 50_000

    @Option(help: "Workload seed.")
    var seed: UInt64 = 20_261_121

    @Option(help: "The database: a SpatiaLite file to create (must not exist), or a postgres:// URL of an empty database (?schema=NAME for a new schema).")
    var database: String

    @Option(help: "Directory for the tokens files (created if missing).")
    var directory: String

    @Option(help: "Store operations in flight at once while loading.")
    var concurrency = 8

    /// The most rides a participant logs; how many each logs is drawn from an exponential of mean 3.
    static let mostRides = 12

    func validate() throws {
        guard self.participants >= 2, self.riders >= 2, self.plainRiders >= 0 else {
            throw ValidationError("--participants and --riders are at least 2, --plain-riders at least 0")
        }
        guard (1...ChallengeRules().maximumActiveMemberships - 1).contains(self.challenges) else {
            throw ValidationError("--challenges is 1 to \(ChallengeRules().maximumActiveMemberships - 1)")
        }
        guard self.concurrency >= 1 else { throw ValidationError("--concurrency is at least 1") }
    }

    func run() async throws {
        if case .spatiaLite(let path) = try storeLocation(self.database), FileManager.default.fileExists(atPath: path) {
            throw ValidationError("\(path) exists")
        }
        try FileManager.default.createDirectory(atPath: self.directory, withIntermediateDirectories: true)
        let start = Date()
        let users = self.participants + self.riders + self.plainRiders
        let w = Workload.make(users: users, seed: self.seed)
        print("generated \(users) users in \(String(format: "%.1f", Date().timeIntervalSince(start))) s")
        // The participants' rides happen between `base` and an hour later, more than the location
        // time-to-live before now, and are settled (shown to everyone) before the store is served.
        let base = start.addingTimeInterval(-3 * 3600)
        let clock = BenchClock(base)
        let store = try await openStore(self.database, now: { clock.now() })
        defer { try? store.close() }
        guard try await store.parkSummaries().isEmpty else { throw ValidationError("the database \(self.database) is not empty") }
        var definitions: [ParkDefinition] = []
        for park in w.parks {
            let zones = w.zones.filter { $0.park == park.id }
            let rides = zones.compactMap { z in z.ride.map { Ride(id: $0, park: park.id, name: z.name, type: .coaster, status: .operating) } }
            definitions.append(ParkDefinition(park: park, zones: zones, rides: rides))
        }
        _ = try await store.replaceParks(definitions)
        guard let ride = definitions.lazy.compactMap(\.rides.first).first else { throw ValidationError("the world has no ride") }
        let park = ride.park

        // Who is who, and each participant's rides: 0–12, most few, drawn once.
        var g = SeededGenerator(seed: self.seed &+ 47)
        let ids = w.people.keys.sorted().shuffled(using: &g)
        let members = Array(ids.prefix(self.participants)), riders = Array(ids.dropFirst(self.participants).prefix(self.riders))
        let plain = Array(ids.dropFirst(self.participants + self.riders))
        var rides: [UserID: Int] = [:]
        for id in members { rides[id] = min(Self.mostRides, Int(-log(1 - Double.random(in: 0..<1, using: &g)) * 3)) }
        // Half ride 30 s after the other half, so that equal counts reached at once tie and the
        // later half ranks after them.
        let late = Set(members.filter { _ in Bool.random(using: &g) })
        let rideTime = { (n: Int, user: UserID) in base.addingTimeInterval(120 + Double(n) * 200 + (late.contains(user) ? 30 : 0)) }

        // One bcrypt hash for everyone: logging in is not what is measured.
        let hash = try await Sessions(store: store, policy: AccountPolicy()).hashPassword("benchmark password")
        var tokens: [UserID: String] = [:]
        var bulk: [BulkUser] = []
        bulk.reserveCapacity(ids.count)
        // Everyone on a visit to the ride's park since before the challenges began.
        let entered = base.addingTimeInterval(-60)
        for id in w.people.keys.sorted() {
            let p = w.people[id]!
            let t = Sessions.newToken()
            tokens[id] = t
            bulk.append(BulkUser(id: id, username: p.username, displayName: p.displayName, passwordHash: hash, latest: p.latest, zones: [],
                                 visits: [(park, entered)], tokenHash: Sessions.hash(t)))
        }
        var friendships: [(UserID, UserID)] = []
        for (id, p) in w.people { for f in p.friends where id < f { friendships.append((id, f)) } }
        try await store.bulkLoad(users: bulk, friendships: friendships) { print($0) }

        let rules = ChallengeRules(), ttl = LocationPrivacy().timeToLive
        let end = start.addingTimeInterval(30 * 86_400)
        let width = self.concurrency
        // The big challenge: its author and everyone else joins as it starts.
        clock.set(base)
        let big = try await store.createChallenge(
            ChallengeDraft(name: "Most rides this month", description: "Every validated ride counts.", unit: .rides, target: 100, start: base,
                           end: end, visibility: .public, parks: [], evidence: .inPark),
            author: members[0], rules: rules, timeToLive: ttl).challenge.id
        var phase = Date()
        try await concurrently(Array(members.dropFirst()), width: width) { _ = try await store.join(big, user: $0, rules: rules) }
        print("\(members.count) participants joined challenge \(big) in \(String(format: "%.1f", Date().timeIntervalSince(phase))) s")
        // Their rides, one wave per ride and half, each wave at its own time.
        phase = Date()
        var logged = 0
        for n in 0..<Self.mostRides {
            for half in [false, true] {
                let wave = members.filter { rides[$0]! > n && late.contains($0) == half }
                guard let first = wave.first else { continue }
                clock.set(rideTime(n, first))
                try await concurrently(wave, width: width) { user in
                    if case .failure(let refusal) = try await store.logRide(user: user, ride: ride.id, visitTimeout: CheckinPolicy().visitTimeout) {
                        throw ValidationError("a participant's ride log was refused: \(refusal)")
                    }
                }
                logged += wave.count
            }
        }
        print("\(logged) ride logs of the participants in \(String(format: "%.1f", Date().timeIntervalSince(phase))) s")

        // The riders' challenges, a third of each unit a log of the ride counts for, every other
        // one scoped to the ride's park.
        phase = Date()
        clock.set(base.addingTimeInterval(60))
        var theirs: [Int64] = []
        for c in 0..<self.challenges {
            let unit: ChallengeUnit = [.rides, .credits, .ride(ride.id)][c % 3]
            theirs.append(try await store.createChallenge(
                ChallengeDraft(name: "Riders \(c + 1)", description: "The ride benchmark's challenge \(c + 1).", unit: unit, target: nil,
                               start: base, end: end, visibility: .public, parks: c % 2 == 0 ? [park] : [], evidence: .inPark),
                author: riders[0], rules: rules, timeToLive: ttl).challenge.id)
        }
        let joins = riders.dropFirst().flatMap { user in theirs.map { (user, $0) } }
        try await concurrently(joins, width: width) { _ = try await store.join($0.1, user: $0.0, rules: rules) }
        print("\(riders.count) riders in \(theirs.count) challenges (\(joins.count) joins) in \(String(format: "%.1f", Date().timeIntervalSince(phase))) s")

        // Shown to everyone and counted on the leaderboards, as the housekeeping sweeps would have
        // after the time-to-live: left to the server, the tallies would hold its first seconds.
        clock.set(Date())
        var settled = 0
        while true {
            let moves = try await store.settleChallengeCredits(through: clock.now(), limit: 5_000)
            if moves.isEmpty { break }
            settled += moves.count
        }
        while try await store.settleTallies(through: clock.now(), limit: 5_000) == 5_000 {}

        // The ranking's order (progress, then who reached it first, then id), to pick the middle
        // fifth and check the store's ranks.
        func reached(_ user: UserID) -> Double { rides[user]! == 0 ? 0 : rideTime(rides[user]! - 1, user).timeIntervalSince1970 }
        let order = members.sorted {
            (rides[$0]!, -reached($0), -$0.rawValue) > (rides[$1]!, -reached($1), -$1.rawValue)
        }
        var rank: [UserID: Int] = [:]
        for (n, user) in order.enumerated() {
            let previous = n > 0 ? order[n - 1] : nil
            rank[user] = previous.map { rides[$0] == rides[user] && reached($0) == reached(user) ? rank[$0]! : n + 1 } ?? 1
        }
        let middle = Array(order[(order.count * 2 / 5)..<max(order.count * 2 / 5 + 1, order.count * 3 / 5)])
        for viewer in [middle.first!, middle.last!] {
            guard let page = try await store.ranking(big, viewer: viewer, limit: 50, offset: 0), let mine = page.mine else {
                throw ValidationError("the ranking of challenge \(big) has no line for participant \(viewer.rawValue)")
            }
            guard mine.rank == rank[viewer], page.entries.count == min(50, members.count), page.entries.first?.rank == 1 else {
                throw ValidationError("the store ranks participant \(viewer.rawValue) \(mine.rank), not \(rank[viewer]!) (page of \(page.entries.count))")
            }
        }

        func line(_ id: UserID) -> String {
            let at = w.people[id]!.latest!.position
            return "\(tokens[id]!) \(at.lat) \(at.lon) \(park.rawValue) \(ride.id.rawValue) -\n"
        }
        try members.map(line).joined().write(toFile: self.directory + "/stats", atomically: true, encoding: .utf8)
        try middle.map(line).joined().write(toFile: self.directory + "/members", atomically: true, encoding: .utf8)
        try riders.map(line).joined().write(toFile: self.directory + "/riders", atomically: true, encoding: .utf8)
        try plain.map(line).joined().write(toFile: self.directory + "/plain", atomically: true, encoding: .utf8)
        try "\(big)\n".write(toFile: self.directory + "/challenge", atomically: true, encoding: .utf8)
        try "\(ride.id.rawValue)\n".write(toFile: self.directory + "/ride", atomically: true, encoding: .utf8)
        let lines = Set(order.map { rank[$0]! }).count
        print("""
            loaded challenge \(big) with \(members.count) participants (\(lines) distinct ranks, top \(rides[order[0]]!) rides, \
            the middle fifth ranked \(rank[middle.first!]!)–\(rank[middle.last!]!); \(settled) moves settled), \
            \(riders.count) riders each in \(theirs.count) challenges and \(plain.count) in none on \(ride.id.rawValue), \
            \(friendships.count) friendships, in \(String(format: "%.1f", Date().timeIntervalSince(start))) s
            """)
    }

    /// Runs `body` on every item, at most `width` at once.
    private func concurrently<T: Sendable>(_ items: [T], width: Int, _ body: @escaping @Sendable (T) async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            var next = 0
            while next < min(width, items.count) {
                let item = items[next]
                group.addTask { try await body(item) }
                next += 1
            }
            while try await group.next() != nil, next < items.count {
                let item = items[next]
                group.addTask { try await body(item) }
                next += 1
            }
            try await group.waitForAll()
        }
    }
}

/// The loading store's clock, set back while the challenges' history is written.
private final class BenchClock: Sendable {
    private let date: Mutex<Date>

    init(_ date: Date) { self.date = Mutex(date) }

    func now() -> Date { self.date.withLock { $0 } }

    func set(_ date: Date) { self.date.withLock { $0 = date } }
}
