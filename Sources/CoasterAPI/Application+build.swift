import CoasterCore
import CoasterHTTP
import CoasterStore
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore

/// How to run the service: plain values, filled from flags by the `serve` command and by tests.
public struct ServiceConfiguration: Sendable {
    public var host: String
    public var port: Int
    /// The SpatiaLite database file.
    public var databasePath: String
    /// Park files loaded into an empty database on first start (`nil`: none).
    public var seedParksDirectory: String?
    public var accounts: AccountPolicy
    public var location: LocationPolicy
    /// The clock every rule reads; tests move it.
    public var now: @Sendable () -> Date = Date.init
    /// Metrics to record into (`serve` shares its registry with swift-metrics); a new one if `nil`.
    public var metrics: ServiceMetrics?
    /// Close a connection that sends nothing for this long (slow or dead clients).
    public var idleTimeout: Duration = .seconds(30)
    /// Answer the hot read routes on the event loop (``FastLane``); `false` sends every request
    /// through the router, for comparison.
    public var fastLane = true
    /// Messages a user may send a second, sustained, and in a burst.
    public var messagesPerSecond: Double = 2
    public var messageBurst = 20
    /// Friend requests a user may send a second, sustained, and in a burst: a group's worth at
    /// once, then one every ten seconds. A request says whether a username exists, and each one
    /// lands in someone's list.
    public var friendRequestsPerSecond = 0.1
    public var friendRequestBurst = 30
    /// Leaderboard pages a user may read a second, sustained, and in a burst.
    public var leaderboardsPerSecond = 2.0
    public var leaderboardBurst = 30
    /// Accounts one address may register a second, sustained, and in a burst.
    public var registrationsPerSecond = 1.0 / 60
    public var registrationBurst = 5
    /// How often the store's session revocations are read (those of other processes).
    public var revocationPoll: Duration = .seconds(1)
    /// The address of a reverse proxy whose `X-Forwarded-For` names the client (`nil`: none is
    /// trusted, and the client is the socket's peer).
    public var trustedProxy: String?

    public init(
        host: String = "127.0.0.1", port: Int = 8080, databasePath: String, seedParksDirectory: String? = nil,
        accounts: AccountPolicy = AccountPolicy(), location: LocationPolicy = LocationPolicy()
    ) {
        self.location = location
        self.host = host
        self.port = port
        self.databasePath = databasePath
        self.seedParksDirectory = seedParksDirectory
        self.accounts = accounts
    }
}

/// The pieces a running service is made of, built once and shared by `serve` and the tests.
public struct Service: Sendable {
    public let store: Store
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
    /// Seals the leaderboards' page cursors.
    let cursors: CursorSeal
    /// The reverse proxy whose `X-Forwarded-For` is believed (``ServiceConfiguration/trustedProxy``).
    let trustedProxy: String?
    let fixRates: RequestRates
    let nearbyRates: RequestRates
    let messageRates: RequestRates
    let friendRequestRates: RequestRates
    let leaderboardRates: RequestRates
    /// Registrations per client address.
    let registrationRates: RequestRates

    /// Opens the store, loads the seed parks into an empty database, and builds the fence index.
    public static func open(_ configuration: ServiceConfiguration, logger: Logger) async throws -> Service {
        let now = configuration.now
        // A new database is seeded from the park directory: check it can be read before anything
        // is created, so that a mistyped --parks leaves no empty database behind.
        if let directory = configuration.seedParksDirectory, !FileManager.default.fileExists(atPath: configuration.databasePath) {
            do {
                _ = try ParkFiles.files(in: directory)
            } catch {
                throw StartupError("cannot read the park directory \(directory): \(error.localizedDescription) Nothing was created.")
            }
        }
        let store = try Store(path: configuration.databasePath, now: now)
        // What a crash during an upload left: a file without its row, or half a file.
        let sweep = try await store.sweepPhotoFiles()
        if sweep.unused + sweep.partial > 0 {
            logger.notice("removed photo files no row uses", metadata: ["unused": "\(sweep.unused)", "partial": "\(sweep.partial)"])
        }
        let fences = Fences(store: store)
        if let directory = configuration.seedParksDirectory, try await store.parkSummaries().isEmpty {
            try await Self.seed(store: store, from: directory, logger: logger)
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
            location: location, people: people, live: live,
            metrics: configuration.metrics ?? ServiceMetrics(), now: now, housekeeping: housekeeping, cursors: CursorSeal(key: try await store.secret("cursor")), trustedProxy: configuration.trustedProxy,
            fixRates: RequestRates(perSecond: location.fixRequestsPerSecond, burst: location.fixRequestBurst, now: now),
            nearbyRates: RequestRates(perSecond: location.nearbyRequestsPerSecond, burst: location.nearbyRequestBurst, now: now),
            messageRates: RequestRates(perSecond: configuration.messagesPerSecond, burst: configuration.messageBurst, now: now),
            friendRequestRates: RequestRates(perSecond: configuration.friendRequestsPerSecond, burst: configuration.friendRequestBurst, now: now),
            leaderboardRates: RequestRates(perSecond: configuration.leaderboardsPerSecond, burst: configuration.leaderboardBurst, now: now),
            registrationRates: RequestRates(perSecond: configuration.registrationsPerSecond, burst: configuration.registrationBurst, now: now))
    }

    /// What records fixes, for every route that takes them.
    var fixRecorder: FixRecorder {
        FixRecorder(store: self.store, fences: self.fences, people: self.people, live: self.live, metrics: self.metrics, policy: self.location)
    }

