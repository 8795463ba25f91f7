import CoasterHTTP
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// The pages' static files under `/map/assets/`: the page script and style (Pages/Assets, in the
/// bundle) and Leaflet, as Debian's `libjs-leaflet` installed it (`serve --leaflet`). Read once at
/// start, by name: nothing a request names is ever opened as a path.
struct MapAssets: Sendable {
    struct File: Sendable {
        var body: ByteBuffer
        var contentType: String
    }

    let pages: Pages
    let files: [String: File]

    init(pages: Pages, logger: Logger? = nil) {
        self.pages = pages
        var files: [String: File] = [:]
        if let own = Bundle.module.url(forResource: "Assets", withExtension: nil),
           let names = try? FileManager.default.contentsOfDirectory(atPath: own.path) {
            for name in names { files[name] = Self.read(own.appendingPathComponent(name)) }
        }
        let leaflet = URL(fileURLWithPath: pages.configuration.leafletDirectory)
        // The minified build, served under the plain name the pages use.
        files["leaflet/leaflet.js"] = Self.read(leaflet.appendingPathComponent("leaflet.min.js"))
            ?? Self.read(leaflet.appendingPathComponent("leaflet.js"))
        files["leaflet/leaflet.css"] = Self.read(leaflet.appendingPathComponent("leaflet.css"))
        let images = leaflet.appendingPathComponent("images")
        for name in (try? FileManager.default.contentsOfDirectory(atPath: images.path)) ?? [] where name.hasSuffix(".png") || name.hasSuffix(".svg") {
            files["leaflet/images/\(name)"] = Self.read(images.appendingPathComponent(name))
        }
        if files["leaflet/leaflet.js"] == nil {
            logger?.warning("Leaflet is not installed: the map pages will show no map",
                            metadata: ["directory": "\(pages.configuration.leafletDirectory)", "fix": "apt-get install libjs-leaflet, or serve --leaflet DIR"])
        }
        self.files = files.compactMapValues { $0 }
    }

    private static func read(_ url: URL) -> File? {
        guard let data = try? Data(contentsOf: url), data.count <= 4 * 1024 * 1024 else { return nil }
        let types = ["js": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8", "png": "image/png", "svg": "image/svg+xml"]
        guard let type = types[url.pathExtension] else { return nil }
        return File(body: ByteBuffer(bytes: data), contentType: type)
    }

    /// Whether Leaflet was found (the pages say so when it was not).
    var hasLeaflet: Bool { self.files["leaflet/leaflet.js"] != nil }

    func addRoutes(to group: RouterGroup<AppRequestContext>) {
        group.get("assets/{file}") { _, context in try self.answer(try context.parameters.require("file")) }
        group.get("assets/leaflet/{file}") { _, context in try self.answer("leaflet/" + (try context.parameters.require("file"))) }
        group.get("assets/leaflet/images/{file}") { _, context in try self.answer("leaflet/images/" + (try context.parameters.require("file"))) }
    }

    private func answer(_ name: String) throws -> Response {
        guard let file = self.files[name] else { throw Problem.notFound("No asset \(name.prefix(100)).") }
        // An hour: assets change only with a new release, and a page is not worth a request per asset.
        var headers = self.pages.securityHeaders(cache: "public, max-age=3600")
        headers[.contentType] = file.contentType
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: file.body))
    }
}
