import CoasterAPI
import CoasterCore
import CoasterHTTP
import CoasterService
import CoasterStore
import CoasterTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

@Suite("HTTP API")
struct APITests {
    @Test func healthAndReadiness() async throws {
        try await TestService.withApp { client in
                        try await client.execute(uri: "/health", method: .get) { response in
                #expect(response.status == .ok)
                let body = try json(response.body)
                #expect(body["status"] as? String == "ok")
            }
            try await client.execute(uri: "/ready", method: .get) { response in
                #expect(response.status == .ok)
                let body = try json(response.body)
                #expect(body["parks"] as? Int == 3)
            }
        }
    }

    @Test func listsTheThreeRealParks() async throws {
        try await TestService.withApp { client in
            let user = try await client.register("ann")
            try await client.execute(uri: "/v1/parks", method: .get, headers: user.auth) { response in
                #expect(response.status == .ok)
                let parks = try #require(try json(response.body)["parks"] as? [[String: Any]])
                #expect(parks.map { $0["id"] as? String } == ["cedar-point", "kings-island", "six-flags-fiesta-texas"])
                #expect((parks[0]["attribution"] as? String)?.contains("© OpenStreetMap contributors") == true)
                #expect((parks[0]["bbox"] as? [Double])?.count == 4)
            }
        }
    }

