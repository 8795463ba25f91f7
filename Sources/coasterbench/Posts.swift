import ArgumentParser
import CoasterAPI
import CoasterCore
import CoasterService
import CoasterStore
import Foundation

/// Prepares a store for tools/bench/posts and times its reads in process: the real parks of
/// `data/parks`, the catalogue of `data/catalog` and the generated world's parks; the world's
/// users (every one with a session) and their friendships, and a few follows each; then
/// `--posts` trip reports and `--comments` comments, bulk-loaded
/// (``BulkStore/bulkLoadPosts(_:comments:chunk:progress:)``).
///
/// The reports are written from a fixed vocabulary with the catalogue's ride and park names and
/// hashtags, from a seeded generator: each author has a home park, most reports are about it
/// and name one or two of its rides; about 30 % are tagged with a ride, 15 % with the park, 20 %
/// are for friends only. Authors post unevenly (log-normal weights), the reports are spread over
/// the last year in id order, and comments (mostly by the author's friends, hours after the
/// post) go unevenly to the reports.
///
/// In process it then times, taking turns call by call: the reference `riderStats` (what
/// `GET /v1/me/stats` reads), a home feed page and the search mix, as random users.
struct PostsBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "posts",
        abstract: "Load a new database with trip reports and comments (tools/bench/posts), and time their reads in process.",
        discussion: """
            Loads a new database (--database: a SpatiaLite file that must not exist, or a postgres:// URL of an empty \
            database, ?schema=NAME for a new schema). Writes into --directory `tokens` (every user: `token lat lon - - -`, \
            for wrk) and `searches` (the search mix's request targets, one a line). Progress goes to stderr, the \
            in-process table to stdout.
            """)

    @Option(help: "Users of the generated world (about 50 friends each).")
    var users = 10_000

    @Option(help: "Posts (trip reports).")
    var posts = 1_000_000

    @Option(help: "Comments on them.")
    var comments = 5_000_000

    @Option(help: "Users each user follows besides their friends, on average.")
    var follows = 5

    @Option(help: "Posts a bulk call writes (with their comments); the store commits every 20,000 rows.")
    var batch = 20_000

    @Option(help: "Calls of each operation to time in process (0: none).")
    var calls = 2_000

    @Option(help: "Workload seed.")
    var seed: UInt64 = 20_261_121

    @Option(help: "The real parks' directory.")
    var parks = "data/parks"

    @Option(help: "The catalogue file.")
    var catalog = "data/catalog/coasters.json"

    @Option(help: "The database to create.")
    var database: String

    @Option(help: "Directory for the tokens and searches files (created if missing).")
    var directory: String

    func validate() throws {
        guard self.users >= 10, self.posts >= 1, self.comments >= 0, self.follows >= 0, self.batch >= 1, self.calls >= 0 else {
            throw ValidationError("--users is at least 10, --posts and --batch at least 1, --comments, --follows and --calls at least 0")
        }
    }

    func run() async throws {
        if case .spatiaLite(let path) = try storeLocation(self.database), FileManager.default.fileExists(atPath: path) {
            throw ValidationError("\(path) exists")
        }
        try FileManager.default.createDirectory(atPath: self.directory, withIntermediateDirectories: true)
        let started = Date()
        @Sendable func say(_ line: String) { FileHandle.standardError.write(Data("coasterbench posts: \(line)\n".utf8)) }
        let store = try await openStore(self.database)
        defer { try? store.close() }
        guard try await store.parkSummaries().isEmpty else { throw ValidationError("the database \(self.database) is not empty") }

        // The catalogue: real parks, the file, the generated parks (where the world's users are).
        var definitions: [ParkDefinition] = []
        for path in try ParkFiles.files(in: self.parks) {
            switch ParkFiles.check(path).result {
            case .success(let checked): definitions.append(checked.definition)
            case .failure(let rejection): throw ValidationError("\(path): \(rejection.issues.first?.reason ?? "refused")")
            }
        }
        let real = definitions.map(\.park.id)
        let w = Workload.make(users: self.users, seed: self.seed)
        for park in w.parks {
            let zones = w.zones.filter { $0.park == park.id }
            let rides = zones.compactMap { z in z.ride.map { Ride(id: $0, park: park.id, name: z.name, type: .coaster, status: .operating) } }
            definitions.append(ParkDefinition(park: park, zones: zones, rides: rides))
        }
        _ = try await store.replaceParks(definitions)
        guard let data = FileManager.default.contents(atPath: self.catalog) else { throw ValidationError("cannot read \(self.catalog)") }
        let file = try JSONDecoder().decode(CatalogFile.self, from: data)
        _ = try await store.importCatalog(try CatalogImport.check(file))
        // The rides people write about: the real parks' and the file's, as the catalogue holds them.
        var rides: [ParkID: [CatalogRide]] = [:]
        for park in Set(real + file.parks.map { ParkID(rawValue: $0.id) }).sorted(by: { $0.rawValue < $1.rawValue }) {
            var page = 0
            while true {
                let found = try await store.searchCatalog(CatalogQuery(park: park, sort: .name, limit: CatalogLimits.largestPage,
                                                                       offset: page * CatalogLimits.largestPage)).rides
                for ride in found where !(rides[ride.park.id]?.contains { $0.id == ride.id } ?? false) { rides[ride.park.id, default: []].append(ride) }
                guard found.count == CatalogLimits.largestPage, (page + 1) * CatalogLimits.largestPage < CatalogLimits.deepestOffset else { break }
                page += 1
            }
        }
        let vocabulary = TripReports(parks: rides.keys.sorted { $0.rawValue < $1.rawValue }.map { rides[$0]! })
        guard !vocabulary.parks.isEmpty else { throw ValidationError("the catalogue holds no rides to write about") }
        say("catalogue: \(vocabulary.parks.reduce(0) { $0 + $1.count }) rides in \(vocabulary.parks.count) parks to write about")

        // Users, every one with a session; their friendships.
        let ids = w.people.keys.sorted()
        let hash = try await Sessions(store: store, policy: AccountPolicy()).hashPassword("benchmark password")
        var tokens: [UserID: String] = [:]
        var bulk: [BulkUser] = []
        for id in ids {
            let p = w.people[id]!
            let t = Sessions.newToken()
            tokens[id] = t
            bulk.append(BulkUser(id: id, username: p.username, displayName: p.displayName, passwordHash: hash, latest: p.latest, zones: [],
                                 visits: p.visits.map { ($0.key, $0.value) }, tokenHash: Sessions.hash(t)))
        }
        var friendships: [(UserID, UserID)] = []
        for (id, p) in w.people { for f in p.friends where id < f { friendships.append((id, f)) } }
        try await store.bulkLoad(users: bulk, friendships: friendships) { say($0) }
        bulk = []

        // Follows: 0 to twice --follows each, of people who are not their friends, through the
        // store's own operation.
        var g = SeededGenerator(seed: self.seed &+ 49)
        var pairs: [(UserID, UserID)] = []
        for id in ids {
            let friends = w.people[id]!.friends
            var chosen = Set<UserID>()
            for _ in 0..<Int.random(in: 0...(2 * self.follows), using: &g) {
                let other = ids.randomElement(using: &g)!
                if other != id, !friends.contains(other) { chosen.insert(other) }
            }
            for other in chosen.sorted(by: { $0.rawValue < $1.rawValue }) { pairs.append((id, other)) }
        }
        let phase = Date()
        let rules = PeopleRules()
        try await concurrently(pairs, width: 8) { pair in try await store.follow(pair.0, pair.1, rules: rules) }
        say("\(pairs.count) follows in \(String(format: "%.1f", Date().timeIntervalSince(phase))) s")

        // The reports and comments, batch by batch, in time order; the next batch is written
        // while the store loads the one before.
        let loading = Date()
        let friendsOf = Dictionary(uniqueKeysWithValues: ids.map { ($0, Array(w.people[$0]!.friends).sorted { $0.rawValue < $1.rawValue }) })
        var writer = TripReports.Writer(vocabulary: vocabulary, authors: ids, seed: self.seed &+ 53)
        let year: TimeInterval = 365 * 86_400
        let first = started.addingTimeInterval(-year), step = (year - 3_600) / Double(self.posts)
        var postsDone = 0, commentsDone = 0
        var pending: Task<Void, any Error>?
        while postsDone < self.posts {
            let count = min(self.batch, self.posts - postsDone)
            var batch: [BulkPost] = [], parkOf: [Int] = []
            batch.reserveCapacity(count)
            for i in postsDone..<(postsDone + count) {
                let (post, park) = writer.post(at: first.addingTimeInterval((Double(i) + Double.random(in: 0..<1, using: &writer.g)) * step))
                batch.append(post)
                parkOf.append(park)
            }
            // This batch's share of the comments, so that the last batch ends on --comments exactly.
            let due = Int(Double(self.comments) * Double(postsDone + count) / Double(self.posts)) - commentsDone
            var notes = writer.comments(due, on: batch, parks: parkOf, friends: friendsOf, until: started)
            notes.sort { $0.createdAt < $1.createdAt }
            try await pending?.value
            if postsDone > 0 { say("posts \(postsDone)/\(self.posts), comments \(commentsDone)/\(self.comments) in \(String(format: "%.0f", Date().timeIntervalSince(loading))) s") }
            let written = batch, said = notes
            pending = Task { try await store.bulkLoadPosts(written, comments: said, chunk: 20_000, progress: nil) }
            postsDone += count
            commentsDone += notes.count
        }
        try await pending?.value
        say("posts \(postsDone)/\(self.posts), comments \(commentsDone)/\(self.comments) in \(String(format: "%.0f", Date().timeIntervalSince(loading))) s")
        let loaded = Date().timeIntervalSince(loading)
        print("loaded \(ids.count) users, \(friendships.count) friendships, \(pairs.count) follows, \(postsDone) posts and \(commentsDone) comments; "
              + "posts and comments in \(String(format: "%.0f", loaded)) s (\(String(format: "%.0f", Double(postsDone + commentsDone) / max(loaded, 0.001))) rows/s)")

        // The search mix, as people type: names whole and begun, a park, common words, a phrase,
        // a park filter, a word nobody wrote.
        let searches = vocabulary.searches()
        let lines = ids.map { id -> String in
            let at = w.people[id]!.latest!.position
            return "\(tokens[id]!) \(at.lat) \(at.lon) - - -\n"
        }
        try lines.joined().write(toFile: self.directory + "/tokens", atomically: true, encoding: .utf8)
        try searches.map { "\($0.path)\n" }.joined().write(toFile: self.directory + "/searches", atomically: true, encoding: .utf8)

        guard self.calls > 0 else { return }
        let privacy = LocationPrivacy()
        var times: [String: [Double]] = [:]
        var found: [String: Int] = [:]
        var pages = 0
        func timed(_ label: String, _ body: () async throws -> Int) async rethrows {
            let t0 = DispatchTime.now().uptimeNanoseconds
            let n = try await body()
            times[label, default: []].append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6)
            found[label, default: 0] += n
        }
        for n in 0..<self.calls {
            let viewer = ids.randomElement(using: &g)!
            try await timed("stats") { _ = try await store.riderStats(of: viewer); return 1 }
            try await timed("feed") {
                let page = try await store.feed(.home, viewer: viewer, after: nil, since: nil, limit: PostRules.defaultPage, now: Date(), privacy: privacy)
                pages += page.count == PostRules.defaultPage ? 1 : 0
                return page.count
            }
            let search = searches[n % searches.count]
            try await timed(search.label) {
                try await store.searchPosts(search.query, terms: PostRules.searchTerms(search.query.text), viewer: viewer, limit: PostRules.defaultPage,
                                            offset: 0, now: Date(), privacy: privacy).count
            }
        }
        func percentile(_ values: [Double], _ p: Double) -> Double {
            let sorted = values.sorted()
            return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
        }
        let reference = percentile(times["stats"]!, 0.99)
        var all: [Double] = []
        print("""

            In process (\(self.calls) calls of each, taking turns, as random users; hits: the mean results a call):

            | operation | calls | mean ms | p50 ms | p99 ms | p99 ÷ stats p99 | hits |
            |---|---|---|---|---|---|---|
            """)
        func row(_ label: String, _ values: [Double], hits: Int?) {
            let mean = values.reduce(0, +) / Double(values.count), p99 = percentile(values, 0.99)
            print("| \(label) | \(values.count) | \(String(format: "%.3f", mean)) | \(String(format: "%.3f", percentile(values, 0.5))) | "
                  + "\(String(format: "%.3f", p99)) | \(String(format: "%.2f", p99 / reference))× | \(hits.map { String(format: "%.1f", Double($0) / Double(values.count)) } ?? "") |")
        }
        row("rider stats (`GET /v1/me/stats`, the reference)", times["stats"]!, hits: nil)
        row("home feed, first page of \(PostRules.defaultPage) (\(pages) of \(self.calls) full)", times["feed"]!, hits: found["feed"])
        for search in searches {
            guard let values = times[search.label] else { continue }
            all += values
            row("search `\(search.label)`", values, hits: found[search.label])
        }
        row("search, the mix of \(searches.count)", all, hits: searches.reduce(0) { $0 + (found[$1.label] ?? 0) })
        print("\nloaded and timed in \(String(format: "%.0f", Date().timeIntervalSince(started))) s")
    }

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

