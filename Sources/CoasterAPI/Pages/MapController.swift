import CoasterCore
import CoasterHTTP
import CoasterService
import CoasterStore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The map pages under `/map` (docs: Map): sign-in, the parks, one park's fences, waits and places,
/// me and my friends, and for admins a park file's preview and a day's density. Server-rendered;
/// each page's script (Assets/map.js) draws with Leaflet what the page and the JSON API give it.
struct MapController {
    let pages: Pages
    let service: Service
    let admin: AdminController
    let previews: ParkPreviews
    let assets: MapAssets

    /// The largest park file an admin may upload: the JSON route's limit, and room for the form.
    static let uploadLimit = 16 * 1024 * 1024
    static let formLimit = 16 * 1024

    func addRoutes(to router: Router<AppRequestContext>) {
        let map = router.group("map").add(middleware: PageErrors(pages: self.pages))
        map.get(use: self.parks)
        map.get("login", use: self.loginForm)
        map.post("login", use: self.login)
        map.post("logout", use: self.logout)
        map.get("parks/{parkId}", use: self.park)
        map.get("me", use: self.me)
        map.get("me/state.json", use: self.meState)
        map.get("admin/parks", use: self.uploadForm)
        map.post("admin/parks", use: self.upload)
        map.get("admin/parks/{parkId}/density", use: self.density)
        self.assets.addRoutes(to: map)
    }

    // MARK: Sign-in

    @Sendable func loginForm(_ request: Request, context: AppRequestContext) async throws -> Response {
        if context.identity != nil { return self.pages.redirect("/map") }
        return self.loginPage(request, context: context, next: request.uri.queryParameters["next"].map(String.init))
    }

    private func loginPage(_ request: Request, context: AppRequestContext, next: String?, username: String = "", alert: String? = nil,
                           status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        let token = MapSession.newLoginToken()
        var fields = headers
        fields.append(HTTPField(name: .setCookie, value: MapSession.setLoginCookie(token, secure: MapSession.overHTTPS(request, context: context))))
        var content = PageContent(title: "Sign in", page: "login", csrf: token)
        content.view = ["username": username, "next": Self.safeNext(next) ?? "", "alert": alert as Any]
        return self.pages.render("login", content, status: status, headers: fields)
    }