    private static func seed(store: Store, from directory: String, logger: Logger) async throws {
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

/// The router with every route of the service.
public func buildRouter(_ service: Service) throws -> Router<AppRequestContext> {
    // HEAD is served wherever GET is, as RFC 9110 asks (monitors probe `/health` with it).
    let router = Router(context: AppRequestContext.self, options: .autoGenerateHeadEndpoints)
    router.add(middleware: ConnectionCloseMiddleware())
    router.add(middleware: RequestMetricsMiddleware(metrics: service.metrics))
    router.add(middleware: ProblemMiddleware())
    router.add(middleware: ContentEncodingMiddleware())
    router.add(middleware: RepeatedQueryMiddleware())
    if let proxy = service.trustedProxy { router.add(middleware: TrustedProxyMiddleware(proxy: proxy)) }
    router.add(middleware: BearerAuthentication(sessions: service.sessions))
    router.addRoutes(HealthController(store: service.store, fences: service.fences).endpoints)
    router.addRoutes(MetricsController(service: service).endpoints)
    router.addRoutes(try OpenAPIController.load().endpoints)

    let accounts = AccountsController(store: service.store, sessions: service.sessions, accounts: service.accounts, people: service.people,
                                      registrations: service.registrationRates, now: service.now)
    router.addRoutes(accounts.publicEndpoints, atPath: "/v1")

    let members = router.group("v1").add(middleware: RequireUser())
    members.addRoutes(accounts.userEndpoints)
    members.addRoutes(ParksController(store: service.store, fences: service.fences).endpoints)
    members.addRoutes(FriendsController(store: service.store, people: service.people, rates: service.friendRequestRates, now: service.now).endpoints)
    members.addRoutes(FixesController(store: service.store, fences: service.fences, people: service.people, recorder: service.fixRecorder,
                                      policy: service.location, rates: service.fixRates).endpoints)
    members.addRoutes(WaitsController(store: service.store, fences: service.fences, live: service.live, policy: service.location,
                                      now: service.now).endpoints)
    members.addRoutes(SocialController(store: service.store, people: service.people, live: service.live, policy: service.location,
                                       rates: service.messageRates, leaderboardRates: service.leaderboardRates, cursors: service.cursors,
                                       now: service.now).endpoints)
    LiveController(live: service.live, heartbeat: service.location.liveHeartbeat).addRoutes(to: members)
    members.addRoutes(NearbyController(people: service.people, fences: service.fences, policy: service.location, rates: service.nearbyRates,
                                       now: service.now).endpoints)
    members.addRoutes(RidesController(store: service.store, policy: service.location).endpoints)
    router.addRoutes(OwnTracksController(store: service.store, fences: service.fences, sessions: service.sessions, people: service.people,
                                         recorder: service.fixRecorder, policy: service.location, rates: service.fixRates,
                                         now: service.now).endpoints)

    let admins = router.group("v1/admin").add(middleware: RequireAdmin())
    admins.addRoutes(AdminController(store: service.store, fences: service.fences, live: service.live, policy: service.location).endpoints)
    // Last: it wraps only the not-found responder.
    router.add(middleware: AllowedMethodsMiddleware(routes: router.routes))
    return router
}

/// The application `coasterlife serve` runs, and the tests drive.
public func buildApplication(_ configuration: ServiceConfiguration, logger: Logger) async throws -> some ApplicationProtocol {
    let service = try await Service.open(configuration, logger: logger)
    return try buildApplication(configuration, service: service, logger: logger)
}

/// The application over an already opened service.
public func buildApplication(_ configuration: ServiceConfiguration, service: Service, logger: Logger) throws -> some ApplicationProtocol {
    let router = try buildRouter(service)
    let idleTimeout = TimeAmount.seconds(configuration.idleTimeout.components.seconds)
    // A refused WebSocket upgrade is answered with the route's answer (a 401 problem), not
    // hummingbird-websocket's bare 400.
    let refusals = UpgradeRefusals()
    // With the fast lane, the idle timeout is its to keep: Hummingbird's handler does not see the
    // requests it answers.
    var http1: HTTP1Channel.Configuration
    if configuration.fastLane {
        let routes = try FastRoutes(service, logger: logger)
        http1 = .init(additionalChannelHandlers: [UpgradeRefusals.Writer(refusals),
                                                  CodecFrontInstaller(FastLane(routes: routes, idleTimeout: idleTimeout), logger: logger)],
                      idleTimeout: nil)
    } else {
        http1 = .init(additionalChannelHandlers: [UpgradeRefusals.Writer(refusals), CodecFrontInstaller(ConnectionCloser(), logger: logger)],
                      idleTimeout: idleTimeout)
    }
    http1.httpDecoder = .server
    let channel = HTTP1WebSocketUpgradeChannel.Configuration(http1: http1, ws: .init(autoPing: .enabled(timePeriod: .seconds(30))))
    let webSocketResponder = UpgradeRefusals.RecordingResponder(inner: router.buildResponder(), refusals: refusals,
                                                                   metrics: service.metrics)
    return Application(
        router: router,
        server: HTTPServerBuilder { responder in
            GuardedHTTPChannel(
                inner: HTTP1WebSocketUpgradeChannel(responder: responder, webSocketResponder: webSocketResponder, configuration: channel),
                idleTimeout: idleTimeout, metrics: service.metrics)
        },
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "coasterlife"),
        services: [service.housekeeping],
        logger: logger)
}
