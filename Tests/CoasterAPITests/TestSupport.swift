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
import Synchronization
import Testing

/// The real application over a real temporary database seeded with data/parks.
struct TestService {
    static let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let directory: URL
    let configuration: ServerConfiguration
    let service: Service

    /// - Parameters:
    ///   - directory: reuse a database directory (to test a restart); a new one by default.
    ///   - configure: changes to the configuration `serve` options make.
    ///   - store: the store to run on (``TestDatabase/kind`` unless a test compares both).
    init(port: Int = 0, directory: URL? = nil, store: TestDatabase.Kind = TestDatabase.kind, accounts: AccountPolicy = TestService.fastAccounts, location: LocationPolicy = LocationPolicy(),
         clock: TestClock? = nil, configure: (inout ServerConfiguration) -> Void = { _ in }) async throws {
        self.directory = directory ?? FileManager.default.temporaryDirectory.appendingPathComponent("coasterlife-api-\(UUID().uuidString)")
        var configuration = ServerConfiguration(ServiceConfiguration(
            database: try await TestDatabase.location(in: self.directory, kind: store),
            seedParksDirectory: Self.repoRoot.appendingPathComponent("data/parks").path, accounts: accounts, location: location),
            host: "127.0.0.1", port: port)
        configuration.photoDirectory = self.directory.appendingPathComponent("photos").path
        if let clock { configuration.now = { clock.now() } }
        // Connections are not closed as idle while a test task waits its turn for a thread (the
        // default, 30 s, is within what a full test run has made one wait); the idle-timeout
        // tests set their own.
        configuration.idleTimeout = .seconds(300)
        // Every test registers its users from one address; the registration limit has tests of
        // its own, which set it back.
        configuration.limits.registrations = RateLimit(perSecond: 1000, burst: 1000)
        configure(&configuration)
        self.configuration = configuration
        self.service = try await Service.open(self.configuration.service, logger: Logger(label: "test"))
    }

    /// bcrypt at its minimum cost: the tests check behaviour, not the work factor.
    static var fastAccounts: AccountPolicy {
        var policy = AccountPolicy()
        policy.bcryptCost = 4
        return policy
    }

    func app() throws -> some ApplicationProtocol {
        try buildApplication(self.configuration, service: self.service, logger: Logger(label: "test"))
    }

    /// The service's store as what it is here, for tests that reach beneath the interface.
    var sqlite: SpatiaLiteStore { self.service.store as! SpatiaLiteStore }

    func close() {
        try? self.service.store.close()
    }

    func remove() {
        self.close()
        try? FileManager.default.removeItem(at: self.directory)
    }

    /// Runs `body` against the application in `.router` mode.
    static func withApp(_ body: @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let s = try await TestService()
        defer { s.remove() }
        try await s.app().test(.router) { client in try await body(client) }
    }

    /// Runs `body` with the application and the service behind it.
    static func withService(clock: TestClock? = nil, _ body: @Sendable (TestService, any TestClientProtocol) async throws -> Void) async throws {
        let s = try await TestService(clock: clock)
        defer { s.remove() }
        try await s.app().test(.router) { client in try await body(s, client) }
    }

    /// An admin account made the way `coasterlife user create --admin` makes it.
    func admin(_ username: String, on client: some TestClientProtocol) async throws -> TestUser {
        _ = try await self.service.accounts.register(username: username, password: TestUser.password, displayName: nil, role: .admin)
        return try await client.login(username)
    }
}

/// A registered, logged-in user.
struct TestUser: Sendable {
    static let password = "correct horse battery"
    var id: Int64
    var username: String
    var token: String

    var auth: HTTPFields { [.authorization: "Bearer \(self.token)"] }
}

extension TestClientProtocol {
    /// Registers `username` (password ``TestUser/password``) and logs in.
    func register(_ username: String) async throws -> TestUser {
        let response = try await self.execute(uri: "/v1/users", method: .post, body: body(["username": username, "password": TestUser.password]))
        #expect(response.status == .created, "register \(username): \(String(buffer: response.body))")
        return try await self.login(username)
    }

