import CoasterStore
import Foundation

/// The store the store, service and HTTP tests run on: SpatiaLite by default, PostgreSQL when
/// `COASTERLIFE_TEST_STORE=postgres` (`tools/test` runs those suites once for each).
///
/// On PostgreSQL each store is a schema of its own (`t_…`) in the database
/// `COASTERLIFE_TEST_POSTGRES_URL` names, so tests running side by side never see each other's
/// rows; `tools/test` starts a throw-away server for them and removes it afterwards. Without the URL
/// every PostgreSQL case fails, saying so: a run that was asked for PostgreSQL never passes quietly
/// on nothing.
public enum TestDatabase {
    public enum Kind: String, Sendable { case sqlite, postgres }

    public static let kind: Kind = ProcessInfo.processInfo.environment["COASTERLIFE_TEST_STORE"] == "postgres" ? .postgres : .sqlite

    /// Whether the tests run on SpatiaLite: for tests of what only that store has (its file, its
    /// pragmas, its query plans, its group commit).
    public static var isSQLite: Bool { Self.kind == .sqlite }

    /// A `--database` value naming the store of `directory`: a file in it, or a schema named after
    /// it (so that a test that reopens a directory reopens its store).
    public static func location(in directory: URL, kind: Kind = TestDatabase.kind) throws -> String {
        switch kind {
        case .sqlite:
            return directory.appendingPathComponent("test.sqlite").path
        case .postgres:
            guard let url = ProcessInfo.processInfo.environment["COASTERLIFE_TEST_POSTGRES_URL"], !url.isEmpty else {
                throw Unavailable()
            }
            let schema = "t_" + String(directory.lastPathComponent.lowercased().filter { $0.isASCII && ($0.isLetter || $0.isNumber) }.suffix(40))
            return url + (url.contains("?") ? "&" : "?") + "schema=\(schema)&pool=4&sslmode=disable"
        }
    }

    /// The store of `directory` (new and empty the first time); photo files (PostgreSQL) in `directory/photos`.
    public static func open(in directory: URL, now: @escaping @Sendable () -> Date = Date.init) async throws -> any Store {
        let location = try Self.location(in: directory)
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
