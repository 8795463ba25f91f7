import CoasterCore
import CoasterHTTP
import CoasterService
import CoasterStore
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore

/// How to serve the service over HTTP: the service's own configuration and what a server adds.
/// The service's fields read through (`configuration.limits`, `configuration.location`).
@dynamicMemberLookup
public struct ServerConfiguration: Sendable {
    public var service: ServiceConfiguration
    public var host: String
    public var port: Int
    /// Close a connection that sends nothing for this long (slow or dead clients).
    public var idleTimeout: Duration = .seconds(30)
    /// Answer the hot read routes on the event loop (``FastLane``); `false` sends every request
    /// through the router, for comparison.
    public var fastLane = true
    /// The address of a reverse proxy whose `X-Forwarded-For` names the client (`nil`: none is
    /// trusted, and the client is the socket's peer).
    public var trustedProxy: String?
    /// The map pages' tiles and Leaflet (`serve --tiles`, `--leaflet`).
    public var map = MapConfiguration()

    public init(_ service: ServiceConfiguration, host: String = "127.0.0.1", port: Int = 8080) {
        self.service = service
        self.host = host
        self.port = port
    }

    public subscript<T>(dynamicMember path: WritableKeyPath<ServiceConfiguration, T>) -> T {
        get { self.service[keyPath: path] }
        set { self.service[keyPath: path] = newValue }
    }
}

/// The router with every route of the service.
public func buildRouter(_ service: Service, trustedProxy: String? = nil, map: MapConfiguration = MapConfiguration(),
                        logger: Logger? = nil) throws -> Router<AppRequestContext> {
    // HEAD is served wherever GET is, as RFC 9110 asks (monitors probe `/health` with it).
    let router = Router(context: AppRequestContext.self, options: .autoGenerateHeadEndpoints)
    router.add(middleware: ConnectionCloseMiddleware())
    router.add(middleware: RequestMetricsMiddleware(metrics: service.metrics))
    router.add(middleware: ProblemMiddleware())
    router.add(middleware: ContentEncodingMiddleware())
    router.add(middleware: RepeatedQueryMiddleware())
    if let proxy = trustedProxy { router.add(middleware: TrustedProxyMiddleware(proxy: proxy)) }
    router.add(middleware: BearerAuthentication(sessions: service.sessions))
    router.addRoutes(HealthController(store: service.store, fences: service.fences).endpoints)
    router.addRoutes(MetricsController(service: service).endpoints)
    router.addRoutes(try OpenAPIController.load().endpoints)

    let accounts = AccountsController(store: service.store, sessions: service.sessions, accounts: service.accounts, people: service.people,
                                      registrations: service.limiters.registrations, now: service.now)
    router.addRoutes(accounts.publicEndpoints, atPath: "/v1")

    let members = router.group("v1").add(middleware: RequireUser())
    members.addRoutes(accounts.userEndpoints)
    let places = FencePlaces(service.fences)
    members.addRoutes(ParksController(store: service.store, fences: service.fences, places: places).endpoints)
    members.addRoutes(FriendsController(store: service.store, people: service.people, rates: service.limiters.friendRequests, now: service.now).endpoints)
    let challenges = Challenges(store: service.store, live: service.live, privacy: service.location.privacy, now: service.now)
    let lists = Lists(store: service.store, live: service.live, privacy: service.location.privacy, rules: service.listRules, now: service.now)
    members.addRoutes(FixesController(store: service.store, fences: service.fences, people: service.people, recorder: service.fixRecorder,
                                      policy: service.location, rates: service.limiters.fixes, lists: lists).endpoints)
    members.addRoutes(WaitsController(store: service.store, reports: service.crowdReports, policy: service.location,
                                      now: service.now).endpoints)
    members.addRoutes(SocialController(store: service.store, people: service.people, live: service.live, policy: service.location,
                                       rates: service.limiters.messages, leaderboardRates: service.limiters.leaderboards, cursors: CursorSeal(key: service.cursorKey),
                                       now: service.now).endpoints)
    LiveController(live: service.live, heartbeat: service.location.liveHeartbeat).addRoutes(to: members)
    members.addRoutes(NearbyController(people: service.people, fences: places, policy: service.location, rates: service.limiters.nearby,
                                       now: service.now).endpoints)
    members.addRoutes(PlacesController(people: service.people, places: PlacesInForce(service.fences), policy: service.location,
                                       now: service.now).endpoints)
    members.addRoutes(RidesController(store: service.store, policy: service.location, challenges: challenges, lists: lists).endpoints)
    members.addRoutes(ChallengesController(challenges: challenges, now: service.now).endpoints)
    let catalog = CatalogController(store: service.store)
    members.addRoutes(catalog.endpoints)
    let listRoutes = ListsController(lists: lists, sharedReads: service.limiters.sharedLists)
    members.addRoutes(listRoutes.endpoints)
    router.addRoutes(listRoutes.publicEndpoints, atPath: "/v1")
    members.addRoutes(PeopleController(store: service.store, rules: PeopleRules(), privacy: service.location.privacy,
                                       searches: service.limiters.peopleSearches, follows: service.limiters.follows).endpoints)
    members.addRoutes(PostsController(posts: Posts(store: service.store, privacy: service.location.privacy, limits: service.limiters.posts,
                                                   now: service.now)).endpoints)
    router.addRoutes(OwnTracksController(store: service.store, fences: service.fences, sessions: service.sessions, people: service.people,
                                         recorder: service.fixRecorder, policy: service.location, rates: service.limiters.fixes,
                                         now: service.now).endpoints)

    let admins = router.group("v1/admin").add(middleware: RequireAdmin())
    let admin = AdminController(store: service.store, fences: service.fences, live: service.live, policy: service.location)
    admins.addRoutes(admin.endpoints)
    admins.addRoutes(catalog.adminEndpoints)
    let pages = try Pages.load(map)
    MapController(pages: pages, service: service, admin: admin, previews: ParkPreviews(now: service.now),
                  assets: MapAssets(pages: pages, logger: logger)).addRoutes(to: router)
    // Last: it wraps only the not-found responder.
    router.add(middleware: AllowedMethodsMiddleware(routes: router.routes))
    return router
}

/// The application `coasterlife serve` runs, and the tests drive.
public func buildApplication(_ configuration: ServerConfiguration, logger: Logger) async throws -> some ApplicationProtocol {
    let service = try await Service.open(configuration.service, logger: logger)
    return try buildApplication(configuration, service: service, logger: logger)
}

/// The `Server` header of every answer: the router's (the application's configuration) and the
/// one CoasterHTTP's handlers write.
let serverName = "coasterlife"

/// The application over an already opened service.
public func buildApplication(_ configuration: ServerConfiguration, service: Service, logger: Logger) throws -> some ApplicationProtocol {
    let router = try buildRouter(service, trustedProxy: configuration.trustedProxy, map: configuration.map, logger: logger)
    // The sweep that shows settled challenge progress tells the participants listening here.
    service.housekeeping.pushChallengeMoves(to: service.live)
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
                                                  CodecFrontInstaller(FastLane(routes: routes, idleTimeout: idleTimeout, serverName: serverName), logger: logger)],
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
                idleTimeout: idleTimeout, metrics: service.metrics, serverName: serverName)
        },
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: serverName),
        services: [service.housekeeping],
        logger: logger)
}
