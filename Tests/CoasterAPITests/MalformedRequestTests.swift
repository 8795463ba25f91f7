import CoasterAPI
import CoasterHTTP
import CoasterService
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

/// A connection's first request, before Hummingbird's own handlers are in its pipeline
/// (`FirstRequestGuard`): what does not parse is answered with a problem and the connection
/// closed; a connection that sends no whole head is closed after the idle timeout. With the fast
/// lane and without it.
@Suite("Malformed requests")
struct MalformedRequestTests {
    /// Each request, sent first on a connection of its own: the status, and a word of the detail.
    static let malformed: [(request: String, status: String, detail: String)] = [
        ("GET /health HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n", "400 Bad Request", "header field's name"),
        ("GET /v1/parks HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", "400 Bad Request", "Content-Length"),
        ("GARBAGE\r\n\r\n", "400 Bad Request", "method"),
        ("POST /v1/sessions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "400 Bad Request",
         "Transfer-Encoding ends with chunked"),
        ("GET /health HTTP/1.1\r\nHost: x\r\n" + (0...1_000).map { "X-Field-\($0): 1\r\n" }.joined() + "\r\n",
         "431 Request Header Fields Too Large", "1000 fields"),
    ]

    @Test(arguments: [true, false])
    func answersAMalformedFirstRequestWithAProblem(fastLane: Bool) async throws {
        try await Self.serve(fastLane: fastLane) { live, port in
            for (request, status, word) in Self.malformed {
                let connection = try RawConnection(port: port)
                defer { connection.close() }
                connection.send(request)
                let (text, closed) = await connection.receiveAll()
                #expect(closed, "the connection stayed open: \(request.prefix(40))")
                let parts = text.components(separatedBy: "\r\n\r\n")
                let head = parts[0].components(separatedBy: "\r\n")
                #expect(head.first == "HTTP/1.1 \(status)", "\(text)")
                #expect(head.contains("Content-Type: application/problem+json"), "\(text)")
                #expect(head.contains("Connection: close"), "\(text)")
                let problem = try #require(try JSONSerialization.jsonObject(with: Data(parts.dropFirst().joined().utf8)) as? [String: Any],
                                           "\(text)")
                #expect(problem["type"] as? String == "/problems/malformed-request")
                #expect((problem["detail"] as? String)?.contains(word) == true, "\(problem)")
                #expect(problem["status"] as? Int == Int(status.prefix(3)))
                let requestID = head.first { $0.hasPrefix("X-Request-Id: ") }?.dropFirst(14)
                #expect(requestID.map(String.init) == problem["requestId"] as? String)
            }
            // The server goes on: a well-formed request on a new connection is answered.
            #expect(try await live.get("/health", as: nil).status == .ok)
            // And counted them.
            let metrics = String(buffer: try await live.get("/metrics", as: nil).body)
            #expect(FastLaneTests.sample(metrics, Self.malformedSeries(400)) == 4, "\(metrics)")
            #expect(FastLaneTests.sample(metrics, Self.malformedSeries(431)) == 1, "\(metrics)")
        }
    }

    /// A malformed request behind others on a kept-alive connection is answered after them, in
    /// order, and the connection closed: with a problem by the fast lane (behind `/health`, behind
    /// a fix batch being committed, and behind a request the router answers, whose answers come
    /// first), counted; without the lane, with Hummingbird's bare 400.
    @Test(arguments: [true, false])
    func answersALaterMalformedRequestInOrder(fastLane: Bool) async throws {
        let clock = TestClock()
        try await Self.serve(fastLane: fastLane, clock: clock) { live, port in
            let ann = try await live.register("ann")
            let fix = try FastLaneTests.oneFix(at: clock)
            let bad = "GET /health HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n"
            let cases: [(first: String, answer: String, problem: Bool)] = [
                ("GET /health HTTP/1.1\r\nHost: x\r\n\r\n", "{\"status\":\"ok\"}", fastLane),
                (FastLaneTests.post(fix, token: ann.token), "\"accepted\":1", fastLane),
                ("GET /ready HTTP/1.1\r\nHost: x\r\n\r\n", "\"status\":\"ready\"", fastLane),
            ]
            for (first, answer, problem) in cases {
                let connection = try RawConnection(port: port)
                defer { connection.close() }
                connection.send(first + bad)
                let (text, closed) = await connection.receiveAll()
                #expect(closed, "the connection stayed open: \(text)")
                let responses = text.components(separatedBy: "HTTP/1.1 ").dropFirst()
                #expect(responses.count == 2, "\(text)")
                #expect(responses.first?.hasPrefix("200 OK\r\n") == true && responses.first?.contains(answer) == true, "\(text)")
                #expect(responses.last?.hasPrefix("400 Bad Request\r\n") == true, "\(text)")
                #expect(responses.last?.contains("\"type\":\"/problems/malformed-request\"") == problem, "\(text)")
            }
            let metrics = String(buffer: try await live.get("/metrics", as: nil).body)
            #expect(FastLaneTests.sample(metrics, Self.malformedSeries(400)) == cases.filter(\.problem).count, "\(metrics)")
        }
    }

    /// A bad chunk in the body of a request the router is reading ends that request, the router's
    /// own: its route answers the problem (it was a 500) and the connection is closed, not held
    /// open waiting for the rest of the body.
    @Test(arguments: [true, false])
    func leavesABadChunkOfARoutedRequestToTheRouter(fastLane: Bool) async throws {
        try await Self.serve(fastLane: fastLane) { _, port in
            let connection = try RawConnection(port: port)
            defer { connection.close() }
            connection.send("POST /v1/sessions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + "Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\nZZ\r\n")
            let (text, closed) = await connection.receiveAll()
            #expect(closed, "the connection stayed open: \(text)")
            #expect(text.hasPrefix("HTTP/1.1 400 Bad Request\r\n"), "\(text)")
            #expect(text.contains("\"type\":\"/problems/malformed-request\""), "\(text)")
            #expect(text.contains("chunk's size is not hexadecimal"), "\(text)")
        }
    }

    /// A connection that sends nothing, or half a head, is closed once the idle timeout passes
    /// (Hummingbird's idle handler only arrives with the first head).
    @Test(arguments: [true, false])
    func closesAConnectionThatSendsNoWholeHead(fastLane: Bool) async throws {
        try await Self.serve(fastLane: fastLane, idleTimeout: .seconds(1)) { _, port in
            let silent = try RawConnection(port: port), halfway = try RawConnection(port: port)
            defer { silent.close(); halfway.close() }
            let start = ContinuousClock.now
            halfway.send("GET /health HTTP/1.1\r\nHost: x\r\n")
            #expect(await silent.waitForClose(seconds: 10), "a silent connection stayed open")
            #expect(await halfway.waitForClose(seconds: 10), "a connection with half a head stayed open")
            #expect(ContinuousClock.now - start >= .seconds(1))
        }
    }

    /// The series malformed requests answered with a problem of `status` are counted in.
    static func malformedSeries(_ status: Int) -> String {
        "coasterlife_http_requests_total{method=\"other\",route=\"malformed\",status=\"\(status)\"}"
    }

    /// Runs `body` against a live server of a new service, with the fast lane or without, and
    /// the port for raw connections.
    static func serve(
        fastLane: Bool, idleTimeout: Duration? = nil, clock: TestClock? = nil,
        _ body: @escaping @Sendable (any TestClientProtocol, Int) async throws -> Void
    ) async throws {
        let s = try await TestService(clock: clock)
        defer { s.remove() }
        var configuration = s.configuration
        configuration.fastLane = fastLane
        if let idleTimeout { configuration.idleTimeout = idleTimeout }
        let app = try buildApplication(configuration, service: s.service, logger: Logger(label: "test"))
        try await app.test(.live) { live in try await body(live, try #require(live.port)) }
    }
}
