import CoasterHTTP
import CoasterService
import Foundation
import HTTPTypes
import Hummingbird
import Mustache
import NIOCore

/// What the map pages are served with (`serve --tiles`, `--leaflet`).
public struct MapConfiguration: Sendable {
    /// OpenStreetMap's standard tiles, the default background: their usage policy asks for the
    /// attribution the pages show, and allows a map like this one at its scale.
    public static let openStreetMapTiles = "https://tile.openstreetmap.org/{z}/{x}/{y}.png"
    public static let openStreetMapAttribution = "© OpenStreetMap contributors"

    /// A Leaflet URL template for background tiles, or `nil` for a plain background (the pages
    /// draw fences, labels and a scale bar without any).
    public var tiles: String? = Self.openStreetMapTiles
    /// Shown in the map's corner beside the data's own attribution.
    public var tilesAttribution = Self.openStreetMapAttribution
    /// Where Debian's `libjs-leaflet` put Leaflet (`leaflet.js`, `leaflet.css`, `images/`).
    public var leafletDirectory = "/usr/share/javascript/leaflet"

    public init() {}

    /// The tiles' origin as a Content-Security-Policy source (`https://tile.openstreetmap.org`;
    /// `https://*.example.org` for a template with a `{s}` subdomain), or `nil` for none.
    var tilesSource: String? {
        guard let tiles, let url = URL(string: tiles.replacingOccurrences(of: "{s}", with: "s")
            .replacingOccurrences(of: "{z}", with: "0").replacingOccurrences(of: "{x}", with: "0")
            .replacingOccurrences(of: "{y}", with: "0").replacingOccurrences(of: "{r}", with: "")),
              let scheme = url.scheme, scheme == "https" || scheme == "http", let host = url.host
        else { return nil }
        let shownHost = tiles.contains("{s}.") ? host.replacingOccurrences(of: "s.", with: "*.", options: .anchored) : host
        return "\(scheme)://\(shownHost)" + (url.port.map { ":\($0)" } ?? "")
    }

    /// Checks `--tiles`: `none`, or an http(s) URL template with `{z}`, `{x}` and `{y}`.
    public static func tiles(_ argument: String) throws -> String? {
        if argument == "none" { return nil }
        var configuration = MapConfiguration()
        configuration.tiles = argument
        guard argument.contains("{z}"), argument.contains("{x}"), argument.contains("{y}"), configuration.tilesSource != nil else {
            throw StartupError("--tiles must be none or an http(s) URL template with {z}, {x} and {y}, e.g. \(Self.openStreetMapTiles)")
        }
        return argument
    }
}

/// The pages' templates (Pages/Templates, swift-mustache) and how a page is answered.
struct Pages: Sendable {
    let library: MustacheLibrary
    let configuration: MapConfiguration

    /// Reads every template of the bundle once, at start: a missing or broken template stops the
    /// server with its name rather than failing a page later.
    static func load(_ configuration: MapConfiguration) throws -> Pages {
        guard let directory = Bundle.module.url(forResource: "Templates", withExtension: nil) else {
            throw StartupError("the map templates are missing from the CoasterAPI bundle")
        }
        var templates: [String: MustacheTemplate] = [:]
        for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) where file.hasSuffix(".mustache") {
            let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            do {
                templates[String(file.dropLast(".mustache".count))] = try MustacheTemplate(string: text)
            } catch {
                throw StartupError("map template \(file): \(error)")
            }
        }
        return Pages(library: MustacheLibrary(templates: templates), configuration: configuration)
    }

    /// The Content-Security-Policy of every page: scripts and styles only from this server, no
    /// inline script, no plugin, no framing; images from here and the tiles' origin when set.
    var contentSecurityPolicy: String {
        let images = ["'self'", "data:"] + (self.configuration.tilesSource.map { [$0] } ?? [])
        return [
            "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src \(images.joined(separator: " "))",
            "connect-src 'self'", "font-src 'self'", "form-action 'self'", "frame-ancestors 'none'", "base-uri 'none'",
        ].joined(separator: "; ")
    }

    /// Headers every page and asset answer has.
    func securityHeaders(cache: String = "no-store") -> HTTPFields {
        var headers: HTTPFields = [
            .contentSecurityPolicy: self.contentSecurityPolicy,
            .xContentTypeOptions: "nosniff",
            .referrerPolicy: "same-origin",
            .cacheControl: cache,
        ]
        headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        return headers
    }

    /// A page: `template` rendered with `page` inside the layout.
    func render(_ template: String, _ page: PageContent, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        let html = self.library.render(page, withTemplate: template) ?? ""
        var fields = self.securityHeaders()
        fields[.contentType] = "text/html; charset=utf-8"
        for field in headers { fields.append(field) }
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// 303 See Other to a path of ours.
    func redirect(_ location: String, headers: HTTPFields = [:]) -> Response {
        var fields = self.securityHeaders()
        fields[.location] = location
        for field in headers { fields.append(field) }
        return Response(status: .seeOther, headers: fields)
    }
}

/// What every page template is given: the layout's parts, and the page's own values.
struct PageContent {
    var title: String
    /// `data-page` of the body: which part of map.js runs.
    var page: String
    var user: UserLink?
    /// The CSRF token of this session's forms (the logout button's among them).
    var csrf: String = ""
    var isAdmin = false
    /// Values the page's script reads, as JSON in a non-executed `<script type="application/json">`
    /// (``scriptJSON(_:)``): the strict policy allows no inline script.
    var data: String = "{}"
    /// A park file the admin preview draws, escaped like ``data``.
    var document: String?
    var view: [String: Any] = [:]

    struct UserLink {
        var id: Int64
        var username: String
    }
}

/// JSON to put inside `<script type="application/json">`: `<`, `>` and `&` escaped as `\u003c`…,
/// so that no value (a park's name, a user's text) can close the element or open a comment.
func scriptJSON(_ value: some Encodable) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
    return escapeForScript(String(decoding: data, as: UTF8.self))
}

/// `json` made safe for `<script type="application/json">` (see ``scriptJSON(_:)``).
func escapeForScript(_ json: String) -> String {
    var out = ""
    out.reserveCapacity(json.utf8.count)
    for scalar in json.unicodeScalars {
        switch scalar {
        case "<": out += "\\u003c"
        case ">": out += "\\u003e"
        case "&": out += "\\u0026"
        case "\u{2028}": out += "\\u2028"
        case "\u{2029}": out += "\\u2029"
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out
}

extension HTTPField.Name {
    static let referrerPolicy = Self("Referrer-Policy")!
}
