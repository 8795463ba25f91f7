import ArgumentParser
import CoasterAPI
import CoasterCore
import CoasterService
import CoasterStore
import Foundation

/// The catalogue and lists benchmark (tools/bench/lists), in process, on a fresh store:
///
/// - the catalogue search: the real parks of `data/parks`, the Wikipedia catalogue of
///   `data/catalog` and the generated world's parks and rides (so that it holds more than 1,000
///   rides), asked a fixed mix of queries people type (whole names, prefixes, a manufacturer's
///   abbreviation with a type, a misspelt name, filters with a sort), each timed alone;
/// - a ride log that checks off the ride in 50 lists of its rider, against one by a rider on the
///   same visit whose lists do not hold it (the same lists, 50 of them, each holding another
///   ride): what checking off adds to a log, riders of both kinds taking turns so that the host's
///   drift falls on both.
///
/// It prints a Markdown table and writes the search tokens and ids that tools/bench/lists asks
/// over HTTP to --directory.
struct ListsBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lists",
        abstract: "Time the catalogue search and a ride log that checks off lists, in process (tools/bench/lists).",
        discussion: """
            Loads a new database (--database: a SpatiaLite file that must not exist, or a postgres:// URL of an empty \
            database, ?schema=NAME for a new schema) with the real parks, the catalogue file and the generated world, \
            then times --searches catalogue searches and the ride logs of --riders riders of each kind. Writes into \
            --directory `tokens` (every user: `token lat lon park ride -`, for wrk) and `park` (a real park's id).
            """)

    @Option(help: "Riders of each kind: with the ride in 50 lists, and with 50 lists that do not hold it.")
    var riders = 1_000

    @Option(help: "Lists of each rider.")
    var lists = 50

    @Option(help: "Catalogue searches to time.")
    var searches = 20_000

    @Option(help: "Users of the generated world (its parks and rides join the catalogue).")
    var users = 2_000

    @Option(help: "Workload seed.")
    var seed: UInt64 = 20_261_121

    @Option(help: "The real parks' directory.")
    var parks = "data/parks"

    @Option(help: "The catalogue file.")
    var catalog = "data/catalog/coasters.json"

    @Option(help: "The database to create.")
    var database: String

    @Option(help: "Directory for the tokens files (created if missing).")
    var directory: String

    /// What people type, as the search is asked: names whole and begun, a manufacturer's
    /// abbreviation with a type, a misspelling (the trigram fallback), a park, filters with a sort.
    static let queries: [CatalogQuery] = [
        CatalogQuery(text: "millennium force"), CatalogQuery(text: "mill"), CatalogQuery(text: "b&m hyper"),
        CatalogQuery(text: "millenium"), CatalogQuery(text: "cedar point"), CatalogQuery(text: "intamin giga", sort: .height),
        CatalogQuery(text: "wood", minHeightM: 30, sort: .speed), CatalogQuery(text: "the beast"), CatalogQuery(text: "vekoma boomerang"),
        CatalogQuery(text: "rmc"), CatalogQuery(text: "steel vengence"), CatalogQuery(text: "europa"),
        CatalogQuery(park: "kings-island", sort: .name), CatalogQuery(type: .coaster, minSpeedKmh: 120, sort: .speed),
        CatalogQuery(text: "fury"), CatalogQuery(text: "diamondback"),
    ]

    func validate() throws {
        guard self.riders >= 1, self.lists >= 1, self.lists <= ListRules().maximumLists, self.searches >= 1, self.users >= 10 else {
            throw ValidationError("--riders and --searches are at least 1, --lists 1 to \(ListRules().maximumLists), --users at least 10")
        }
    }

    func run() async throws {
        if case .spatiaLite(let path) = try storeLocation(self.database), FileManager.default.fileExists(atPath: path) {
            throw ValidationError("\(path) exists")
        }
        try FileManager.default.createDirectory(atPath: self.directory, withIntermediateDirectories: true)
        let started = Date()
        let store = try await openStore(self.database)
        defer { try? store.close() }
        guard try await store.parkSummaries().isEmpty else { throw ValidationError("the database \(self.database) is not empty") }

        // The catalogue: real parks, the file, the generated parks.
        var definitions: [ParkDefinition] = []
        for path in try ParkFiles.files(in: self.parks) {
            switch ParkFiles.check(path).result {
            case .success(let checked): definitions.append(checked.definition)
            case .failure(let rejection): throw ValidationError("\(path): \(rejection.issues.first?.reason ?? "refused")")
            }
        }
        let w = Workload.make(users: self.users, seed: self.seed)
        for park in w.parks {
            let zones = w.zones.filter { $0.park == park.id }
            let rides = zones.compactMap { z in z.ride.map { Ride(id: $0, park: park.id, name: z.name, type: .coaster, status: .operating) } }
            definitions.append(ParkDefinition(park: park, zones: zones, rides: rides))
        }
        _ = try await store.replaceParks(definitions)
        guard let data = FileManager.default.contents(atPath: self.catalog) else { throw ValidationError("cannot read \(self.catalog)") }
        let file = try JSONDecoder().decode(CatalogFile.self, from: data)
        let summary = try await store.importCatalog(try CatalogImport.check(file))
        let counts = try await store.catalogCounts()
        print("catalogue: \(counts.rides) rides in \(counts.parks) parks (\(summary.added) added from the file, \(summary.matchedFenced) matched fenced rides)")

        // Searches, each timed alone, the mix cycled.
        var searchTimes: [Double] = []
        searchTimes.reserveCapacity(self.searches)
        var found = [Int](repeating: 0, count: Self.queries.count)
        for n in 0..<self.searches {
            let q = Self.queries[n % Self.queries.count]
            let t0 = DispatchTime.now().uptimeNanoseconds
            let results = try await store.searchCatalog(q)
            searchTimes.append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6)
            found[n % Self.queries.count] = results.rides.count
        }
        guard found[0] > 0, found[3] > 0 else { throw ValidationError("the search found no Millennium Force: the catalogue did not load") }

        // Riders: all on a visit to the generated park with a ride, each kind with `lists` lists.
        let generated = Set(w.parks.map(\.id))
        guard let park = definitions.last(where: { $0.rides.count >= 2 && generated.contains($0.park.id) }),
              let ride = park.rides.first, let other = park.rides.dropFirst().first
        else { throw ValidationError("the generated world has no park with two rides") }
        let ids = w.people.keys.sorted()
        guard ids.count >= 2 * self.riders else { throw ValidationError("--users must be at least twice --riders") }
        let hash = try await Sessions(store: store, policy: AccountPolicy()).hashPassword("benchmark password")
        var tokens: [UserID: String] = [:]
        var bulk: [BulkUser] = []
        for id in ids {
            let p = w.people[id]!
            let t = Sessions.newToken()
            tokens[id] = t
            bulk.append(BulkUser(id: id, username: p.username, displayName: p.displayName, passwordHash: hash, latest: p.latest, zones: [],
                                 visits: [(ride.park, started.addingTimeInterval(-600))], tokenHash: Sessions.hash(t)))
        }
        try await store.bulkLoad(users: bulk, friendships: []) { _ in }
        let checking = Array(ids.prefix(self.riders)), plain = Array(ids.dropFirst(self.riders).prefix(self.riders))
        let rules = ListRules(), privacy = LocationPrivacy()
        let loading = Date()
        for (n, user) in (checking + plain).enumerated() {
            let target = n < self.riders ? ride.id : other.id
            for l in 0..<self.lists {
                let list = try await store.createList(ListDraft(title: "List \(l + 1)"), owner: user, rules: rules, privacy: privacy)
                _ = try await store.addItem(to: list.id, owner: user, target: .ride(target), note: nil, position: nil, rules: rules, privacy: privacy)
            }
        }
        print("\(2 * self.riders * self.lists) lists written in \(String(format: "%.1f", Date().timeIntervalSince(loading))) s")

        // Ride logs, the two kinds taking turns.
        var times: [[Double]] = [[], []]
        for n in 0..<self.riders {
            for (kind, user) in [checking[n], plain[n]].enumerated() {
                let t0 = DispatchTime.now().uptimeNanoseconds
                let outcome = try await store.logRide(user: user, ride: ride.id, visitTimeout: CheckinPolicy().visitTimeout)
                times[kind].append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6)
                if case .failure(let refusal) = outcome { throw ValidationError("a ride log was refused: \(refusal)") }
            }
        }
        let check = try await store.items(of: try await store.lists(of: checking[0], viewer: checking[0], privacy: privacy, limit: 1, before: nil)[0].id,
                                          viewer: checking[0], sort: .custom, privacy: privacy, limit: 1, offset: 0)
        guard check?.first?.check?.source == .rideLog else { throw ValidationError("a ride log did not check off its rider's list") }

        func percentile(_ values: [Double], _ p: Double) -> Double {
            let sorted = values.sorted()
            return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
        }
        func mean(_ values: [Double]) -> Double { values.reduce(0, +) / Double(values.count) }
        let ratio = mean(times[0]) / mean(times[1])
        print("""

            | operation | calls | mean ms | p50 ms | p99 ms | target |
            |---|---|---|---|---|---|
            | catalogue search (\(counts.rides) rides, \(Self.queries.count) queries cycled) | \(self.searches) | \
            \(String(format: "%.3f", mean(searchTimes))) | \(String(format: "%.3f", percentile(searchTimes, 0.5))) | \
            \(String(format: "%.3f", percentile(searchTimes, 0.99))) | p99 < 2 ms: \(percentile(searchTimes, 0.99) < 2 ? "yes" : "no") |
            | ride log checking off \(self.lists) lists | \(self.riders) | \(String(format: "%.3f", mean(times[0]))) | \
            \(String(format: "%.3f", percentile(times[0], 0.5))) | \(String(format: "%.3f", percentile(times[0], 0.99))) | \
            \(String(format: "%.2f", ratio))× the reference: \(ratio <= 1.5 ? "yes" : "no") (≤ 1.5×) |
            | ride log checking off none (\(self.lists) lists of another ride) | \(self.riders) | \(String(format: "%.3f", mean(times[1]))) | \
            \(String(format: "%.3f", percentile(times[1], 0.5))) | \(String(format: "%.3f", percentile(times[1], 0.99))) | reference |
            """)
        let lines = ids.map { id -> String in
            let at = w.people[id]!.latest!.position
            return "\(tokens[id]!) \(at.lat) \(at.lon) \(ride.park.rawValue) \(ride.id.rawValue) -\n"
        }
        try lines.joined().write(toFile: self.directory + "/tokens", atomically: true, encoding: .utf8)
        try "\(definitions[0].park.id.rawValue)\n".write(toFile: self.directory + "/park", atomically: true, encoding: .utf8)
        print("\nloaded and timed in \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
    }
}