    func login(_ username: String) async throws -> TestUser {
        let response = try await self.execute(uri: "/v1/sessions", method: .post, body: body(["username": username, "password": TestUser.password]))
        #expect(response.status == .created, "login \(username): \(String(buffer: response.body))")
        let json = try json(response.body)
        let user = try #require(json["user"] as? [String: Any])
        return TestUser(id: try #require((user["id"] as? NSNumber)?.int64Value), username: username, token: try #require(json["token"] as? String))
    }

    func get(_ uri: String, as user: TestUser?) async throws -> TestResponse {
        try await self.execute(uri: uri, method: .get, headers: user?.auth ?? [:])
    }

    func send(_ method: HTTPRequest.Method, _ uri: String, as user: TestUser?, json: [String: Any]? = nil) async throws -> TestResponse {
        var headers = user?.auth ?? [:]
        if json != nil { headers[.contentType] = "application/json" }
        return try await self.execute(uri: uri, method: method, headers: headers, body: json.map(body))
    }

    /// `from` befriends `to` (request and accept).
    func befriend(_ from: TestUser, _ to: TestUser) async throws {
        let r = try await self.send(.post, "/v1/friends/requests", as: from, json: ["username": to.username])
        #expect(r.status == .created)
        let a = try await self.send(.post, "/v1/friends/requests/\(from.id)/accept", as: to)
        #expect(a.status == .ok)
    }
}

func body(_ object: [String: Any]) -> ByteBuffer {
    ByteBuffer(bytes: try! JSONSerialization.data(withJSONObject: object))
}

func json(_ buffer: ByteBuffer) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(buffer.readableBytesView)) as? [String: Any])
}

/// Asserts a response is an RFC 9457 problem of the given status and type.
@discardableResult
func expectProblem(_ response: TestResponse, _ status: HTTPResponse.Status, _ type: ProblemType,
                   sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
    #expect(response.status == status, "body: \(String(buffer: response.body))", sourceLocation: sourceLocation)
    #expect(response.headers[.contentType] == "application/problem+json", sourceLocation: sourceLocation)
    let body = try json(response.body)
    #expect(body["type"] as? String == type.uri, sourceLocation: sourceLocation)
    #expect(body["status"] as? Int == Int(status.code), sourceLocation: sourceLocation)
    #expect((body["requestId"] as? String)?.isEmpty == false, sourceLocation: sourceLocation)
    #expect(response.headers[.requestID] == body["requestId"] as? String, sourceLocation: sourceLocation)
    return body
}

/// A clock the test moves by hand.
final class TestClock: Sendable {
    private let value: Mutex<Date>
    init(_ start: Date = Date()) { self.value = Mutex(start) }
    func now() -> Date { self.value.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { self.value.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

extension TestClientProtocol {
    /// Posts fixes (objects with lat, lon, accuracy, recordedAt…) and returns the decoded response.
    func postFixes(_ fixes: [[String: Any]], as user: TestUser) async throws -> [String: Any] {
        let response = try await self.execute(uri: "/v1/fixes", method: .post, headers: user.auth,
                                              body: ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: fixes)))
        #expect(response.status == .ok, "\(String(buffer: response.body))")
        return try json(response.body)
    }
}

/// Polls `condition` until it holds or a minute passes; the latter is recorded as an issue at the
/// caller's line (as `GroupCommitTests.waitUntil` does: in a full parallel run on two cores, tasks
/// have waited over 10 s to run).
func waitUntil(_ what: String, sourceLocation: SourceLocation = #_sourceLocation, _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(60)
    while try await !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("still waiting after a minute until \(what)", sourceLocation: sourceLocation)
            return
        }
        try await Task.sleep(for: .milliseconds(10))
    }
}

/// A fix object for POST /v1/fixes.
func fixJSON(_ lat: Double, _ lon: Double, accuracy: Double = 8, at date: Date, id: String? = nil) -> [String: Any] {
    var fix: [String: Any] = ["lat": lat, "lon": lon, "accuracy": accuracy, "recordedAt": date.formatted(.iso8601)]
    if let id { fix["id"] = id }
    return fix
}
