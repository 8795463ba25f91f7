import CoasterCore
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// The ``Store`` on a PostgreSQL 15 database with PostGIS 3 (postgres-nio): what several service
/// nodes share (docs: RunningOnPostgreSQL).
///
/// Every use case is one transaction on one pooled connection, bounded in time
/// (``transaction(user:_:)``, ``read(_:)``). SQLite gave the SpatiaLite store one writer; here
/// transactions run side by side, so each one that reads, decides and writes for a user first takes
/// that user's advisory lock: one writer per user, as before, and any number of users at once.
/// Times are `double precision` seconds since 1970, as SQLite's `REAL` columns hold them, so both
/// stores give the same `Date`s and cursors back.
public final class PostgresStore: Sendable {
    let client: PostgresClient
    private let running: Task<Void, Never>
    let logger: Logger
    let now: @Sendable () -> Date
    /// Wait boards served again until a write they read commits (``WaitBoards``): this store tells
    /// the boards itself what each of its commits wrote; writes of other nodes show within the
    /// boards' freshness.
    let waitBoards = WaitBoards()
    /// The database, as `--database` named it.
    public let location: PostgresLocation
    /// Where photo files live (a directory every node of a deployment shares).
    public let photoDirectory: URL
    /// How long one use case may wait for a connection before the store gives up with
    /// ``StoreUnavailable`` (`?pool_timeout=`).
    let deadline: Duration
    let fixCommitCounts = Mutex((transactions: 0, batches: 0))

    private init(client: PostgresClient, running: Task<Void, Never>, logger: Logger, location: PostgresLocation,
                 photoDirectory: URL, deadline: Duration, now: @escaping @Sendable () -> Date) {
        self.client = client
        self.running = running
        self.logger = logger
        self.location = location
        self.photoDirectory = photoDirectory
        self.deadline = deadline
        self.now = now
    }

    /// Connects, checks the server (reachable, PostgreSQL 15 or later, PostGIS 3), migrates, and
    /// opens the pool. Every failure is a ``StoreError/cannotOpen(path:reason:)`` whose reason says
    /// what to do.
    /// - Parameter photoDirectory: where photo files are kept.
    public static func open(_ location: PostgresLocation, photoDirectory: URL,
                            now: @escaping @Sendable () -> Date = Date.init) async throws -> PostgresStore {
        var logger = Logger(label: "coasterlife.postgres")
        logger.logLevel = .critical
        do {
            try await Self.prepare(location, logger: logger)
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.cannotOpen(path: location.description, reason: Self.sentence(for: error, at: location))
        }
        let client = PostgresClient(configuration: Self.clientConfiguration(location), backgroundLogger: logger)
        let running = Task { await client.run() }
        return PostgresStore(client: client, running: running, logger: logger, location: location,
                             photoDirectory: photoDirectory, deadline: .seconds(location.poolTimeout), now: now)
    }

    /// Closes the pool; the store must not be used afterwards.
    public func close() throws {
        self.running.cancel()
    }

    /// The server's and PostGIS's versions.
    public func versions() async throws -> [String: String] {
        try await self.read { tx in
            let row = try await tx.one("SELECT current_setting('server_version'), postgis_lib_version(), postgis_geos_version(), postgis_proj_version()")
            let (server, postgis, geos, proj) = try row.decode((String, String, String?, String?).self)
            return ["postgresql": server, "postgis": postgis, "geos": geos ?? "", "proj": proj ?? ""]
        }
    }

    // MARK: - Connecting

    static func clientConfiguration(_ location: PostgresLocation) -> PostgresClient.Configuration {
        var configuration: PostgresClient.Configuration
        if let socket = location.unixSocketPath {
            configuration = .init(unixSocketPath: socket, username: location.user, password: location.password, database: location.database)
        } else {
            let tls: PostgresClient.Configuration.TLS = switch location.tls {
            case .disable: .disable
            case .prefer: .prefer(.makeClientConfiguration())
            case .require: .require(.makeClientConfiguration())
            }
            configuration = .init(host: location.host, port: location.port, username: location.user, password: location.password,
                                  database: location.database, tls: tls)
        }
        configuration.options.minimumConnections = 0
        configuration.options.maximumConnections = location.poolSize
        configuration.options.connectTimeout = .seconds(Int64(location.connectTimeout))
        configuration.options.additionalStartupParameters = Self.startupParameters(location)
        return configuration
    }

