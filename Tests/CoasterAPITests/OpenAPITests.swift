import CoasterAPI
import CoasterService
import CoasterStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@Suite("OpenAPI document")
struct OpenAPITests {
    static let methods = ["get", "put", "post", "patch", "delete"]

    /// Every route of the JSON API is in the document, and every operation of the document is routed.
    @Test func documentAndRouterAgree() async throws {
        let s = try await TestService()
        defer { s.remove() }
        let router = try buildRouter(s.service)
        // The map's pages are HTML for people, not the JSON API: the Map article documents them.
        let routed = Set(router.routes.filter { !$0.path.description.hasPrefix("/map") }.map { "\($0.method.rawValue.lowercased()) \($0.path)" })
        let document = try JSONSerialization.jsonObject(with: Data(contentsOf: TestService.repoRoot
            .appendingPathComponent("Sources/CoasterAPI/openapi.json"))) as? [String: Any]
        let paths = try #require(document?["paths"] as? [String: [String: Any]])
        var documented = Set<String>()
        for (path, item) in paths {
            for method in Self.methods where item[method] != nil { documented.insert("\(method) \(path)") }
        }
        #expect(routed.subtracting(documented).isEmpty, "routed but not documented: \(routed.subtracting(documented).sorted())")
        #expect(documented.subtracting(routed).isEmpty, "documented but not routed: \(documented.subtracting(routed).sorted())")
    }

    @Test func servedDocumentIsTheRepositoryFile() async throws {
        try await TestService.withApp { client in
            try await client.execute(uri: "/openapi.json", method: .get) { response in
                #expect(response.status == .ok)
                let served = try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? NSDictionary
                let file = try JSONSerialization.jsonObject(with: Data(contentsOf: TestService.repoRoot
                    .appendingPathComponent("Sources/CoasterAPI/openapi.json"))) as? NSDictionary
                #expect(served == file)
                #expect((served?["openapi"] as? String)?.hasPrefix("3.1") == true)
            }
        }
    }
}