    @Test func oneParkIsGeoJSONWithZonesAndRides() async throws {
        try await TestService.withApp { client in
            let user = try await client.register("ann")
            try await client.execute(uri: "/v1/parks/cedar-point", method: .get, headers: user.auth) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/geo+json")
                let body = try json(response.body)
                #expect(body["type"] as? String == "FeatureCollection")
                let features = try #require(body["features"] as? [[String: Any]])
                let park = try #require(features.first)
                #expect((park["properties"] as? [String: Any])?["kind"] as? String == "park")
                let geometry = try #require(park["geometry"] as? [String: Any])
                #expect(geometry["type"] as? String == "MultiPolygon")
                // Positions are [lon, lat]: Cedar Point is at lon ≈ −82.7, lat ≈ 41.5.
                let first = try #require((geometry["coordinates"] as? [[[[Double]]]])?.first?.first?.first)
                #expect(abs(first[0] + 82.68) < 0.1 && abs(first[1] - 41.48) < 0.1)
                #expect(features.contains { ($0["properties"] as? [String: Any])?["kind"] as? String == "land" })
                #expect(features.contains { ($0["properties"] as? [String: Any])?["kind"] as? String == "ride" })
            }
        }
    }

    @Test func ridesCarryStats() async throws {
        try await TestService.withApp { client in
            let user = try await client.register("ann")
            try await client.execute(uri: "/v1/parks/cedar-point/rides", method: .get, headers: user.auth) { response in
                #expect(response.status == .ok)
                let rides = try #require(try json(response.body)["rides"] as? [[String: Any]])
                let mf = try #require(rides.first { $0["name"] as? String == "Millennium Force" })
                #expect(mf["id"] as? String == "cedar-point.millennium-force")
                #expect(mf["zone"] as? String == "cedar-point.millennium-force")
                let stats = try #require(mf["stats"] as? [String: Any])
                #expect(stats["manufacturer"] as? String == "Intamin")
            }
        }
    }

    @Test(arguments: ["/v1/parks/atlantis", "/v1/parks/atlantis/rides", "/v1/parks/NOT%20A%20SLUG", "/v2/nothing"])
    func unknownThingsAre404Problems(uri: String) async throws {
        try await TestService.withApp { client in
            let user = try await client.register("ann")
            try await client.execute(uri: uri, method: .get, headers: user.auth) { response in
                _ = try expectProblem(response, .notFound, .notFound)
            }
        }
    }

    /// A path the service has, asked with a method it does not serve there, is a 405 problem
    /// naming the methods it does serve (the router answered 404, as if the path did not exist);
    /// a path it does not have stays a 404.
    @Test func aMethodNotServedAtAPathIsA405WithAllow() async throws {
        try await TestService.withApp { client in
            let user = try await client.register("ann")
            let cases: [(HTTPRequest.Method, String, String)] = [
                (.delete, "/v1/fixes", "OPTIONS, POST"), (.put, "/v1/users/\(user.id)", "GET, HEAD, OPTIONS"),
                (.post, "/health", "GET, HEAD, OPTIONS"), (.delete, "/v1/checkins", "GET, HEAD, OPTIONS, POST"),
                (.patch, "/v1/parks/cedar-point/rides", "GET, HEAD, OPTIONS"),
                // Also the shape of /v1/friends/{userId} (DELETE): its own route's methods only.
                (.put, "/v1/friends/nearby", "GET, HEAD, OPTIONS"),
            ]
            for (method, uri, allow) in cases {
                try await client.execute(uri: uri, method: method, headers: user.auth) { response in
                    let problem = try expectProblem(response, .methodNotAllowed, .methodNotAllowed)
                    #expect(response.headers[.allow] == allow, "\(method) \(uri)")
                    #expect((problem["detail"] as? String)?.contains("allowed: \(allow)") == true, "\(problem)")
                }
            }
            try await client.execute(uri: "/v1/nothing", method: .delete, headers: user.auth) { response in
                _ = try expectProblem(response, .notFound, .notFound)
            }
            // Counted under the route's path, as every other answer of the route is.
            let metrics = String(buffer: try await client.execute(uri: "/metrics", method: .get).body)
            for (method, route) in [("DELETE", "/v1/fixes"), ("PUT", "/v1/users/{userId}"), ("POST", "/health"), ("DELETE", "/v1/checkins"),
                                    ("PATCH", "/v1/parks/{parkId}/rides")] {
                #expect(metrics.contains("coasterlife_http_requests_total{method=\"\(method)\",route=\"\(route)\",status=\"405\"} 1"), "\(metrics)")
            }
        }
    }

    /// `OPTIONS` on a path the service has is a 204 naming the methods served there, asked with
    /// a token or without (a client learning the API has none yet); `OPTIONS *`, about the server
    /// as a whole, names every method it serves, on either lane; a path it does not have is a 404.
    @Test func optionsNamesTheMethodsServed() async throws {
        let s = try await TestService()
        defer { s.remove() }
        try await FastLaneTests.withBothLanes(s) { live, lane, router in
            let ann = try await live.register("ann")
            for (uri, allow) in [("/v1/fixes", "OPTIONS, POST"), ("/v1/me", "GET, HEAD, OPTIONS, PATCH"), ("/v1/friends/nearby", "GET, HEAD, OPTIONS"),
                                 ("/v1/users/\(ann.id)", "GET, HEAD, OPTIONS"), ("/health", "GET, HEAD, OPTIONS")] {
                for headers in [ann.auth, [:]] {
                    let response = try await live.execute(uri: uri, method: .options, headers: headers, body: nil)
                    #expect(response.status == .noContent, "\(uri)")
                    #expect(response.headers[.allow] == allow, "\(uri)")
                    #expect(response.body.readableBytes == 0, "\(uri)")
                }
            }
            let nowhere = try await live.execute(uri: "/v1/nothing", method: .options, headers: ann.auth, body: nil)
            _ = try expectProblem(nowhere, .notFound, .notFound)
            for connection in [lane, router] {
                let answer = await connection.exchange("OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n") ?? "nothing"
                #expect(answer.hasPrefix("HTTP/1.1 204 No Content\r\n"), "\(answer)")
                #expect(answer.contains("\r\nAllow: DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT\r\n"), "\(answer)")
            }
            let metrics = String(buffer: try await live.get("/metrics", as: nil).body)
            #expect(metrics.contains("coasterlife_http_requests_total{method=\"OPTIONS\",route=\"/v1/me\",status=\"204\"} 2"), "\(metrics)")
        }
    }

    /// A query parameter given twice is a 400 naming it, on the fast lane's routes and the
    /// router's alike, rather than letting one of them win silently. An empty piece (`&&`)
    /// repeats nothing.
    @Test func aQueryParameterGivenTwiceIsRefused() async throws {
        let s = try await TestService()
        defer { s.remove() }
        try await FastLaneTests.withBothLanes(s) { live, lane, router in
            let ann = try await live.register("ann")
            func get(_ target: String) -> String {
                "GET \(target) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(ann.token)\r\n\r\n"
            }
            for connection in [lane, router] {
                for (target, name) in [("/v1/locate?lat=41.4822&lon=-82.6835&lat=0", "lat"), ("/v1/friends/nearby?radius=500&radius=5", "radius"),
                                       ("/v1/checkins?limit=1&before=9&limit=2", "limit"), ("/v1/locate?lat=41%2E4822&lon=-82.6835&lat=0", "lat")] {
                    let answer = await connection.exchange(get(target)) ?? "nothing"
                    #expect(answer.hasPrefix("HTTP/1.1 400 Bad Request\r\n"), "\(target): \(answer)")
                    #expect(answer.contains("\"type\":\"/problems/invalid-parameter\""), "\(answer)")
                    #expect(answer.contains("Query parameter \(name): given more than once"), "\(answer)")
                }
                let answer = await connection.exchange(get("/v1/locate?lat=41.4822&&lon=-82.6835&")) ?? "nothing"
                #expect(answer.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(answer)")
            }
        }
    }

    /// An HTTP/1.0 request is its connection's last, as HTTP/1.0's default is: the connection is
    /// closed after its answer, with `Connection: keep-alive` too (a server may close any); so is
    /// an HTTP/1.1 request asking to close in other words than `close` (`Close`, `close, TE`).
    /// They were kept open, so a client reading until the close (a monitoring probe) waited out
    /// the idle timeout. Each such answer says `Connection: close` (RFC 9112 §9.6); it said
    /// nothing. An HTTP/1.1 connection stays open. With the fast lane and without.
    @Test func aRequestThatIsItsConnectionsLastClosesIt() async throws {
        let s = try await TestService()
        defer { s.remove() }
        try await FastLaneTests.withBothLanes(s) { live, lane, router in
            let ann = try await live.register("ann")
            for connection in [lane, router] {
                for request in ["GET /health HTTP/1.0\r\n\r\n", "GET /v1/locate?lat=41.4822&lon=-82.6835 HTTP/1.0\r\nAuthorization: Bearer \(ann.token)\r\n\r\n",
                                "GET /v1/parks HTTP/1.0\r\nConnection: keep-alive\r\nAuthorization: Bearer \(ann.token)\r\n\r\n",
                                "GET /health HTTP/1.1\r\nHost: x\r\nConnection: Close\r\n\r\n",
                                "GET /v1/locate?lat=41.4822&lon=-82.6835 HTTP/1.1\r\nHost: x\r\nConnection: close, TE\r\nTE: trailers\r\n"
                                    + "Authorization: Bearer \(ann.token)\r\n\r\n"] {
                    let socket = try RawConnection(port: connection.port)
                    defer { socket.close() }
                    socket.send(request)
                    let (text, closed) = await socket.receiveAll()
                    #expect(text.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(text)")
                    #expect(closed, "\(request): \(text)")
                    // And says so (RFC 9112 §9.6).
                    let head = text.components(separatedBy: "\r\n\r\n")[0].lowercased()
                    #expect(head.contains("\r\nconnection: close"), "\(request): \(text)")
                }
                let answers = await connection.exchanges(["GET /health HTTP/1.1\r\nHost: x\r\n\r\n", "GET /health HTTP/1.1\r\nHost: x\r\n\r\n"])
                #expect(answers.allSatisfy { $0?.hasPrefix("HTTP/1.1 200 OK\r\n") == true }, "\(answers)")
                #expect(answers.allSatisfy { $0?.lowercased().contains("connection: close") == false }, "\(answers)")
            }
        }
    }

    /// HEAD is served wherever GET is: the same head, no body, and the connection goes on (with
    /// the fast lane, which answers GET only, and without).
    @Test func headIsAnsweredAsGetWithoutTheBody() async throws {
        let s = try await TestService()
        defer { s.remove() }
        try await FastLaneTests.withBothLanes(s) { _, lane, router in
            for connection in [lane, router] {
                connection.send("HEAD /health HTTP/1.1\r\nHost: x\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                let (text, closed) = await connection.receiveAll()
                #expect(closed, "\(text)")
                let responses = text.components(separatedBy: "HTTP/1.1 ").dropFirst()
                #expect(responses.count == 2, "\(text)")
                #expect(responses.first?.hasPrefix("200 OK\r\n") == true, "\(text)")
                #expect(responses.first?.contains("Content-Length: 15\r\n") == true, "\(text)")
                #expect(responses.first?.hasSuffix("\r\n\r\n") == true, "a body followed the head: \(text)")
                #expect(responses.last?.hasSuffix("{\"status\":\"ok\"}") == true, "\(text)")
            }
        }
    }

    /// A body sent with a content coding is refused with a 415 naming it, by the router and past
    /// the fast lane alike (the lane leaves such a request to the router); `identity` is no coding.
    @Test func aCompressedBodyIsA415() async throws {
        let clock = TestClock()
        let s = try await TestService(clock: clock)
        defer { s.remove() }
        try await FastLaneTests.withBothLanes(s) { live, lane, router in
            let ann = try await live.register("ann")
            let fix = try FastLaneTests.oneFix(at: clock)
            for connection in [lane, router] {
                for (coding, status) in [("gzip", "415 Unsupported Media Type"), ("identity", "200 OK"), ("br, identity", "415 Unsupported Media Type")] {
                    let request = FastLaneTests.post(fix, token: ann.token)
                        .replacingOccurrences(of: "Content-Type:", with: "Content-Encoding: \(coding)\r\nContent-Type:")
                    let answer = await connection.exchange(request) ?? "nothing"
                    #expect(answer.hasPrefix("HTTP/1.1 \(status)\r\n"), "\(coding): \(answer)")
                    if status.hasPrefix("415") {
                        #expect(answer.contains("Accept-Encoding: identity\r\n"), "\(answer)")
                        #expect(answer.contains("\"type\":\"/problems/unsupported-media-type\""), "\(answer)")
                        #expect(answer.contains("Content-Encoding \(coding)"), "\(answer)")
                    }
                }
            }
        }
    }

    /// A body said to be something other than JSON (curl's `-d` says a form) is refused with a 415
    /// naming its type, by the router and past the fast lane alike, before anything is read or
    /// written; JSON in any spelling, a `+json` type and no type at all are read. On a fix, a
    /// registration and a message.
    @Test func aBodyThatIsNotSaidToBeJSONIsA415() async throws {
        let clock = TestClock()
        let s = try await TestService(clock: clock) { $0.limits.messages.burst = 100 }
        defer { s.remove() }
        try await FastLaneTests.withBothLanes(s) { live, lane, router in
            let ann = try await live.register("ann")
            let bob = try await live.register("bob")
            try await live.befriend(ann, bob)
            let fix = try FastLaneTests.oneFix(at: clock)
            let refused = ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonp",
                           "text/json", "application/json-seq", "json"]
            let read = ["application/json", "APPLICATION/JSON", "application/json; charset=utf-8", " application/json ;charset=UTF-8",
                        "application/vnd.coasterlife+json", nil]
            var n = 0
            for connection in [lane, router] {
                for type in refused + read {
                    n += 1
                    let field = type.map { "Content-Type: \($0)\r\n" } ?? ""
                    let requests = [
                        ("POST /v1/fixes", fix, "200 OK"),
                        ("POST /v1/users", "{\"username\":\"user\(n)\",\"password\":\"\(TestUser.password)\"}", "201 Created"),
                        ("POST /v1/messages/\(bob.id)", "{\"body\":\"hi \(n)\"}", "201 Created"),
                    ]
                    for (target, body, success) in requests {
                        let request = "\(target) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(ann.token)\r\n\(field)"
                            + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
                        let answer = await connection.exchange(request) ?? "nothing"
                        if let type, refused.contains(type) {
                            #expect(answer.hasPrefix("HTTP/1.1 415 Unsupported Media Type\r\n"), "\(target) \(type): \(answer)")
                            #expect(answer.contains("\"type\":\"/problems/unsupported-media-type\""), "\(answer)")
                            #expect(answer.contains("The body is \(type); this route reads application/json."), "\(answer)")
                        } else {
                            #expect(answer.hasPrefix("HTTP/1.1 \(success)\r\n"), "\(target) \(type ?? "no type"): \(answer)")
                        }
                    }
                }
            }
            // Nothing refused was written: one message for each type read, on each connection.
            let page = try json(try await live.get("/v1/messages/\(bob.id)?limit=200", as: ann).body)["messages"] as? [Any]
            #expect(page?.count == 2 * read.count)
        }
    }

    /// A first request offering to upgrade to a protocol the server does not speak (`curl --http2`
    /// offers `h2c` on every plain request) is answered over HTTP/1.1, and the connection closed
    /// after it (NIO's decoder took the offer), rather than left with no answer at all. One that
    /// offers `websocket` among others still upgrades. With the fast lane and without.
    @Test func anUpgradeOfferedToAnUnknownProtocolIsIgnored() async throws {
        let s = try await TestService()
        defer { s.remove() }
        try await FastLaneTests.withBothLanes(s) { live, lane, router in
            let ann = try await live.register("ann")
            for connection in [lane, router] {
                connection.send("GET /health HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\n"
                    + "Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n\r\n")
                let (answer, closed) = await connection.receiveAll()
                #expect(answer.hasPrefix("HTTP/1.1 200 OK\r\n") && answer.hasSuffix("{\"status\":\"ok\"}"), "\(answer)")
                #expect(closed, "\(answer)")
            }
            // Offered without `Connection: upgrade`, the offer does not end the connection.
            let kept = try RawConnection(port: try #require(live.port))
            defer { kept.close() }
            let answers = await kept.exchanges(["GET /health HTTP/1.1\r\nHost: x\r\nUpgrade: h2c\r\n\r\n", "GET /health HTTP/1.1\r\nHost: x\r\n\r\n"])
            #expect(answers.allSatisfy { $0?.hasPrefix("HTTP/1.1 200 OK\r\n") == true }, "\(answers)")
            let socket = try RawConnection(port: try #require(live.port))
            defer { socket.close() }
            socket.send("GET /v1/live HTTP/1.1\r\nHost: x\r\nUpgrade: h2c, websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nAuthorization: Bearer \(ann.token)\r\n\r\n")
            #expect(await socket.receive(until: "HTTP/1.1 101 Switching Protocols\r\n"))
        }
    }

    /// A client that sends `Expect: 100-continue` and waits (curl does for a body over 1 MiB, a
    /// photo) gets `100 Continue` at once, then the answer once the body has come, with the fast
    /// lane and without, so it never waits out its own timeout (a second) first. An HTTP/1.0
    /// request is never sent one.
    @Test func aClientExpectingContinueIsToldToGoOn() async throws {
        let clock = TestClock()
        let s = try await TestService(clock: clock)
        defer { s.remove() }
        try await FastLaneTests.withBothLanes(s) { live, lane, router in
            let ann = try await live.register("ann")
            let head = FastLaneTests.post(try FastLaneTests.oneFix(at: clock), token: ann.token).components(separatedBy: "\r\n\r\n")[0]
            // Twice on each connection: the second request is told to go on once the first is answered.
            for (name, connection) in [("the fast lane", lane), ("the fast lane", lane), ("the router alone", router), ("the router alone", router)] {
                // A second apart, so that no fix is another's duplicate.
                clock.advance(1)
                let fix = try FastLaneTests.oneFix(at: clock)
                connection.send(head + "\r\nExpect: 100-continue\r\n\r\n")
                #expect(await connection.receive(until: "HTTP/1.1 100 Continue\r\n\r\n"), "\(name): no 100 Continue before the body")
                let answer = await connection.exchange(fix)
                #expect(answer?.hasPrefix("HTTP/1.1 200 OK\r\n") == true && answer?.contains("\"accepted\":1") == true,
                        "\(name): \(answer ?? "nothing")")
            }
            clock.advance(1)
            let fix = try FastLaneTests.oneFix(at: clock)

            let old = try RawConnection(port: try #require(live.port))
            defer { old.close() }
            let answer10 = await old.exchange(head.replacingOccurrences(of: "HTTP/1.1", with: "HTTP/1.0") + "\r\nExpect: 100-continue\r\n\r\n" + fix)
            #expect(answer10?.hasPrefix("HTTP/1.1 200 OK\r\n") == true, "\(answer10 ?? "nothing")")
        }
    }

    @Test func locateNamesCedarPointAsInTheREADME() async throws {
        try await TestService.withApp { client in
            let user = try await client.register("ann")
            try await client.execute(uri: "/v1/locate?lat=41.4822&lon=-82.6835&accuracy=10", method: .get, headers: user.auth) { response in
                #expect(response.status == .ok)
                let body = try json(response.body)
                let parks = try #require(body["parks"] as? [[String: Any]])
                #expect(parks.first?["name"] as? String == "Cedar Point")
                #expect(parks.first?["containment"] as? String == "inside")
            }
            try await client.execute(uri: "/v1/locate?lat=41.481656&lon=-82.688132", method: .get, headers: user.auth) { response in
                let parks = try #require(try json(response.body)["parks"] as? [[String: Any]])
                let zones = try #require(parks.first?["zones"] as? [[String: Any]])
                #expect(zones.contains { $0["ride"] as? String == "cedar-point.millennium-force" })
            }
            try await client.execute(uri: "/v1/locate?lat=0&lon=0", method: .get, headers: user.auth) { response in
                #expect(response.status == .ok)
                let body = try json(response.body)
                #expect((body["parks"] as? [Any])?.isEmpty == true)
            }
        }
    }

    struct BadLocate: Sendable, CustomTestStringConvertible {
        var query: String
        var parameter: String
        var testDescription: String { self.query }
    }

    @Test(arguments: [
        BadLocate(query: "lon=-82.6", parameter: "lat"),
        BadLocate(query: "lat=41.4", parameter: "lon"),
        BadLocate(query: "lat=91&lon=0", parameter: "lat"),
        BadLocate(query: "lat=0&lon=-180.01", parameter: "lon"),
        BadLocate(query: "lat=abc&lon=0", parameter: "lat"),
        BadLocate(query: "lat=nan&lon=0", parameter: "lat"),
        BadLocate(query: "lat=0&lon=inf", parameter: "lon"),
        BadLocate(query: "lat=0&lon=0&accuracy=-1", parameter: "accuracy"),
        BadLocate(query: "lat=0&lon=0&accuracy=5001", parameter: "accuracy"),
    ])
    func badCoordinatesAre400WithTheParameterNamed(_ bad: BadLocate) async throws {
        try await TestService.withApp { client in
            let user = try await client.register("ann")
            try await client.execute(uri: "/v1/locate?\(bad.query)", method: .get, headers: user.auth) { response in
                let body = try expectProblem(response, .badRequest, .invalidParameter)
                let params = try #require(body["invalid-params"] as? [[String: Any]])
                #expect(params.first?["name"] as? String == bad.parameter)
            }
        }
    }

    /// Every bad parameter is named, not only the first.
    @Test func everyBadLocateParameterIsNamed() async throws {
        try await TestService.withApp { client in
            let user = try await client.register("ann")
            for query in ["lat=91&lon=500&accuracy=9000", "lat=abc&lon=nan&accuracy=-1"] {
                let body = try expectProblem(try await client.get("/v1/locate?\(query)", as: user), .badRequest, .invalidParameter)
                let names = (body["invalid-params"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
                #expect(names == ["lat", "lon", "accuracy"], "\(query): \(body)")
            }
        }
    }

    @Test func liveServerSmokeTest() async throws {
        let s = try await TestService()
        defer { s.remove() }
        try await s.app().test(.live) { client in
            let user = try await client.register("ann")
            try await client.execute(uri: "/v1/locate?lat=41.4822&lon=-82.6835&accuracy=10", method: .get, headers: user.auth) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.requestID] != nil)
                let parks = try #require(try json(response.body)["parks"] as? [[String: Any]])
                #expect(parks.first?["id"] as? String == "cedar-point")
            }
        }
    }
}

