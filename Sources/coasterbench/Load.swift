import ArgumentParser
import CoasterAPI
import CoasterCore
import CoasterService
import CoasterStore
import Foundation

/// Writes the generated world into a new store (a SpatiaLite file, or an empty PostgreSQL database
/// or schema) for the HTTP-level benchmark, with session tokens for a sample of users.
struct Load: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Bulk-load the benchmark world into a new database, and write session tokens for wrk.",
        discussion: """
            The sampled users, who get sessions, are the world's askers (every level's same ones, \
            Workload.askers). The tokens file has one line per sampled user, `token lat lon park ride friend`: the user's \
            position, the park they stand in, a ride within wait-reporting reach and a friend they have \
            a conversation with (`-` for none), for the wrk scripts in tools/bench. Registering a \
            million users over HTTP is not the benchmark.

            With --keep DIR, a loaded world is kept in DIR (a SpatiaLite file with its tokens and \
            askers, by users and seed) and the next load of the same world copies it and moves its \
            times to the present instead (SpatiaLiteStore.bulkShiftTimes: positions, visits, \
            sessions, friendships, ride logs and the leaderboards, messages): about 4.5 minutes \
            instead of 15 at a million users. A kept world is used only when the generator \
            (Workload.version) and the schema (the last migration) are this build's; otherwise it \
            is loaded again and replaces the kept one.
            """)

    @OptionGroup var world: WorldOptions

    @Option(help: "The database: a SpatiaLite file to create (must not exist), or a postgres:// URL of an empty database (?schema=NAME for a new schema).")
    var database: String

    @Option(help: "Where to write the tokens file.")
    var tokens: String

    @Option(help: "Where to write the askers file: `k id token`, nearby's askers in the order every level draws them (tools/bench/answers.py reads it).")
    var askers: String?

    @Option(help: "A directory of kept worlds: use the world kept there if it matches, else load it and keep it there (SpatiaLite files only).")
    var keep: String?

    func run() async throws {
        let location = try storeLocation(self.database)
        if case .spatiaLite(let path) = location, FileManager.default.fileExists(atPath: path) {
            throw ValidationError("\(path) exists")
        }
        guard let keep = self.keep else { return try await self.load(askers: self.askers) }
        guard case .spatiaLite(let path) = location else { throw ValidationError("--keep keeps SpatiaLite files; \(self.database) is not one") }
        let kept = KeptWorld(directory: URL(fileURLWithPath: keep), world: self.world)
        if let loadedAt = kept.loadedAt() {
            do {
                return try await kept.use(database: path, tokens: self.tokens, askers: self.askers, loadedAt: loadedAt)
            } catch {
                print("could not use the world kept in \(kept.directory.path): \(error); loading it again")
            }
        }
        // The askers are kept whether or not this load was asked for them.
        let askers = self.askers ?? path + ".askers"
        let loadedAt = Date()
        try await self.load(askers: askers)
        kept.keep(database: path, tokens: self.tokens, askers: askers, loadedAt: loadedAt)
        if self.askers == nil { try FileManager.default.removeItem(atPath: askers) }
    }

    /// Generates the world and writes it into the store, and the askers to `askersPath`.
    private func load(askers askersPath: String?) async throws {
        let start = Date()
        let w = Workload.make(users: self.world.users, seed: self.world.seed)
        print("generated \(self.world.users) users in \(String(format: "%.1f", Date().timeIntervalSince(start))) s")
        let store = try await openStore(self.database)
        var closed = false
        defer { if !closed { try? store.close() } }
        guard try await store.parkSummaries().isEmpty else { throw ValidationError("the database \(self.database) is not empty") }
        var definitions: [ParkDefinition] = []
        for park in w.parks {
            let zones = w.zones.filter { $0.park == park.id }
            let rides = zones.compactMap { z in z.ride.map { Ride(id: $0, park: park.id, name: z.name, type: .coaster, status: .operating) } }
            definitions.append(ParkDefinition(park: park, zones: zones, rides: rides))
        }
        _ = try await store.replaceParks(definitions)
        let index = try FenceIndex(parks: w.parks, zones: w.zones, replicas: 1)
        // One bcrypt hash for everyone: logging in is not what is measured.
        let hash = try await Sessions(store: store, policy: AccountPolicy()).hashPassword("benchmark password")
        var g = SeededGenerator(seed: self.world.seed &+ 7)
        let ids = w.people.keys.sorted()
        let askers = Workload.askerIDs(users: ids.count)
        let sampled = Set(askers)
        var tokenOf: [UserID: String] = [:]
        var lines: [(id: UserID, text: String)] = []
        let reportPolicy = WaitReportPolicy()
        var users: [BulkUser] = []
        users.reserveCapacity(ids.count)
        for id in ids {
            let p = w.people[id]!
            var token: Data?
            let latest = p.latest!
            if sampled.contains(id) {
                let t = Sessions.newToken()
                token = Sessions.hash(t)
                tokenOf[id] = t
                // A ride the user may report: its zone within the reporting reach of any fix at this
                // position (WaitReportPolicy), whatever its accuracy: the fixes script changes it.
                let reach = index.locate(latest.position, accuracy: reportPolicy.nearDistance)
                let ride = reach.lazy.flatMap(\.zones).first { $0.kind == .ride && $0.ride != nil }?.ride
                let park = index.locate(latest.position, accuracy: 0).first?.id
                lines.append((id, "\(t) \(latest.position.lat) \(latest.position.lon) \(park?.rawValue ?? "-") \(ride?.rawValue ?? "-")"))
            }
            let zones = index.locate(latest.position, accuracy: latest.accuracy).flatMap { $0.zones.filter { $0.containment == .inside }.map(\.id) }
            users.append(BulkUser(id: id, username: p.username, displayName: p.displayName, passwordHash: hash, latest: p.latest, zones: zones,
                                  visits: p.visits.map { ($0.key, $0.value) }, tokenHash: token))
        }
        var friendships: [(UserID, UserID)] = []
        for (id, p) in w.people { for f in p.friends where id < f { friendships.append((id, f)) } }
        try await store.bulkLoad(users: users, friendships: friendships) { print($0) }
        // The leaderboards' tallies: a tenth of the people in a park have logged one to three of its
        // rides in the last three hours, counted by the ride log's own rule (~0.5–1 ms a ride log).
        let ridesOfPark = Dictionary(grouping: definitions.flatMap(\.rides), by: \.park)
        var logs: [BulkRide] = []
        for id in ids {
            guard let park = w.people[id]!.visits.keys.min(by: { $0.rawValue < $1.rawValue }), let rides = ridesOfPark[park], !rides.isEmpty,
                  Int.random(in: 0..<10, using: &g) == 0
            else { continue }
            let times = (0..<Int.random(in: 1...3, using: &g)).map { _ in start.addingTimeInterval(-Double.random(in: 0..<10_800, using: &g)) }
            for at in times.sorted() { logs.append(BulkRide(user: id, ride: rides.randomElement(using: &g)!, at: at)) }
        }
        try await store.bulkLogRides(logs) { print($0) }
        // Messages: each sampled user talks with one to five of their friends, a conversation
        // holding 1–300 messages (log-uniform: most short, some long) over the last 30 days, its
        // last message unread one time in three. The routes' cost follows a user's history, not
        // the world's size, so only the users the scripts sign in as have one.
        var messages: [BulkMessage] = []
        var partner: [UserID: UserID] = [:]
        for id in ids where sampled.contains(id) {
            let friends = w.people[id]!.friends.sorted()
            guard !friends.isEmpty else { continue }
            let with = friends.shuffled(using: &g).prefix(Int.random(in: 1...5, using: &g))
            partner[id] = with.first
            for other in with {
                let count = Int(exp(Double.random(in: 0..<log(301), using: &g)))
                var times = (0..<count).map { _ in start.addingTimeInterval(-Double.random(in: 0..<30 * 86_400, using: &g)) }
                times.sort()
                for (n, at) in times.enumerated() {
                    let (sender, recipient) = Bool.random(using: &g) ? (id, other) : (other, id)
                    let unread = n == count - 1 && Int.random(in: 0..<3, using: &g) == 0
                    messages.append(BulkMessage(sender: sender, recipient: recipient, body: "Meet at the exit?", sentAt: at,
                                                readAt: unread ? nil : min(at.addingTimeInterval(60), start)))
                }
            }
        }
        messages.sort { $0.sentAt < $1.sentAt }
        try await store.bulkSendMessages(messages) { print($0) }
        let text = lines.map { line in "\(line.text) \(partner[line.id].map { String($0.rawValue) } ?? "-")\n" }.joined()
        try text.write(toFile: self.tokens, atomically: true, encoding: .utf8)
        if let path = askersPath {
            try askers.enumerated().map { "\($0.offset) \($0.element.rawValue) \(tokenOf[$0.element]!)\n" }.joined()
                .write(toFile: path, atomically: true, encoding: .utf8)
        }
        // Closed before the summary: a kept copy is taken of the file as closing leaves it.
        closed = true
        try store.close()
        print("loaded \(users.count) users, \(friendships.count) friendships, \(logs.count) ride logs, \(messages.count) messages, \(lines.count) sessions in \(String(format: "%.1f", Date().timeIntervalSince(start))) s")
    }
}