/// Trip reports and comments from a fixed vocabulary and the catalogue's names.
struct TripReports {
    /// Each park's rides (at least one), the most ridden parks first by their catalogue order.
    var parks: [[CatalogRide]]

    init(parks: [[CatalogRide]]) {
        self.parks = parks.filter { !$0.isEmpty }
    }

    /// A search of the mix: its label, the store's query and the request target.
    struct Search {
        var label: String
        var query: PostQuery
        var path: String
    }

    /// The mix, from the names of the park with the most rides: a ride's name whole and its first
    /// letters, a ride with a word, the park, common words, a phrase, a word with the park filter,
    /// a hashtag's word, and a word nobody wrote.
    func searches() -> [Search] {
        let park = self.parks.max { $0.count < $1.count || ($0.count == $1.count && $0[0].park.id.rawValue > $1[0].park.id.rawValue) }!
        let ride = park[0].name, other = park[park.count / 2].name
        let begun = String(ride.prefix(max(3, ride.count / 2))).trimmingCharacters(in: .whitespaces)
        var mix: [(String, ParkID?)] = [
            (ride, nil), (begun, nil), ("\(other) queue", nil), (park[0].park.name, nil), ("airtime", nil), ("\"front row\"", nil),
            ("funnel cake", nil), ("night ride", nil), ("breakdown", park[0].park.id), ("ert", nil), ("zeppelin", nil),
        ]
        mix = mix.map { ($0.0.lowercased(), $0.1) }
        return mix.map { text, park in
            var allowed = CharacterSet.alphanumerics
            allowed.insert(charactersIn: "-._~")
            var path = "/v1/search/posts?q=" + text.addingPercentEncoding(withAllowedCharacters: allowed)!
            if let park { path += "&park=\(park.rawValue)" }
            return Search(label: text + (park.map { " (park=\($0.rawValue))" } ?? ""), query: PostQuery(text: text, park: park), path: path)
        }
    }