    /// `next` if it is a path of the map (never another site, nor a scheme-relative `//host`).
    static func safeNext(_ next: String?) -> String? {
        guard let next, next.hasPrefix("/map"), !next.hasPrefix("//"), next.utf8.count <= 512,
              next.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F && $0 != "\\" })
        else { return nil }
        return next
    }

    @Sendable func login(_ request: Request, context: AppRequestContext) async throws -> Response {
        let form = try await self.form(request, context: context)
        let next = form["next"]
        // The double-submit check: the form's token must be the cookie this site set with it.
        guard let cookie = MapSession.cookie(MapSession.loginCookie, in: request.headers), let given = form["csrf"],
              MapSession.constantTimeEqual(cookie, given)
        else {
            throw Problem(.forbidden, status: .forbidden, title: "Form expired",
                          detail: "The sign-in form was not one this site gave you, or it is older than ten minutes. Open the sign-in page again.")
        }
        let username = form["username"] ?? "", password = form["password"] ?? ""
        guard !username.isEmpty, !password.isEmpty, username.utf8.count <= 256, password.utf8.count <= 1024 else {
            return self.loginPage(request, context: context, next: next, username: String(username.prefix(64)),
                                  alert: "Enter your username and password.", status: .badRequest)
        }
        switch try await self.service.sessions.login(username: username, password: password, clientAddress: context.clientAddress) {
        case .success(let token, _, let expiresAt):
            let secure = MapSession.overHTTPS(request, context: context)
            let lifetime = max(0, expiresAt.timeIntervalSince(self.service.now()))
            return self.pages.redirect(Self.safeNext(next) ?? "/map", headers: HTTPFields([
                HTTPField(name: .setCookie, value: MapSession.setCookie(token: token, lifetime: lifetime, secure: secure)),
                HTTPField(name: .setCookie, value: MapSession.clearCookie(MapSession.loginCookie, path: "/map/login")),
            ]))
        case .invalidCredentials:
            return self.loginPage(request, context: context, next: next, username: String(username.prefix(64)),
                                  alert: "The username or the password is wrong.", status: .unauthorized)
        case .throttled(let wait):
            return self.loginPage(request, context: context, next: next, username: String(username.prefix(64)),
                                  alert: "Too many failed sign-ins; try again in \(Int(wait.rounded(.up))) seconds.", status: .tooManyRequests,
                                  headers: [.retryAfter: String(Int(wait.rounded(.up)))])
        }
    }

    @Sendable func logout(_ request: Request, context: AppRequestContext) async throws -> Response {
        let (me, _) = try await self.signedInForm(request, context: context)
        if let hash = me.tokenHash { try await self.service.sessions.logout(tokenHash: hash, user: me.id) }
        return self.pages.redirect("/map/login", headers: HTTPFields([HTTPField(name: .setCookie, value: MapSession.clearCookie(MapSession.cookie))]))
    }

    /// A form's fields (URL-encoded, at most ``formLimit`` bytes).
    private func form(_ request: Request, context: AppRequestContext) async throws -> [String: String] {
        guard let type = request.headers[.contentType], MediaType.essence(type) == "application/x-www-form-urlencoded" else {
            throw JSONBody.unsupported(request.headers[.contentType] ?? "none", expected: ["application/x-www-form-urlencoded"])
        }
        let body = try await request.body.collect(upTo: Self.formLimit)
        return HTMLForm.urlEncoded(Data(body.readableBytesView))
    }

    /// The signed-in caller of a form, whose CSRF token must match their session.
    private func signedInForm(_ request: Request, context: AppRequestContext) async throws -> (Identity, [String: String]) {
        let me = try context.requireIdentity()
        let form = try await self.form(request, context: context)
        try Self.checkFormToken(form["csrf"], context: context)
        return (me, form)
    }

    static func checkFormToken(_ given: String?, context: AppRequestContext) throws {
        guard let session = context.cookieSession, MapSession.formTokenMatches(given, session: session) else {
            throw Problem(.forbidden, status: .forbidden, title: "Form expired",
                          detail: "The form was not one this site gave you for this session. Open the page again and resubmit.")
        }
    }

    /// The layout's parts for a signed-in page.
    private func content(_ title: String, page: String, context: AppRequestContext) throws -> PageContent {
        let me = try context.requireIdentity()
        var content = PageContent(title: title, page: page, user: .init(id: me.id.rawValue, username: me.username))
        content.csrf = context.cookieSession.map(MapSession.formToken(session:)) ?? ""
        content.isAdmin = me.role == .admin
        return content
    }

    // MARK: Parks

    @Sendable func parks(_ request: Request, context: AppRequestContext) async throws -> Response {
        var content = try self.content("Parks", page: "parks", context: context)
        let parks = try await self.service.store.parkSummaries().sorted { $0.name < $1.name }
        content.view = ["parks": parks.map { ["id": $0.id.rawValue, "name": $0.name, "rides": $0.rideCount] }]
        return self.pages.render("parks", content)
    }

    @Sendable func park(_ request: Request, context: AppRequestContext) async throws -> Response {
        let id = try Self.parkID(context)
        var content = try self.content("Park", page: "park", context: context)
        guard let definition = try await self.service.store.park(id),
              let board = try await self.service.store.waitBoard(park: id, estimator: self.service.location.estimator,
                                                                 statusRules: self.service.location.statusRules)
        else { throw ParksController.noSuchPark(id) }
        let waits = Dictionary(board.map { ($0.ride.id, $0) }, uniquingKeysWith: { a, _ in a })
        let rides = Dictionary(definition.rides.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        let order: [ZoneKind: Int] = [.ride: 0, .queue: 1, .poi: 2, .land: 3]
        let zones = definition.zones.sorted { (order[$0.kind] ?? 9, $0.name) < (order[$1.kind] ?? 9, $1.name) }
        content.title = definition.park.name
        content.view = [
            "park": ["id": id.rawValue, "name": definition.park.name, "attribution": definition.park.attribution ?? ""],
            "zones": zones.map { zone -> [String: Any] in
                var row: [String: Any] = ["id": zone.id.rawValue, "kind": zone.kind.rawValue, "name": zone.name]
                if let detail = zone.category ?? zone.land { row["detail"] = detail }
                if zone.kind == .ride, let ride = zone.ride {
                    row["ride"] = ride.rawValue
                    let wait = waits[ride].map(WaitShown.init) ?? WaitShown(nil)
                    row["wait"] = ["text": wait.text, "band": wait.band.rawValue, "minutes": wait.minutes.map { String(Int($0)) } ?? ""]
                    if let land = rides[ride]?.land { row["detail"] = land }
                }
                return row
            },
        ]
        content.data = scriptJSON(ParkPageData(park: id.rawValue, bands: WaitShown.Band.thresholds, tiles: self.tiles))
        return self.pages.render("park", content)
    }

    static func parkID(_ context: AppRequestContext) throws -> ParkID {
        let text = try context.parameters.require("parkId")
        guard Slug.isValid(text) else { throw ParksController.noSuchPark(ParkID(rawValue: String(text.prefix(64)))) }
        return ParkID(rawValue: text)
    }

    var tiles: TilesData { TilesData(url: self.pages.configuration.tiles, attribution: self.pages.configuration.tilesAttribution) }

    // MARK: Me and my friends

    @Sendable func me(_ request: Request, context: AppRequestContext) async throws -> Response {
        var content = try self.content("Me and my friends", page: "me", context: context)
        let state = try await self.state(of: try context.requireIdentity().id)
        content.view = ["me": state.me.map { ["lat": $0.lat, "lon": $0.lon, "accuracy": Int($0.accuracy.rounded()), "at": $0.at] } as Any,
                        "friends": state.friendRows]
        content.data = scriptJSON(MePageData(tiles: self.tiles.aroundPeople(), state: state))
        return self.pages.render("me", content)
    }

    /// What `/map/me` draws, again: the page asks on every live message and every so often.
    @Sendable func meState(_ request: Request, context: AppRequestContext) async throws -> Response {
        let state = try await self.state(of: try context.requireIdentity().id)
        var headers = self.pages.securityHeaders()
        headers[.contentType] = "application/json; charset=utf-8"
        let data = (try? AppRequestContext.encoder.encode(state)) ?? Data("{}".utf8)
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    private func state(of me: UserID) async throws -> MeState {
        guard let person = try await self.service.people.person(loading: me) else { throw Problem.unauthorized() }
        let own = person.latest.map { MeState.Position(lat: $0.position.lat, lon: $0.position.lon, accuracy: $0.accuracy,
                                                        at: $0.recordedAt.formatted(.iso8601)) }
        let friends = self.service.live.friendLocations(for: me).map(\.json)
        return MeState(me: own, friends: friends)
    }

    // MARK: Admin

    @Sendable func uploadForm(_ request: Request, context: AppRequestContext) async throws -> Response {
        try Self.requireAdmin(context)
        var content = try self.content("Load a park", page: "admin", context: context)
        content.view = ["limitMB": Self.uploadLimit / 1024 / 1024]
        content.data = scriptJSON(AdminPageData(tiles: self.tiles, preview: nil))
        return self.pages.render("admin", content)
    }

    static func requireAdmin(_ context: AppRequestContext) throws {
        guard try context.requireIdentity().role == .admin else {
            throw Problem(.forbidden, status: .forbidden, title: "Forbidden", detail: "Only park admins may load parks.")
        }
    }

    /// The upload (a park file: validated, drawn, nothing written) and the load that follows it.
    @Sendable func upload(_ request: Request, context: AppRequestContext) async throws -> Response {
        try Self.requireAdmin(context)
        let me = try context.requireIdentity()
        var content = try self.content("Load a park", page: "admin", context: context)
        content.view = ["limitMB": Self.uploadLimit / 1024 / 1024]
        func refused(_ alert: String, _ status: HTTPResponse.Status) -> Response {
            content.view["alert"] = alert
            content.data = scriptJSON(AdminPageData(tiles: self.tiles, preview: nil))
            return self.pages.render("admin", content, status: status)
        }
        let type = request.headers[.contentType] ?? ""
        if MediaType.essence(type) == "application/x-www-form-urlencoded" {
            let (_, form) = try await self.signedInForm(request, context: context)
            guard form["action"] == "load", let token = form["preview"], let pending = self.previews.take(token, for: me.id) else {
                return refused("That preview has expired (previews are kept for \(Int(ParkPreviews.lifetime / 60)) minutes). Upload the file again.",
                               .conflict)
            }
            let read = try ParkImporter().read(pending)
            let result = try await self.admin.load(read, by: me, logger: context.logger)
            content.view["notice"] = "\(read.definition.park.name) is loaded: \(result.zones) zones, \(result.rides) rides."
            content.view["loadedPark"] = read.definition.park.id.rawValue
            content.data = scriptJSON(AdminPageData(tiles: self.tiles, preview: nil))
            return self.pages.render("admin", content, status: result.replaced ? .ok : .created)
        }
        guard let boundary = HTMLForm.boundary(type) else {
            return refused("Upload the park file with the form (multipart/form-data).", .unsupportedMediaType)
        }
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: Self.uploadLimit + Self.formLimit)
        } catch where ProblemMiddleware<AppRequestContext>.problem(for: error, request: request, context: context).status == .contentTooLarge {
            return refused("The file is larger than \(Self.uploadLimit / 1024 / 1024) MB, the most a park file may be.", .contentTooLarge)
        }
        let parts: [HTMLForm.Part]
        do {
            parts = try HTMLForm.multipart(Data(body.readableBytesView), boundary: boundary)
        } catch {
            return refused("The upload could not be read as a form: \(error).", .badRequest)
        }
        try Self.checkFormToken(parts.first { $0.name == "csrf" }.map { String(decoding: $0.body, as: UTF8.self) }, context: context)
        guard let file = parts.first(where: { $0.name == "park" }), !file.body.isEmpty else {
            return refused("Choose a park file (GeoJSON) to upload.", .badRequest)
        }
        guard file.body.count <= Self.uploadLimit else {
            return refused("The file is larger than \(Self.uploadLimit / 1024 / 1024) MB, the most a park file may be.", .contentTooLarge)
        }
        let preview = ParkPreview(file.body, filename: file.filename)
        guard let document = preview.document else {
            return refused("\(file.filename.map { "“\($0)”" } ?? "The file") is not GeoJSON: \(preview.issues.first?.reason ?? "it is not JSON").",
                           .unprocessableContent)
        }
        if let name = file.filename { content.view["filename"] = name }
        content.view["problems"] = preview.issues.enumerated().map { Self.issueRow($1, index: $0) }
        content.view["warnings"] = preview.warnings.enumerated().map { Self.issueRow($1, index: $0) }
        content.view["hasProblems"] = !preview.issues.isEmpty
        content.view["hasWarnings"] = !preview.warnings.isEmpty
        if preview.issues.isEmpty, let park = preview.park {
            content.view["valid"] = ["park": park.name, "id": park.id.rawValue, "token": self.previews.keep(file.body, for: me.id)]
        }
        content.data = scriptJSON(AdminPageData(tiles: self.tiles, preview: .init(
            problems: preview.issues.map(AdminPageData.Issue.init), warnings: preview.warnings.map(AdminPageData.Issue.init))))
        // The file as it was uploaded (it is JSON: ``ParkPreview/document``), for the map to draw.
        content.document = escapeForScript(document)
        return self.pages.render("admin", content, status: preview.issues.isEmpty ? .ok : .unprocessableContent)
    }

    static func issueRow(_ issue: ImportIssue, index: Int) -> [String: Any] {
        var row: [String: Any] = ["pointer": issue.pointer, "reason": issue.reason, "index": index]
        if let feature = issue.feature { row["feature"] = String(feature) }
        if let at = issue.location { row["at"] = String(format: "%.6f, %.6f", at.lat, at.lon) }
        return row
    }

    @Sendable func density(_ request: Request, context: AppRequestContext) async throws -> Response {
        try Self.requireAdmin(context)
        let id = try Self.parkID(context)
        var content = try self.content("Density", page: "density", context: context)
        let day = request.uri.queryParameters["day"].map(String.init)
        let answer = try await DensityPage.load(park: id, day: day, service: self.service)
        content.title = "\(answer.parkName): density on \(answer.day)"
        content.view = answer.view
        content.data = answer.data(tiles: self.tiles)
        return self.pages.render("density", content)
    }
}

