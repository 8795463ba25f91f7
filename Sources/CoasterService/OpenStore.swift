import CoasterStore
import Foundation

/// Opens the store a `--database` value names, for the server and every command alike: a file
/// path is a SpatiaLite file (created if needed); a `postgres://` URL is a PostgreSQL database with
/// PostGIS (migrated if needed). A URL is never taken for a file name: one with another scheme is
/// refused, so that a mistyped URL cannot leave a SQLite file named after it in the working directory.
/// - Parameter photos: where a PostgreSQL store keeps photo files (`photos` in the working
///   directory if `nil`); a SpatiaLite store keeps them beside its file, so that a backup takes both.
public func openStore(_ database: String, photos: String? = nil, now: @escaping @Sendable () -> Date = Date.init) async throws -> any Store {
    switch try storeLocation(database) {
    case .spatiaLite(let path):
        return try SpatiaLiteStore(path: path, now: now)
    case .postgres(let location):
        return try await PostgresStore.open(location, photoDirectory: URL(fileURLWithPath: photos ?? "photos"), now: now)
    }
}

/// The store a `--database` value names, or the sentence saying why it names none.
public func storeLocation(_ database: String) throws -> StoreLocation {
    do {
        return try StoreLocation(database)
    } catch {
        throw StartupError(error.description)
    }
}