    /// A template's pieces: text as it is, and slots a writer fills.
    enum Piece {
        case text(String)
        case slot(Slot)
    }

    enum Slot: String {
        case park, ride, ride2, adj, food, weather, crowd, time, day, row, n
    }

    /// A template's pieces, `{name}` a slot.
    static func parse(_ template: String) -> [Piece] {
        var pieces: [Piece] = []
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}"),
              let slot = Slot(rawValue: String(rest[rest.index(after: open)..<close])) {
            if open > rest.startIndex { pieces.append(.text(String(rest[..<open]))) }
            pieces.append(.slot(slot))
            rest = rest[rest.index(after: close)...]
        }
        if !rest.isEmpty { pieces.append(.text(String(rest))) }
        return pieces
    }

    static let openers = [
        "Trip report from {park}!", "Back at {park} today.", "Finally made it to {park}.", "Quick {day} visit to {park}.",
        "Season pass trip number {n} to {park}.", "First time at {park} and it did not disappoint.", "{park} on a {day}, here is how it went.",
    ].map(parse)
    static let sentences = [
        "Started the morning on {ride}, {n} laps before the lines built up.", "{ride} was running {adj} today.",
        "The queue for {ride} hit {n} minutes around {time}, single rider saved us.",
        "{row} on {ride} is {adj}, the airtime over the second hill is unreal.", "{ride} had a breakdown mid afternoon and reopened an hour later.",
        "Rode {ride} at night, {adj} with the lights on the lift hill.", "Got my credit on {ride}, that makes {n} credits.",
        "{ride} felt rough in the back row but the front row was smooth.", "Lunch was {food}, {adj}.", "Weather was {weather} and the crowds were {crowd}.",
        "The new paint on {ride} looks {adj}.", "ERT on {ride} before opening, {n} rides in a row.", "Skipped {ride} because of the line, next time.",
        "Fast lane was worth it for {ride} and {ride2}.", "{ride2} is underrated, a walk on all day.", "Waited {n} minutes for {ride2} and it was worth every one.",
        "The launch on {ride} still gets me every time.", "Front row on {ride2} at sunset is the best seat in the park.",
        "{ride} and {ride2} back to back, my legs were shaking.", "Ride ops on {ride} were fast, two trains running all day.",
    ].map(parse)
    static let closers = ["Can't wait to come back.", "Overall a {adj} day.", "Ride count today: {n}.", "Who's going next weekend?", "Until next season!"].map(parse)
    static let remarks = [
        "So jealous!", "Great report, thanks for sharing.", "How long was the line for {ride}?", "Front row or back row on {ride}?",
        "{ride} is my favourite too!", "See you at {park} next month.", "Was {ride} running {adj}?", "Nice, {n} credits is a lot!",
        "The {food} there is the best.", "Did you try the fast lane?", "I still need {ride} for my count.", "Night rides on {ride} are the best.",
        "Agreed, {ride2} is underrated.", "Hope the weather holds for my trip.", "Thanks, adding {park} to my list.", "That breakdown sounds annoying.",
    ].map(parse)
    static let tags = ["coasterlife", "tripreport", "creditrun", "airtime", "frontrow", "backrow", "ert", "nightrides", "coasterbuddies",
                       "themepark", "rollercoaster", "seasonpass", "fastlane", "hyper", "giga", "wooden"]
    static let words: [Slot: [String]] = [
        .adj: ["amazing", "smooth", "intense", "wild", "fantastic", "a bit rough", "great", "insane", "glorious", "solid", "forceful",
               "relentless", "surprisingly smooth", "fun"],
        .food: ["funnel cake", "a turkey leg", "pizza", "chicken tenders", "fries", "a burger", "ice cream", "nachos", "a pretzel", "tacos"],
        .weather: ["sunny", "hot", "overcast", "windy", "rainy in the morning", "perfect", "humid", "cold"],
        .crowd: ["light", "moderate", "heavy", "huge", "nonexistent", "manageable"],
        .time: ["noon", "2 pm", "opening", "sunset", "mid afternoon"],
        .day: ["weekday", "Saturday", "Sunday", "Friday night", "holiday"],
        .row: ["Front row", "Back row", "The middle of the train"],
    ]

    /// Writes posts and comments, one seeded generator for all.
    struct Writer {
        let vocabulary: TripReports
        let authors: [UserID]
        var g: SeededGenerator
        /// Running sums of the authors' weights (log-normal: a few post a lot), and of the parks'
        /// (by their rides: the big parks are the visited ones).
        let authorWeights: [Double]
        let parkWeights: [Double]
        var home: [UserID: Int] = [:]

        init(vocabulary: TripReports, authors: [UserID], seed: UInt64) {
            self.vocabulary = vocabulary
            self.authors = authors
            self.g = SeededGenerator(seed: seed)
            var total = 0.0
            var weights: [Double] = []
            for _ in authors {
                // Box–Muller: a normal of σ 1.2.
                let u = Double.random(in: Double.ulpOfOne..<1, using: &self.g), v = Double.random(in: 0..<1, using: &self.g)
                total += exp(1.2 * sqrt(-2 * log(u)) * cos(2 * .pi * v))
                weights.append(total)
            }
            self.authorWeights = weights
            total = 0
            self.parkWeights = vocabulary.parks.map { total += Double($0.count * $0.count); return total }
        }

        mutating func pick(_ sums: [Double]) -> Int {
            let x = Double.random(in: 0..<sums.last!, using: &self.g)
            var lo = 0, hi = sums.count - 1
            while lo < hi {
                let mid = (lo + hi) / 2
                if sums[mid] > x { hi = mid } else { lo = mid + 1 }
            }
            return lo
        }

        mutating func fill(_ template: [Piece], into out: inout String, ride: CatalogRide, ride2: CatalogRide) {
            for piece in template {
                switch piece {
                case .text(let text): out += text
                case .slot(.park): out += ride.park.name
                case .slot(.ride): out += ride.name
                case .slot(.ride2): out += ride2.name
                case .slot(.n): out += String(Int.random(in: 2...120, using: &self.g))
                case .slot(let slot): out += TripReports.words[slot]!.randomElement(using: &self.g)!
                }
            }
        }

        /// Two rides of a park, each another when it has two.
        mutating func two(of park: [CatalogRide]) -> (CatalogRide, CatalogRide) {
            let first = Int.random(in: 0..<park.count, using: &self.g)
            guard park.count > 1 else { return (park[first], park[first]) }
            return (park[first], park[(first + Int.random(in: 1..<park.count, using: &self.g)) % park.count])
        }

        /// A report by a random author, mostly about their home park, and the index of its park.
        mutating func post(at time: Date) -> (BulkPost, park: Int) {
            let author = self.authors[self.pick(self.authorWeights)]
            let homePark: Int
            if let known = self.home[author] { homePark = known } else { homePark = self.pick(self.parkWeights); self.home[author] = homePark }
            let index = Int.random(in: 0..<10, using: &self.g) < 6 ? homePark : self.pick(self.parkWeights)
            let park = self.vocabulary.parks[index]
            let (ride, ride2) = self.two(of: park)
            var text = ""
            self.fill(TripReports.openers.randomElement(using: &self.g)!, into: &text, ride: ride, ride2: ride2)
            for _ in 0..<Int.random(in: 2...6, using: &self.g) {
                text += " "
                self.fill(TripReports.sentences.randomElement(using: &self.g)!, into: &text, ride: ride, ride2: ride2)
            }
            if Bool.random(using: &self.g) {
                text += " "
                self.fill(TripReports.closers.randomElement(using: &self.g)!, into: &text, ride: ride, ride2: ride2)
            }
            var hashtags = (0..<Int.random(in: 0...3, using: &self.g)).map { _ in "#" + TripReports.tags.randomElement(using: &self.g)! }
            if Int.random(in: 0..<4, using: &self.g) == 0 { hashtags.append("#" + ride.park.name.filter { $0.isLetter || $0.isNumber }) }
            if Int.random(in: 0..<6, using: &self.g) == 0 { hashtags.append("#" + ride.name.filter { $0.isLetter || $0.isNumber }) }
            if !hashtags.isEmpty { text += "\n\n" + hashtags.joined(separator: " ") }
            let roll = Int.random(in: 0..<100, using: &self.g)
            let rides = roll < 25 ? [ride.id] : roll < 30 ? Array(Set([ride.id, ride2.id])).sorted { $0.rawValue < $1.rawValue } : []
            let parks = Int.random(in: 0..<100, using: &self.g) < 15 ? [ride.park.id] : []
            return (BulkPost(author: author, text: text, visibility: Int.random(in: 0..<5, using: &self.g) == 0 ? .friends : .public, createdAt: time,
                             parks: parks, rides: rides), index)
        }

        /// `count` comments on the batch's posts, unevenly (a few posts draw many), mostly by the
        /// author's friends, minutes to days after the post, never after `until`.
        mutating func comments(_ count: Int, on posts: [BulkPost], parks: [Int], friends: [UserID: [UserID]], until: Date) -> [BulkComment] {
            guard count > 0, !posts.isEmpty else { return [] }
            var total = 0.0
            let sums = posts.map { _ in
                let e = -log(Double.random(in: Double.ulpOfOne..<1, using: &self.g))
                total += e * e
                return total
            }
            return (0..<count).map { _ in
                let index = self.pick(sums)
                let post = posts[index]
                let theirs = friends[post.author] ?? []
                let author = !theirs.isEmpty && Int.random(in: 0..<10, using: &self.g) < 7 ? theirs.randomElement(using: &self.g)! : self.authors.randomElement(using: &self.g)!
                let park = self.vocabulary.parks[parks[index]]
                let (ride, ride2) = self.two(of: park)
                let delay = -log(Double.random(in: Double.ulpOfOne..<1, using: &self.g)) * 6 * 3_600
                var text = ""
                self.fill(TripReports.remarks.randomElement(using: &self.g)!, into: &text, ride: ride, ride2: ride2)
                return BulkComment(post: index, author: author, text: text, createdAt: min(post.createdAt.addingTimeInterval(delay), until.addingTimeInterval(-1)))
            }
        }
    }
}
