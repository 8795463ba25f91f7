import CoasterAPI
import CoasterHTTP
import CoasterService
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@Suite("Path parameters")
struct PathParameterTests {
    /// Every route with an id of a row (`{userId}`, `{photoId}`) in its path, as the router has
    /// them: a route added later is checked without a change here.
    @Test(arguments: ["search", "0", "-1", "9223372036854775808", "1.5", "1e3"])
    func anIdThatCannotBeOneIsABadParameterOnEveryRoute(_ text: String) async throws {
        try await TestService.withService { s, client in
            let ann = try await client.register("ann")
            for (parameter, least) in [("userId", 10), ("photoId", 2)] {
                let routes = try buildRouter(s.service).routes.filter { "\($0.path)".contains("{\(parameter)}") }
                #expect(routes.count >= least, "\(routes.map(\.path))")
                for route in routes {
                    let uri = "\(route.path)".replacingOccurrences(of: "{\(parameter)}", with: text)
                    let response = try await client.execute(uri: uri, method: route.method, headers: ann.auth)
                    let problem = try expectProblem(response, .badRequest, .invalidParameter)
                    let invalid = try #require(problem["invalid-params"] as? [[String: Any]], "\(route.method) \(uri): \(problem)")
                    #expect(invalid.count == 1 && invalid.first?["name"] as? String == parameter, "\(route.method) \(uri): \(problem)")
                    #expect((invalid.first?["reason"] as? String)?.contains("\"\(text)\"") == true, "\(route.method) \(uri): \(problem)")
                    #expect((problem["detail"] as? String)?.hasPrefix("Path parameter \(parameter):") == true, "\(problem)")
                }
            }
        }
    }

    /// A well-formed id is still looked up: one nobody has is not found, not a bad parameter.
    @Test func aWellFormedUnknownUserIdIsNotFound() async throws {
        try await TestService.withApp { client in
            let ann = try await client.register("ann")
            try expectProblem(try await client.get("/v1/users/\(Int64.max)", as: ann), .notFound, .noSuchUser)
            try expectProblem(try await client.send(.delete, "/v1/friends/\(ann.id + 1000)", as: ann), .notFound, .notFriends)
        }
    }
}
