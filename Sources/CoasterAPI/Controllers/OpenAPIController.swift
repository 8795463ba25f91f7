import Foundation
import CoasterService
import Hummingbird

/// Serves the OpenAPI 3.1 document of this service (`Sources/CoasterAPI/openapi.json`).
struct OpenAPIController {
    let document: ByteBuffer

    /// Loads the document that ships with the library.
    static func load() throws -> OpenAPIController {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "json") else {
            throw StartupError("the OpenAPI document is missing from the CoasterAPI bundle")
        }
        return OpenAPIController(document: ByteBuffer(bytes: try Data(contentsOf: url)))
    }

    var endpoints: RouteCollection<AppRequestContext> {
        let routes = RouteCollection(context: AppRequestContext.self)
        routes.get("openapi.json") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: self.document))
        }
        return routes
    }
}
