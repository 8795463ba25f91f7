@testable import CoasterStore
import Foundation
import Logging
import PostgresNIO

/// The store the store, service and HTTP tests run on: SpatiaLite by default, PostgreSQL when
/// `COASTERLIFE_TEST_STORE=postgres` (`tools/test` runs those suites once for each).
///
/// On PostgreSQL each store is a database of its own, copied from a template migrated once per
/// test process, on the server `COASTERLIFE_TEST_POSTGRES_URL` names; `tools/test` starts a
/// throw-away server for them and removes it afterwards. A database each, not a schema each: the
/// store's advisory locks are the database's, and tests side by side must not wait on each other's.
/// Without the URL every PostgreSQL case fails, saying so: a run that was asked for PostgreSQL
/// never passes quietly on nothing.
public enum TestDatabase {
    public enum Kind: String, Sendable { case sqlite, postgres }

    public static let kind: Kind = ProcessInfo.processInfo.environment["COASTERLIFE_TEST_STORE"] == "postgres" ? .postgres : .sqlite

    /// Whether the tests run on SpatiaLite: for tests of what only that store has (its file, its
    /// pragmas, its query plans, its group commit).
    public static var isSQLite: Bool { Self.kind == .sqlite }

    /// A `--database` value naming the store of `directory`: a file in it, or a database named
    /// after it, created (empty and migrated) the first time, so that a test that reopens a
    /// directory reopens its store.
    public static func location(in directory: URL, kind: Kind = TestDatabase.kind) async throws -> String {
        switch kind {
        case .sqlite:
            return directory.appendingPathComponent("test.sqlite").path
        case .postgres:
            guard let url = ProcessInfo.processInfo.environment["COASTERLIFE_TEST_POSTGRES_URL"], !url.isEmpty else {
                throw Unavailable()
            }
            let name = "t_" + String(directory.lastPathComponent.lowercased().filter { $0.isASCII && ($0.isLetter || $0.isNumber) }.suffix(40))
            // The directory stands for the database: once a test removes it, the database goes too.
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try await Databases.shared.create(name, for: directory, server: url)
            // A connection may wait long: a full test run keeps both cores busy for minutes.
            return Databases.url(url, database: name) + "?pool=2&pool_timeout=120&sslmode=disable"
        }
    }

    /// The store of `directory` (new and empty the first time); photo files (PostgreSQL) in `directory/photos`.
    public static func open(in directory: URL, now: @escaping @Sendable () -> Date = Date.init) async throws -> any Store {
        let location = try await Self.location(in: directory)
        switch try StoreLocation(location) {
        case .spatiaLite(let path): return try SpatiaLiteStore(path: path, now: now)
        case .postgres(let postgres):
            return try await PostgresStore.open(postgres, photoDirectory: directory.appendingPathComponent("photos"), now: now)
        }
    }

    public struct Unavailable: Error, CustomStringConvertible {
        public var description: String {
            "PostgreSQL is not available: COASTERLIFE_TEST_STORE=postgres needs COASTERLIFE_TEST_POSTGRES_URL "
                + "(tools/test starts a throw-away server and sets it)"
        }
    }
}

/// Test databases on one server: a template migrated once, and copies of it, each dropped once
/// the directory it was made for is gone. A copy is about 19 MB (PostGIS's tables and functions),
/// and a full PostgreSQL pass makes some three hundred: kept to the end, they would fill a small
/// disk, and every test still running would fail on a full disk.
actor Databases {
    static let shared = Databases()

    private var template: Task<String, any Error>?
    /// The databases made here, by the directory each stands for.
    private var made: [String: URL] = [:]

    /// `url` with its database replaced.
    nonisolated static func url(_ url: String, database: String) -> String {
        let base = url.split(separator: "?", maxSplits: 1)[0]
        guard let slash = base.lastIndex(of: "/") else { return url }
        return base[...slash] + database
    }

    /// Creates `name` from the template unless it exists, after dropping the databases whose
    /// directories tests have removed (their stores closed first; `FORCE` ends what lingers).
    func create(_ name: String, for directory: URL, server: String) async throws {
        let template = try await self.template(server)
        let gone = Array(self.made.filter { !FileManager.default.fileExists(atPath: $0.value.path) }.keys)
        for database in gone { self.made[database] = nil }
        self.made[name] = directory
        try await Self.withConnection(server, database: "postgres") { connection, logger in
            for database in gone {
                try await connection.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(database) WITH (FORCE)"), logger: logger)
            }
            let exists = try await connection.query("SELECT 1 FROM pg_database WHERE datname = \(name)", logger: logger).collect().count > 0
            if !exists {
                try await connection.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name) TEMPLATE \(template)"), logger: logger)
            }
        }
    }

    /// The template: PostGIS and every migration, made once per process (its name says which
    /// migrations it holds, so a template an older build left on the server is not taken).
    private func template(_ server: String) async throws -> String {
        if let template = self.template { return try await template.value }
        let task = Task<String, any Error> {
            let name = "t_template_\(PostgresSchema.migrations.count)_\(ProcessInfo.processInfo.processIdentifier)"
            try await Self.withConnection(server, database: "postgres") { connection, logger in
                try await connection.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name)"), logger: logger)
                try await connection.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name) TEMPLATE template0"), logger: logger)
            }
            let location = try PostgresLocation(url: Self.url(server, database: name) + "?sslmode=disable")
            try await Self.withConnection(server, database: name) { connection, logger in
                try await PostgresSchema.prepare(connection, location: location, logger: logger)
            }
            return name
        }
        self.template = task
        return try await task.value
    }

    private static func withConnection(_ server: String, database: String,
                                       _ body: (PostgresConnection, Logger) async throws -> Void) async throws {
        let location = try PostgresLocation(url: Self.url(server, database: database) + "?sslmode=disable")
        var configuration: PostgresConnection.Configuration
        if let socket = location.unixSocketPath {
            configuration = .init(unixSocketPath: socket, username: location.user, password: location.password, database: database)
        } else {
            configuration = .init(host: location.host, port: location.port, username: location.user, password: location.password,
                                  database: database, tls: .disable)
        }
        let logger = Logger(label: "coasterlife.tests")
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
        do {
            try await body(connection, logger)
            try await connection.close()
        } catch {
            try? await connection.close()
            throw error
        }
    }
}
