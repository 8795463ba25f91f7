import ArgumentParser
import CoasterAPI
import CoasterCore
import CoasterService
import CoasterStore
import Foundation
import Hummingbird
import Logging
import Metrics
import NIOCore
import NIOPosix
import Prometheus

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the HTTP API.",
        discussion: """
            On first start with an empty database, the park files in --parks are validated and loaded, \
            so a new install answers with real parks at once; then the ride catalogue in --catalog, into a \
            catalogue that knows no park beyond the fenced ones (docs: Catalogue).
            """)

    @OptionGroup var database: DatabaseOptions

    @Option(help: "Address to listen on. Environment: COASTERLIFE_HOST.")
    var host = Environment.value("COASTERLIFE_HOST") ?? "127.0.0.1"

    @Option(help: "Port to listen on (0 picks a free one). Environment: COASTERLIFE_PORT.")
    var port = Environment.value("COASTERLIFE_PORT").flatMap(Int.init) ?? 8080

    @Option(help: "Park files loaded into an empty database on first start; --parks '' for none. Environment: COASTERLIFE_PARKS.")
    var parks = Environment.value("COASTERLIFE_PARKS") ?? "data/parks"

    @Option(help: "The ride catalogue file loaded after the parks while the catalogue knows no park beyond the fenced ones; --catalog '' for none. Environment: COASTERLIFE_CATALOG.")
    var catalog = Environment.value("COASTERLIFE_CATALOG") ?? CatalogFiles.defaultPath

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical. Environment: COASTERLIFE_LOG_LEVEL.")
    var logLevel: Logger.Level = Environment.value("COASTERLIFE_LOG_LEVEL").flatMap(Logger.Level.init(rawValue:)) ?? .info

    @Option(help: "bcrypt work factor for new passwords (4…31). Environment: COASTERLIFE_BCRYPT_COST.")
    var bcryptCost = Environment.value("COASTERLIFE_BCRYPT_COST").flatMap(Int.init) ?? 12

    @Option(help: "Seconds a connection may stay idle before it is closed. Environment: COASTERLIFE_IDLE_TIMEOUT.")
    var idleTimeout = Environment.value("COASTERLIFE_IDLE_TIMEOUT").flatMap(Int.init) ?? 30

    @Option(help: "Fix requests per user per second, sustained (bursts of 6 s worth). Environment: COASTERLIFE_FIX_RATE.")
    var fixRate = Environment.value("COASTERLIFE_FIX_RATE").flatMap(Double.init) ?? 5

    @Option(help: "Nearby queries per user per second, sustained (bursts of 20 s worth, at least 10). Environment: COASTERLIFE_NEARBY_RATE.")
    var nearbyRate = Environment.value("COASTERLIFE_NEARBY_RATE").flatMap(Double.init) ?? 0.5

    @Option(help: "Messages a user may send per second, sustained (bursts of 10 s worth). Environment: COASTERLIFE_MESSAGE_RATE.")
    var messageRate = Environment.value("COASTERLIFE_MESSAGE_RATE").flatMap(Double.init) ?? 2

    @Option(help: "Friend requests a user may send per second, sustained (bursts of 5 min worth, at least 30). Environment: COASTERLIFE_FRIEND_REQUEST_RATE.")
    var friendRequestRate = Environment.value("COASTERLIFE_FRIEND_REQUEST_RATE").flatMap(Double.init) ?? 0.1

    @Option(help: "Leaderboard pages a user may read per second, sustained (bursts of 15 s worth, at least 30). Environment: COASTERLIFE_LEADERBOARD_RATE.")
    var leaderboardRate = Environment.value("COASTERLIFE_LEADERBOARD_RATE").flatMap(Double.init) ?? 2

    @Option(help: "Accounts one client address may register per second, sustained (bursts of 5 min worth, at least 5). Environment: COASTERLIFE_REGISTRATION_RATE.")
    var registrationRate = Environment.value("COASTERLIFE_REGISTRATION_RATE").flatMap(Double.init) ?? 1.0 / 60

    @Option(help: "Shared-list reads (GET /v1/shared-lists/{token}) one client address may make per second, sustained (bursts of 60 s worth, at least 30). Environment: COASTERLIFE_SHARED_LIST_RATE.")
    var sharedListRate = Environment.value("COASTERLIFE_SHARED_LIST_RATE").flatMap(Double.init) ?? 1

    @Option(help: "People searches and suggestions a user may ask for per second, sustained (bursts of 30 s worth, at least 30). Environment: COASTERLIFE_PEOPLE_SEARCH_RATE.")
    var peopleSearchRate = Environment.value("COASTERLIFE_PEOPLE_SEARCH_RATE").flatMap(Double.init) ?? 1

    @Option(help: "Follows and unfollows a user may make per second, sustained (bursts of 60 s worth, at least 60). Environment: COASTERLIFE_FOLLOW_RATE.")
    var followRate = Environment.value("COASTERLIFE_FOLLOW_RATE").flatMap(Double.init) ?? 1

    @Option(help: "Post searches (GET /v1/search/posts) a user may make per second, sustained (bursts of 15 s worth). Environment: COASTERLIFE_POST_SEARCH_RATE.")
    var postSearchRate = Environment.value("COASTERLIFE_POST_SEARCH_RATE").flatMap(Double.init) ?? 2

    @Option(name: .customLong("trusted-proxy"), help: "The IP address of a reverse proxy in front of the service: from it, and only from it, the last X-Forwarded-For address is taken as the client's (login throttling and registration limits key on it). Environment: COASTERLIFE_TRUSTED_PROXY.")
    var trustedProxyOption: String?

    /// The option, else the environment (an optional option takes no default of its own).
    var trustedProxy: String? { self.trustedProxyOption ?? Environment.value("COASTERLIFE_TRUSTED_PROXY") }

    @Option(help: "Seconds before one person may report the same ride's wait or status again. Environment: COASTERLIFE_REPORT_WINDOW.")
    var reportWindow = Environment.value("COASTERLIFE_REPORT_WINDOW").flatMap(Double.init) ?? WaitReportPolicy().window

    @Option(help: "Where async work runs: 'nio' (the event loop threads, no hops between thread pools) or 'default' (Swift's global pool). Environment: COASTERLIFE_EXECUTOR.")
    var executor = Environment.value("COASTERLIFE_EXECUTOR") ?? "nio"

    @Option(help: "The map pages' background tiles: a URL template with {z}, {x} and {y}, or 'none' for a plain background (the pages work fully without tiles). Environment: COASTERLIFE_TILES.")
    var tiles = Environment.value("COASTERLIFE_TILES") ?? MapConfiguration.openStreetMapTiles

    @Option(help: "The attribution the map shows for --tiles. Environment: COASTERLIFE_TILES_ATTRIBUTION.")
    var tilesAttribution = Environment.value("COASTERLIFE_TILES_ATTRIBUTION") ?? MapConfiguration.openStreetMapAttribution

    @Option(help: "Where Leaflet is installed (Debian's libjs-leaflet). Environment: COASTERLIFE_LEAFLET.")
    var leaflet = Environment.value("COASTERLIFE_LEAFLET") ?? MapConfiguration().leafletDirectory

    @Flag(inversion: .prefixedNo,
          help: "Answer the hot read routes (/health, /v1/locate, /v1/friends/nearby) on the event loop, without the router's task hops; --no-fast-lane sends every request through the router. Environment: COASTERLIFE_FAST_LANE (1 or 0).")
    var fastLane = Environment.value("COASTERLIFE_FAST_LANE").map { $0 != "0" } ?? true

    func validate() throws {
        guard ["nio", "default"].contains(self.executor) else { throw ValidationError("--executor must be nio or default") }
        guard (0...65_535).contains(self.port) else { throw ValidationError("--port must be 0…65535") }
        guard (4...31).contains(self.bcryptCost) else { throw ValidationError("--bcrypt-cost must be 4…31") }
        guard (1...3600).contains(self.idleTimeout) else { throw ValidationError("--idle-timeout must be 1…3600 seconds") }
        // Bounded: the bursts are whole numbers of requests (`inf` would not convert).
        for (name, rate) in [("--fix-rate", self.fixRate), ("--nearby-rate", self.nearbyRate), ("--message-rate", self.messageRate),
                             ("--friend-request-rate", self.friendRequestRate), ("--leaderboard-rate", self.leaderboardRate),
                             ("--registration-rate", self.registrationRate), ("--shared-list-rate", self.sharedListRate),
                             ("--people-search-rate", self.peopleSearchRate), ("--follow-rate", self.followRate),
                             ("--post-search-rate", self.postSearchRate)] {
            guard rate > 0, rate <= 1_000_000 else { throw ValidationError("\(name) must be more than 0 and at most 1000000, not \(rate)") }
        }
        if let proxy = self.trustedProxy, IPAddressText.normalized(proxy) == nil {
            throw ValidationError("--trusted-proxy must be an IP address, such as 127.0.0.1 or ::1, not \(proxy)")
        }
        guard self.reportWindow.isFinite, (0...86_400).contains(self.reportWindow) else {
            throw ValidationError("--report-window must be 0…86400 seconds")
        }
        do {
            _ = try MapConfiguration.tiles(self.tiles)
        } catch {
            throw ValidationError("\(error)")
        }
        guard self.tilesAttribution.count <= 200 else { throw ValidationError("--tiles-attribution must be at most 200 characters") }
    }

    func run() async throws {
        // Requests arrive on NIO's event loops; with NIO's loops as the global executor, a handler's
        // async work continues on the same threads instead of hopping to Swift's pool and back
        // (tools/bench/README.md has the measurements).
        if self.executor == "nio", !NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor() {
            throw ValidationError("this platform cannot run Swift concurrency on NIO's event loops; use --executor default")
        }
        LoggingSystem.bootstrap { StderrLogHandler(label: $0) }
        var logger = Logger(label: "coasterlife")
        logger.logLevel = self.logLevel
        // One registry for the service's own metrics and for anything using swift-metrics.
        let metrics = ServiceMetrics()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: metrics.registry))
        var accounts = AccountPolicy()
        accounts.bcryptCost = UInt8(self.bcryptCost)
        var configuration = ServerConfiguration(ServiceConfiguration(
            database: self.database.database, seedParksDirectory: self.parks.isEmpty ? nil : self.parks, accounts: accounts),
            host: self.host, port: self.port)
        configuration.metrics = metrics
        configuration.seedCatalogFile = self.catalog.isEmpty ? nil : self.catalog
        configuration.photoDirectory = self.database.photos
        configuration.idleTimeout = .seconds(self.idleTimeout)
        configuration.fastLane = self.fastLane
        configuration.location.waits.window = self.reportWindow
        configuration.limits.fixes.setRate(self.fixRate)
        configuration.limits.nearby.setRate(self.nearbyRate)
        configuration.limits.messages.setRate(self.messageRate)
        configuration.limits.friendRequests.setRate(self.friendRequestRate)
        configuration.limits.leaderboards.setRate(self.leaderboardRate)
        configuration.limits.registrations.setRate(self.registrationRate)
        configuration.limits.sharedLists.setRate(self.sharedListRate)
        configuration.limits.peopleSearches.setRate(self.peopleSearchRate)
        configuration.limits.follows.setRate(self.followRate)
        configuration.limits.posts.searches.setRate(self.postSearchRate)
        configuration.trustedProxy = self.trustedProxy.flatMap(IPAddressText.normalized)
        configuration.map.tiles = try MapConfiguration.tiles(self.tiles)
        configuration.map.tilesAttribution = self.tilesAttribution
        configuration.map.leafletDirectory = self.leaflet
        // Printed at start so an operator sees what is in force (there are no secrets among these).
        logger.info("configuration", metadata: [
            "database": "\(self.database.shown)", "host": "\(self.host)", "port": "\(self.port)", "parks": "\(self.parks)",
            "catalog": "\(self.catalog)",
            "log_level": "\(self.logLevel)", "bcrypt_cost": "\(self.bcryptCost)", "idle_timeout_s": "\(self.idleTimeout)",
            "fix_rate": "\(self.fixRate)", "nearby_rate": "\(self.nearbyRate)", "message_rate": "\(self.messageRate)",
            "friend_request_rate": "\(self.friendRequestRate)", "leaderboard_rate": "\(self.leaderboardRate)",
            "registration_rate": "\(self.registrationRate)", "shared_list_rate": "\(self.sharedListRate)", "people_search_rate": "\(self.peopleSearchRate)",
            "follow_rate": "\(self.followRate)", "post_search_rate": "\(self.postSearchRate)", "trusted_proxy": "\(self.trustedProxy ?? "none")",
            "tiles": "\(self.tiles)",
            "report_window_s": "\(self.reportWindow)", "executor": "\(self.executor)", "fast_lane": "\(self.fastLane)",
        ])
        let service = try await Service.open(configuration.service, logger: logger)
        let app = try buildApplication(configuration, service: service, logger: logger)
        // SIGTERM or SIGINT: stop accepting, drain in-flight requests and live sessions; every write
        // was committed before its response, so closing the store is all that is left.
        try await app.runService()
        try service.store.close()
        logger.info("stopped cleanly")
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
