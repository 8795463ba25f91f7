import ArgumentParser
import CoasterAPI
import CoasterCore
import Foundation

@main
struct CoasterBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coasterbench",
        abstract: "Benchmarks of CoasterLife on a generated world (tools/bench).",
        subcommands: [Engine.self, Load.self, Export.self, ChallengesLoad.self, ListsBench.self, PostsBench.self],
        defaultSubcommand: Engine.self)
}

struct Engine: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Engine-level benchmarks, in process.",
        discussion: """
            Generates the benchmark world for each user count (deterministic from --seed), then times the \
            fence lookup (point → park and zones), the nearby query (a user → friends within 500 m), the \
            fix pipeline's decide step and the wait estimator: calls per second and p50/p99 per call, each \
            for a bounded number of calls. Build with -c release.
            """)

    @Option(help: "User counts, comma-separated.")
    var users = "10000,100000"

    @Option(help: "Workload seed.")
    var seed: UInt64 = 20_261_121

    @Option(help: "Calls per measurement.")
    var calls = 100_000

    @Option(help: """
        Operations to time, comma-separated: fence (lookup with 10 m accuracy), point, named (the \
        point lookup with names, as GET /v1/locate answers), nearby (friends within 500 m by id, \
        as PostGIS's query), nearby-named (as GET /v1/friends/nearby answers), \
        nearby-answer (nearby-named and the route's JSON answer), decide, waits. All \
        by default; one alone is what a profiler should watch.
        """)
    var only = Engine.operations.joined(separator: ",")

    static let operations = ["fence", "point", "named", "nearby", "nearby-named", "nearby-answer", "decide", "waits"]

    /// The operations `--only` names.
    private var selected: Set<String> { Set(self.only.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }) }

    func validate() throws {
        guard self.rounds >= 1 else { throw ValidationError("--rounds is how many times each operation is timed: 1 or more, not \(self.rounds)") }
        let unknown = self.selected.subtracting(Self.operations)
        guard unknown.isEmpty else {
            throw ValidationError("unknown operation(s) \(unknown.sorted().joined(separator: ", ")) in --only; choose from \(Self.operations.joined(separator: ", "))")
        }
    }

    @Option(help: """
        Rounds: every operation is timed this many times at each user count, the counts taking \
        turns, and the round with the median rate is reported (all rounds' rates in the note). The \
        host's drift during a run then falls on every count alike, which comparing counts asks for.
        """)
    var rounds = 1

    /// One user count's world, made before anything is timed.
    private struct Prepared {
        var count: Int
        var index: FenceIndex
        var probes: [IncomingFix]
        /// The nearby operations' directory, askers and the seconds loading the directory took.
        var nearby: (directory: PersonDirectory, askers: [UserID], loaded: Double)?
    }

    /// An operation as timed at one user count: its label, calls for each of `measure`'s two
    /// passes, a call, and its row's note once timed.
    private struct Operation {
        var label: String
        var calls: Int
        var call: () -> Int
        var note: () -> String
    }

    func run() throws {
        let selected = self.selected
        print("| users | operation | calls/s | p50 µs | p99 µs | note |")
        print("|---|---|---|---|---|---|")
        var worlds: [Prepared] = []
        for count in self.users.split(separator: ",").compactMap({ Int($0.trimmingCharacters(in: .whitespaces)) }) {
            let start = Date()
            var w = Workload.make(users: count, seed: self.seed)
            let built = Date().timeIntervalSince(start)
            let index = try FenceIndex(parks: w.parks, zones: w.zones)
            var nearby: (PersonDirectory, [UserID], Double)?
            if !selected.isDisjoint(with: ["nearby", "nearby-named", "nearby-answer"]) {
                let ids = Array(w.people.keys).sorted()
                // The world's askers, every level's same ones, in turn.
                let askers = Workload.askerIDs(users: ids.count)
                // Each with the zones their fix lies inside, as the fix pipeline records them on
                // the server: the named answer ranks them and names the most specific. Equal sets
                // are one set, as the server's directory keeps them (`ZoneSets`), and marked with
                // the most specific in the index (`People` marks them). Set in place: changed
                // copies would be a second record of everyone beside the world's.
                var zoneSets = ZoneSets()
                for id in ids {
                    guard let fix = w.people[id]?.latest else { continue }
                    let hits = index.locate(fix.position, accuracy: fix.accuracy).flatMap(\.zones)
                    let zones = Set(hits.filter { $0.containment == .inside }.map(\.id))
                    if w.people[id] != nil { zoneSets.place(&w.people[id]!, in: zones, index: index) }
                }
                let people = ids.map { w.people[$0]! }
                // The service's directory (`PersonDirectory`); each call applies the rules to the
                // asker's friends read in place, as the server does under the directory's lock.
                let loading = Date()
                let directory = PersonDirectory(people)
                nearby = (directory, askers, Date().timeIntervalSince(loading))
            }
            let rss = Self.rssMiB()
            let friends = w.people.values.reduce(0) { $0 + $1.friends.count } / max(1, w.people.count)
            print("| \(count) | world | | | | \(w.parks.count) parks, \(w.zones.count) zones (rides and places), \(friends) friends/user avg, generated in \(String(format: "%.1f", built)) s; RSS \(rss) MiB |")
            worlds.append(Prepared(count: count, index: index, probes: w.probes, nearby: nearby))
        }
        // Every operation at every count, round after round; rows grouped by count as they print.
        let operations = worlds.map { self.timed(at: $0, selected: selected) }
        var rows = worlds.map { _ in [String]() }
        for o in operations.first?.indices ?? 0..<0 {
            var results = worlds.map { _ in [Result]() }
            for _ in 0..<self.rounds {
                for (n, ops) in operations.enumerated() { results[n].append(Self.measure(ops[o].calls, ops[o].call)) }
            }
            for (n, ops) in operations.enumerated() {
                let byRate = results[n].sorted { $0.callsPerSecond < $1.callsPerSecond }
                let median = byRate[byRate.count / 2]
                var note = [ops[o].note()].filter { !$0.isEmpty }
                if results[n].count > 1 { note.append("rounds " + results[n].map(\.rate).joined(separator: " / ") + " calls/s") }
                rows[n].append("| \(worlds[n].count) | \(ops[o].label) | \(median.rate) | \(median.p50) | \(median.p99) | \(note.joined(separator: "; ")) |")
            }
        }
        for row in rows.joined() { print(row) }
    }

    /// The selected operations at one count, in the order their rows print.
    private func timed(at world: Prepared, selected: Set<String>) -> [Operation] {
        let index = world.index, probes = world.probes
        var out: [Operation] = []
        // Measured, not the generator's aim (55 % aimed at a ride zone; probes aimed elsewhere in a
        // park land in one by chance), so the peers' answers can be held to it. Worked out only for
        // the row that prints it: it locates every probe once more.
        let share = {
            let inZone = probes.count { p in index.locate(Coordinate(lat: p.lat, lon: p.lon)).contains { !$0.zones.isEmpty } }
            return "\(100 * inZone / max(1, probes.count)) % of probes in a ride zone"
        }
        if selected.contains("fence") {
            var i = 0
            out.append(Operation(label: "fence lookup, accuracy 10 m", calls: self.calls, call: {
                let p = probes[i % probes.count]
                i += 1
                return index.matches(Coordinate(lat: p.lat, lon: p.lon), accuracy: p.accuracy!).parkCount
            }, note: { "55 % aimed at ride zones" }))
        }
        // The point lookup as PostGIS's query asks it (ids), and as `GET /v1/locate` answers (its
        // JSON, parks and zones named).
        for (operation, label, note) in [("point", "fence lookup, point (PostGIS's query)", "same probes, no accuracy"),
                                         ("named", "fence lookup, point, with names (`/v1/locate`)", "same probes, the route's JSON answer")]
        where selected.contains(operation) {
            var m = 0
            let answers = operation == "named" ? RouteAnswers(index) : nil
            out.append(Operation(label: label, calls: self.calls, call: {
                let p = Coordinate(lat: probes[m % probes.count].lat, lon: probes[m % probes.count].lon)
                m += 1
                return answers?.locateLength(at: p, accuracy: 0) ?? index.matches(p).parkCount
            }, note: { answers != nil ? note : "\(note); \(share())" }))
        }
        if let (directory, askers, loaded) = world.nearby {
            let rules = NearbyRules()
            // By id and distance, as PostGIS's query answers; and named and sorted, as the route.
            let answers = RouteAnswers(index)
            for (operation, label) in [("nearby", "nearby friends, 500 m (ids, PostGIS's query)"),
                                       ("nearby-named", "nearby friends, 500 m, named (`/v1/friends/nearby`)"),
                                       ("nearby-answer", "nearby friends' answer, 500 m (named, the route's JSON)")]
            where selected.contains(operation) {
                let named = operation != "nearby"
                let written = operation == "nearby-answer"
                var j = 0
                // Friends found, answers' bytes written, and calls made, over every pass of every round.
                var found = 0, bytes = 0, made = 0
                out.append(Operation(label: label, calls: min(self.calls, 50_000), call: {
                    let asker = askers[j % askers.count]
                    j += 1
                    let listed = directory.withFriends(of: asker) { friends -> Int in
                        guard named else { return (try? rules.findFriendsNearby(friends, radius: 500, now: Date()).get())?.count ?? 0 }
                        guard let list = try? rules.friendsNearby(friends, radius: 500, now: Date(), index: index).get() else { return 0 }
                        if written { bytes += answers.nearbyLength(radius: 500, people: list) }
                        return list.count
                    } ?? 0
                    found += listed
                    made += 1
                    return listed
                }, note: {
                    let perQuery = Double(found) / Double(max(1, made))
                    let answer = written ? "; \(bytes / max(1, made)) bytes an answer" : ""
                    return "\(String(format: "%.1f", perQuery)) friends found per query\(answer); directory loaded in \(String(format: "%.1f", loaded)) s"
                }))
            }
        }
        if selected.contains("decide") {
            let pipeline = FixPipeline()
            var k = 0
            out.append(Operation(label: "fix pipeline decide", calls: self.calls, call: {
                let p = probes[k % probes.count]
                k += 1
                var state = TrackState()
                var fix = p
                fix.recordedAt = Date()
                if case .accepted = pipeline.process(fix, state: &state, index: index, now: Date()) { return 1 }
                return 0
            }, note: { "plausibility + locate + transitions" }))
        }
        if selected.contains("waits") {
            let estimator = WaitEstimator()
            let now = Date()
            let observations = (0..<20).map { n in
                WaitObservation(user: UserID(Int64(n)), minutes: Double(30 + n % 7), at: now.addingTimeInterval(-Double(n) * 120), source: .crowd)
            }
            let model = PostedModel(intercept: 3, slope: 0.7, pairs: 100, lowFactor: 0.8, highFactor: 1.2)
            out.append(Operation(label: "wait estimator, 20 reports", calls: self.calls, call: {
                Int(estimator.estimate(observations: observations, posted: PostedWait(minutes: 45, at: now), model: model, now: now).minutes ?? 0)
            }, note: { "" }))
        }
        return out
    }

    struct Result {
        var calls: Int
        var callsPerSecond: Double
        var rate: String
        var p50: String
        var p99: String
    }

    /// Times `calls` calls twice: all in one stretch for the rate (no clock read between calls),
    /// then one by one for p50 and p99 (each of which includes reading the clock twice). The sink
    /// keeps the optimiser from deleting the work.
    static func measure(_ calls: Int, _ body: () -> Int) -> Result {
        var sink = 0
        let clock = ContinuousClock()
        let total = clock.measure {
            for _ in 0..<calls { sink &+= body() }
        }
        var durations: [Double] = []
        durations.reserveCapacity(calls)
        for _ in 0..<calls {
            let t0 = clock.now
            sink &+= body()
            let d = clock.now - t0
            durations.append(Double(d.components.attoseconds) / 1e12 + Double(d.components.seconds) * 1e6)
        }
        if sink == Int.min { print(sink) }
        durations.sort()
        let seconds = Double(total.components.seconds) + Double(total.components.attoseconds) / 1e18
        return Result(calls: calls, callsPerSecond: Double(calls) / seconds, rate: String(format: "%.0f", Double(calls) / seconds),
                      p50: String(format: "%.2f", durations[calls / 2]), p99: String(format: "%.2f", durations[calls * 99 / 100]))
    }

    static func rssMiB() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kib = Int(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
        return kib / 1024
    }
}