/// The tiles a page's map shows.
struct TilesData: Encodable {
    var url: String?
    var attribution: String
    /// The finest zoom whose tiles the page asks of the tile server (finer zooms enlarge them), or
    /// nil for any.
    var nativeZoom: Int?

    /// On a page that shows where other people are (`/map/me`), the tiles a browser asks for say
    /// to the tile server, another party, where they are: at zoom 17 a tile is some 300 m across.
    /// Such a page asks for nothing finer than zoom 14, tiles 1.8 km across at Cedar Point's
    /// latitude: a whole park and its car parks, no more than park-only sharing would tell.
    static let zoomAroundPeople = 14

    func aroundPeople() -> TilesData {
        var tiles = self
        tiles.nativeZoom = Self.zoomAroundPeople
        return tiles
    }
}

struct ParkPageData: Encodable {
    var park: String
    var bands: [String: Double]
    var tiles: TilesData
}

struct MeState: Encodable {
    struct Position: Encodable {
        var lat: Double
        var lon: Double
        var accuracy: Double
        var at: String
    }

    var me: Position?
    /// Each friend's `location` message as `/v1/live` would send it now (JSON text).
    var friends: [String]

    var friendRows: [[String: Any]] {
        self.friends.compactMap { text in
            guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
                  let user = object["user"] as? [String: Any], let id = user["id"] as? Int64 ?? (user["id"] as? Int).map(Int64.init)
            else { return nil }
            let precision = object["precision"] as? String ?? ""
            var shown = ""
            switch precision {
            case "exact": shown = "exact position"
            case "approximate": shown = "approximate area"
            default: shown = (object["park"] as? [String: Any])?["name"] as? String ?? "in a park"
            }
            let place = (object["park"] as? [String: Any])?["name"] as? String
            return ["id": String(id), "name": user["displayName"] as? String ?? user["username"] as? String ?? "", "precision": precision,
                    "shown": place.map { "\(shown), at \($0)" } ?? shown]
        }
    }
}

struct MePageData: Encodable {
    struct Grid: Encodable {
        /// ``ApproximateGrid/latitudeStep``: the page draws an approximate friend as this cell.
        var latitudeStep = ApproximateGrid.latitudeStep
    }

    var tiles: TilesData
    var state: MeState
    var grid = Grid()
}

struct AdminPageData: Encodable {
    struct Issue: Encodable {
        var feature: Int?
        var pointer: String
        var reason: String
        /// `[lat, lon]` where the problem is on the ground, when it has a place.
        var at: [Double]?

        init(_ issue: ImportIssue) {
            self.feature = issue.feature
            self.pointer = issue.pointer
            self.reason = issue.reason
            self.at = issue.location.map { [$0.lat, $0.lon] }
        }
    }

    struct Preview: Encodable {
        var problems: [Issue]
        var warnings: [Issue]
    }

    var tiles: TilesData
    var preview: Preview?
}