    /// Sent with every connection: bounded statements and locks, no JIT, and the schema tests ask
    /// for.
    ///
    /// JIT compilation pays off for long analytic queries, never for this service's short ones: a
    /// post search at a tenth of the posts benchmark's size spent 850 ms compiling a plan that ran
    /// in 69 ms without it, on every run (the estimated cost crossed `jit_above_cost`).
    static func startupParameters(_ location: PostgresLocation) -> [(String, String)] {
        var parameters = [
            ("application_name", "coasterlife"),
            ("statement_timeout", "15s"),
            ("lock_timeout", "10s"),
            ("idle_in_transaction_session_timeout", "60s"),
            ("jit", "off"),
        ]
        if let schema = location.schema { parameters.append(("search_path", "\(schema), public")) }
        return parameters
    }

    /// One connection, outside the pool: a server that is not there fails at once here (a pooled
    /// query would wait for the pool's circuit breaker), and the checks and migrations run on it.
    private static func prepare(_ location: PostgresLocation, logger: Logger) async throws {
        var configuration: PostgresConnection.Configuration
        if let socket = location.unixSocketPath {
            configuration = .init(unixSocketPath: socket, username: location.user, password: location.password, database: location.database)
        } else {
            let tls: PostgresConnection.Configuration.TLS = switch location.tls {
            case .disable: .disable
            case .prefer: .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
            case .require: .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            }
            configuration = .init(host: location.host, port: location.port, username: location.user, password: location.password,
                                  database: location.database, tls: tls)
        }
        configuration.options.connectTimeout = .seconds(Int64(location.connectTimeout))
        configuration.options.additionalStartupParameters = Self.startupParameters(location).filter { $0.0 != "search_path" }
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
        do {
            try await PostgresSchema.prepare(connection, location: location, logger: logger)
            try await connection.close()
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// A sentence for the operator about why the database could not be opened.
    static func sentence(for error: any Error, at location: PostgresLocation) -> String {
        if let error = error as? PSQLError {
            switch error.code {
            case .connectionError:
                return "cannot reach PostgreSQL at \(location.server): \(error.underlying.map { "\($0)" } ?? "connection failed")"
            case .sslUnsupported:
                return "the server at \(location.server) does not offer TLS (add ?sslmode=disable on a trusted network)"
            case .authMechanismRequiresPassword:
                return "the server asks for a password for user \(location.user) (give it in the URL or PGPASSWORD)"
            case .server:
                let state = error.serverInfo?[.sqlState] ?? ""
                let message = error.serverInfo?[.message] ?? "server error"
                switch state {
                case "28P01", "28000": return "authentication failed for user \(location.user): \(message)"
                case "3D000": return "the database \(location.database) does not exist (createdb \(location.database)): \(message)"
                default: return "\(message) (SQLSTATE \(state))"
                }
            default:
                return "\(error.code): \(error.underlying.map { "\($0)" } ?? "")"
            }
        }
        return "\(error)"
    }
}

/// The database did not answer in time or could not be reached: the request may be tried again.
public struct StoreUnavailable: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

extension PostgresStore {
    /// Runs SQL text as written, in one transaction, `$n` placeholders bound from `bindings`: for
    /// tests and tools that reach beneath the interface, never for anything a request sends.
    func execute(unsafeSQL sql: String, _ bindings: PostgresBindings = PostgresBindings()) async throws -> [PostgresRow] {
        try await self.transaction { tx in try await tx.rows(PostgresQuery(unsafeSQL: sql, binds: bindings)) }
    }
}

extension PostgresStore: Store {}
