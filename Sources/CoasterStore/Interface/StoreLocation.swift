import Foundation

/// Where a store lives, as `--database` names it: a file path (a SpatiaLite file, created if
/// needed) or a `postgres://` URL (a PostgreSQL database with PostGIS).
///
/// A URL is never taken for a file name: a value that starts with a scheme and `://`, or with
/// `postgres:`/`postgresql:`, is a URL, and one with another scheme is refused.
public enum StoreLocation: Sendable, Equatable, CustomStringConvertible {
    case spatiaLite(path: String)
    case postgres(PostgresLocation)

    /// Reads a `--database` value.
    public init(_ value: String) throws(StoreLocationError) {
        let lowered = value.lowercased()
        if lowered.hasPrefix("postgres:") || lowered.hasPrefix("postgresql:") {
            self = .postgres(try PostgresLocation(url: value))
            return
        }
        if let range = value.range(of: "://") {
            let scheme = value[..<range.lowerBound]
            if !scheme.isEmpty, scheme.allSatisfy({ $0.isLetter || $0.isNumber || "+-.".contains($0) }), scheme.first!.isLetter {
                throw StoreLocationError("--database \(Self.redacted(value)): unknown URL scheme '\(scheme)'; give a file path or postgres://user@host:port/database")
            }
        }
        guard !value.isEmpty else { throw StoreLocationError("--database is empty: give a file path or postgres://user@host:port/database") }
        self = .spatiaLite(path: value)
    }

    /// The location for logs: a PostgreSQL password is never shown.
    public var description: String {
        switch self {
        case .spatiaLite(let path): path
        case .postgres(let location): location.description
        }
    }

    /// `value` with anything between `//` and `@` (a user and password) hidden: a `--database`
    /// value fit for a log line, whether or not it names a store.
    public static func redacted(_ value: String) -> String {
        guard let slashes = value.range(of: "://"), let at = value[slashes.upperBound...].lastIndex(of: "@") else { return value }
        return value[..<slashes.upperBound] + "***" + value[at...]
    }
}

/// A `--database` value that names no store.
public struct StoreLocationError: Error, Equatable, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// A PostgreSQL database, from a URL in libpq's form:
/// `postgres://user[:password]@host[:port]/database[?sslmode=disable|prefer|require&host=/socket/dir&pool=N&pool_timeout=S&connect_timeout=S]`.
///
/// `host=` as a query item names a directory holding the server's unix socket (as libpq reads it);
/// the password may also come from `PGPASSWORD`.
public struct PostgresLocation: Sendable, Equatable, CustomStringConvertible {
    public enum TLSMode: String, Sendable, Equatable { case disable, prefer, require }

    public var user: String
    public var password: String?
    public var host: String
    public var port: Int
    public var database: String
    /// The server's unix socket file, when connecting through one instead of TCP.
    public var unixSocketPath: String?
    public var tls: TLSMode
    /// The most connections the store's pool opens.
    public var poolSize: Int
    /// How long opening one connection may take, seconds.
    public var connectTimeout: Int
    /// How long a use case may wait for a connection of the pool, seconds, before it is answered
    /// as unavailable (`503`).
    public var poolTimeout: Int
    /// PostgreSQL schema to create and use (`search_path`), for tests that share one database.
    public var schema: String?

    public init(url: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws(StoreLocationError) {
        func fail(_ reason: String) -> StoreLocationError {
            StoreLocationError("--database \(StoreLocation.redacted(url)): \(reason)")
        }
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
              scheme == "postgres" || scheme == "postgresql", url.contains("://") else {
            throw fail("not a URL of the form postgres://user@host:port/database")
        }
        guard let user = components.user, !user.isEmpty else { throw fail("the URL names no user (postgres://user@host/database)") }
        self.user = user.removingPercentEncoding ?? user
        self.password = components.password.map { $0.removingPercentEncoding ?? $0 } ?? environment["PGPASSWORD"]
        var host = components.host ?? ""
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        self.host = host.isEmpty ? "localhost" : host
        self.port = components.port ?? 5432
        guard (1...65535).contains(self.port) else { throw fail("port \(self.port) is out of range") }
        let database = String(components.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty, !database.contains("/") else { throw fail("the URL names no database (postgres://user@host/database)") }
        self.database = database.removingPercentEncoding ?? database
        self.tls = .prefer
        self.poolSize = 16
        self.connectTimeout = 5
        self.poolTimeout = 10
        self.unixSocketPath = nil
        self.schema = nil
        for item in components.queryItems ?? [] {
            let value = item.value ?? ""
            switch item.name {
            case "sslmode":
                switch value {
                case "disable": self.tls = .disable
                case "allow", "prefer": self.tls = .prefer
                case "require", "verify-ca", "verify-full": self.tls = .require
                default: throw fail("sslmode=\(value) is not one of disable, prefer, require")
                }
            case "host":
                guard value.hasPrefix("/") else { throw fail("host=\(value) must be an absolute socket directory") }
                self.unixSocketPath = value.hasSuffix(".s.PGSQL.\(self.port)") ? value : value + (value.hasSuffix("/") ? "" : "/") + ".s.PGSQL.\(self.port)"
            case "pool":
                guard let n = Int(value), (1...500).contains(n) else { throw fail("pool=\(value) must be a whole number from 1 to 500") }
                self.poolSize = n
            case "connect_timeout":
                guard let n = Int(value), (1...300).contains(n) else { throw fail("connect_timeout=\(value) must be whole seconds from 1 to 300") }
                self.connectTimeout = n
            case "pool_timeout":
                guard let n = Int(value), (1...600).contains(n) else { throw fail("pool_timeout=\(value) must be whole seconds from 1 to 600") }
                self.poolTimeout = n
            case "schema":
                guard !value.isEmpty, value.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }), value.first!.isLetter else {
                    throw fail("schema=\(value) must be letters, digits and underscores")
                }
                self.schema = value
            case "application_name":
                break
            default:
                throw fail("unknown parameter '\(item.name)' (known: sslmode, host, pool, pool_timeout, connect_timeout, schema)")
            }
        }
    }

    /// The URL with the password hidden.
    public var description: String {
        let host = self.host.contains(":") ? "[\(self.host)]" : self.host
        var text = "postgres://\(self.user)\(self.password == nil ? "" : ":***")@\(host):\(self.port)/\(self.database)"
        if let socket = self.unixSocketPath { text += "?host=\(URL(fileURLWithPath: socket).deletingLastPathComponent().path)" }
        return text
    }

    /// Where the server is, for error messages.
    var server: String {
        self.unixSocketPath.map { "the socket \($0)" } ?? "\(self.host):\(self.port)"
    }
}