@Suite("Operations")
struct OperationsTests {
    @Test func metricsCountRequestsFixesAndSizes() async throws {
        try await TestService.withApp { client in
            let ann = try await client.register("ann")
            _ = try await client.postFixes([fixJSON(41.4822, -82.6835, at: Date()), fixJSON(95, 0, at: Date())], as: ann)
            _ = try await client.get("/v1/parks/atlantis", as: ann)
            let response = try await client.execute(uri: "/metrics", method: .get)
            #expect(response.status == .ok)
            #expect(response.headers[.contentType]?.hasPrefix("text/plain") == true)
            let text = String(buffer: response.body)
            #expect(text.contains(#"coasterlife_http_requests_total{method="POST",route="/v1/fixes",status="200"} 1"#))
            #expect(text.contains(#"route="/v1/parks/{parkId}",status="404""#))
            #expect(text.contains(#"coasterlife_fixes_total{result="accepted",reason="",source="api"} 1"#))
            #expect(text.contains(#"coasterlife_fixes_total{result="rejected",reason="invalid_coordinates",source="api"} 1"#))
            #expect(text.contains(#"coasterlife_transitions_total{event="enter",kind="park"} 1"#))
            #expect(text.contains("coasterlife_fence_parks_count 3"))
            #expect(text.contains("coasterlife_http_request_duration_seconds_bucket"))
            #expect(text.contains("coasterlife_store_write_duration_seconds_count{operation=\"fixes\"} 1"))
            #expect(text.contains("coasterlife_store_fix_commits_total 1\n"))
            #expect(text.contains("coasterlife_store_fix_commit_batches_total 1\n"))
            // Memory: the process's resident set holds at least SQLite's heap, which holds at least
            // the page the fix was written to.
            let rss = try #require(Self.gauge(text, "coasterlife_process_resident_memory_bytes"))
            let sqlite = try #require(Self.gauge(text, "coasterlife_store_sqlite_memory_bytes"))
            if TestDatabase.isSQLite { #expect(sqlite >= 4_096 && rss > sqlite, "rss \(rss), sqlite \(sqlite)") }
            #expect(rss < 8 * 1_073_741_824)
            // Scrapes add only what is new since the last one.
            _ = try await client.postFixes([fixJSON(41.4823, -82.6835, at: Date())], as: ann)
            let again = String(buffer: try await client.execute(uri: "/metrics", method: .get).body)
            #expect(again.contains("coasterlife_store_fix_commits_total 2\n"))
            #expect(again.contains("coasterlife_store_fix_commit_batches_total 2\n"))
        }
    }

    /// An unlabelled gauge's value in Prometheus text.
    static func gauge(_ text: String, _ name: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.split(separator: " ")[1]) }
    }

    @Test func deeplyNestedJSONBodiesAreRefusedNotFatal() async throws {
        try await TestService.withService { service, client in
            let ann = try await client.register("ann")
            let admin = try await service.admin("root", on: client)
            let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
            let fixes = try await client.execute(uri: "/v1/fixes", method: .post, headers: ann.auth, body: ByteBuffer(string: deep))
            #expect(fixes.status == .badRequest)
            let park = try await client.execute(uri: "/v1/admin/parks/deep", method: .put, headers: admin.auth, body: ByteBuffer(string: deep))
            #expect(park.status == .badRequest)
            #expect(try await client.get("/health", as: nil).status == .ok)
        }
    }
}

