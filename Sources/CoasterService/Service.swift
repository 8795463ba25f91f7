import CoasterCore
import CoasterStore
import Foundation
import Logging

/// A reason the service cannot start, as a sentence an operator can act on.
public struct StartupError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// How to run the service's rules and state: plain values, filled from flags by the commands and
/// by tests. What a server adds (address, timeouts) is the HTTP layer's.
public struct ServiceConfiguration: Sendable {
    /// The database: a SpatiaLite file's path or a `postgres://` URL (``StoreLocation``).
    public var database: String
    /// Where a PostgreSQL store keeps photo files (``openStore(_:photos:now:)``).
    public var photoDirectory: String?
    /// Park files loaded into an empty database on first start (`nil`: none).
    public var seedParksDirectory: String?
    /// The ride catalogue file loaded after the parks into a database whose catalogue knows no
    /// park beyond the fenced ones (``CatalogFiles/seed(_:from:)``; `nil`: none).
    public var seedCatalogFile: String?
    public var accounts: AccountPolicy
    public var location: LocationPolicy
    /// Every request-rate limit.
    public var limits = RateLimits()
    /// The bounds of ride lists (items a list, lists a user, follows).
    public var listRules = ListRules()
    /// The clock every rule reads; tests move it.
    public var now: @Sendable () -> Date = Date.init
    /// Metrics to record into (`serve` shares its registry with swift-metrics); a new one if `nil`.
    public var metrics: ServiceMetrics?
    /// How often the store's session revocations are read (those of other processes).
    public var revocationPoll: Duration = .seconds(1)

    public init(database: String, seedParksDirectory: String? = nil, accounts: AccountPolicy = AccountPolicy(),
                location: LocationPolicy = LocationPolicy()) {
        self.database = database
        self.seedParksDirectory = seedParksDirectory
        self.accounts = accounts
        self.location = location
    }
}

/// The application's use cases and the in-memory state they own, built once and shared by the
/// HTTP layer, the command line and the benchmarks.
public struct Service: Sendable {
    public let store: any Store
    public let fences: Fences
    public let sessions: Sessions
    public let accounts: Accounts
    public let location: LocationPolicy
    public let people: People
    public let live: Live
    public let metrics: ServiceMetrics
    public let now: @Sendable () -> Date
    /// Revocations from other processes and the leaderboards' settling, run beside the server.
    public let housekeeping: Housekeeping
    /// The request-rate limiters.
    public let limiters: Limiters
    /// The key that seals the leaderboards' page cursors (kept in the store, so that a cursor
    /// outlives a restart).
    public let cursorKey: Data
    /// The bounds of ride lists.
    public let listRules: ListRules

    /// Opens the store, loads the seed parks into an empty database, and builds the fence index.
    public static func open(_ configuration: ServiceConfiguration, logger: Logger) async throws -> Service {
        let now = configuration.now
        // A new database is seeded from the park directory: check it can be read before anything
        // is created, so that a mistyped --parks leaves no empty database behind (a PostgreSQL
        // database exists already; its parks are checked for below).
        if let directory = configuration.seedParksDirectory, case .spatiaLite(let path) = try storeLocation(configuration.database),
           !FileManager.default.fileExists(atPath: path) {
            do {
                _ = try ParkFiles.files(in: directory)
            } catch {
                throw StartupError("cannot read the park directory \(directory): \(error.localizedDescription) Nothing was created.")
            }
        }
        let store = try await openStore(configuration.database, photos: configuration.photoDirectory, now: now)
        // What a crash during an upload left: a file without its row, or half a file.
        let sweep = try await store.sweepPhotoFiles()
        if sweep.unused + sweep.partial > 0 {
            logger.notice("removed photo files no row uses", metadata: ["unused": "\(sweep.unused)", "partial": "\(sweep.partial)"])
        }
        let fences = Fences(store: store)
        if let directory = configuration.seedParksDirectory, try await store.parkSummaries().isEmpty {
            try await Self.seed(store: store, from: directory, logger: logger)
        }
        if let file = configuration.seedCatalogFile, let summary = try await CatalogFiles.seed(store, from: file) {
            logger.info("loaded the ride catalogue", metadata: ["file": "\(file)", "added": "\(summary.added)", "matchedFenced": "\(summary.matchedFenced)",
                                                              "parks": "\(summary.parks)"])
        }
        let index = try await fences.reload()
        logger.info("fences loaded", metadata: ["parks": "\(index.parkCount)", "zones": "\(index.zoneCount)", "vertices": "\(index.vertexCount)"])
        let sessions = Sessions(store: store, policy: configuration.accounts, now: now)
        let people = People(store: store, fences: fences)
        try await people.load()
        logger.info("people loaded", metadata: ["users": "\(people.count)"])
        let location = configuration.location
        let live = Live(people: people, fences: fences, policy: location, now: now)
        sessions.onRevocation { live.revoke($0) }
        let housekeeping = Housekeeping(store: store, sessions: sessions, privacy: location.privacy, now: now, logger: logger,
                                        startingAfter: try await store.lastRevocation(), revocationPoll: configuration.revocationPoll)
        return Service(
            store: store, fences: fences, sessions: sessions, accounts: Accounts(store: store, sessions: sessions),
            location: location, people: people, live: live, metrics: configuration.metrics ?? ServiceMetrics(), now: now,
            housekeeping: housekeeping, limiters: Limiters(configuration.limits, now: now), cursorKey: try await store.secret("cursor"),
            listRules: configuration.listRules)
    }

    /// What records fixes, for every route that takes them.
    public var fixRecorder: FixRecorder {
        FixRecorder(store: self.store, fences: self.fences, people: self.people, live: self.live, metrics: self.metrics, policy: self.location)
    }

    /// What records visitors' wait and status reports.
    public var crowdReports: CrowdReports {
        CrowdReports(store: self.store, fences: self.fences, live: self.live, policy: self.location, now: self.now)
    }

    private static func seed(store: any Store, from directory: String, logger: Logger) async throws {
        let files: [String]
        do {
            files = try ParkFiles.files(in: directory)
        } catch {
            throw StartupError("cannot read the park directory \(directory): \(error.localizedDescription)")
        }
        var definitions: [ParkDefinition] = []
        for file in files {
            switch ParkFiles.check(file).result {
            case .success(let read):
                for warning in read.warnings { logger.warning("seed park file: \(warning)", metadata: ["file": "\(file)"]) }
                definitions.append(read.definition)
            case .failure(let rejection): throw StartupError("the seed park file \(file) is invalid:\n\(rejection)")
            }
        }
        let written = try await store.replaceParks(definitions)
        logger.info("seeded an empty database", metadata: ["directory": "\(directory)", "parks": "\(written.map(\.park.rawValue))"])
    }
}