@Suite("Starting a service")
struct StartupTests {
    /// A mistyped park directory stops a first start before anything is created.
    @Test func anUnreadableParkDirectoryLeavesNoDatabaseBehind() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coasterlife-start-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("new.sqlite").path
        let configuration = ServiceConfiguration(database: path, seedParksDirectory: directory.appendingPathComponent("no-such-parks").path)
        await #expect(throws: StartupError.self) { _ = try await Service.open(configuration, logger: Logger(label: "test")) }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    /// A URL is never a file name: one of a store this build lacks is refused with the reason, and
    /// no file named after the URL's scheme appears in the working directory.
    @Test func aDatabaseURLIsNotTakenForAFileName() async throws {
        let url = "mysql://coaster@localhost:3306/coasterlife-\(UUID().uuidString)"
        let error = await #expect(throws: StartupError.self) {
            _ = try await Service.open(ServiceConfiguration(database: url), logger: Logger(label: "test"))
        }
        #expect(error?.description.contains("unknown URL scheme 'mysql'") == true, "\(String(describing: error))")
        #expect(!FileManager.default.fileExists(atPath: "mysql:"))
        #expect(!FileManager.default.fileExists(atPath: url))
    }

    /// A PostgreSQL server that is not there stops the start with a sentence naming it: the
    /// store's first connection is its own, which fails at once (a pooled one would retry for a
    /// minute and end as "unavailable"), and nothing is created locally.
    @Test func anUnreachablePostgreSQLServerIsReportedAtOnce() async throws {
        let url = "postgres://coaster:secret@127.0.0.1:1/coasterlife?sslmode=disable"
        let error = await #expect(throws: StoreError.self) {
            _ = try await Service.open(ServiceConfiguration(database: url), logger: Logger(label: "test"))
        }
        let text = String(describing: error)
        #expect(text.contains("cannot reach PostgreSQL at 127.0.0.1:1"), "\(text)")
        #expect(!text.contains("secret"), "the password is never shown: \(text)")
        #expect(!FileManager.default.fileExists(atPath: "postgres:"))
    }
}
