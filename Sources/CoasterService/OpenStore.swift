import CoasterStore
import Foundation

/// Opens the store a `--database` value names, for the server and every command alike: a file
/// path is a SpatiaLite file (created if needed). A URL is never taken for a file name: one this
/// build has no store for is refused, so that `--database postgres://…` cannot leave a SQLite
/// file named `postgres:` in the working directory.
public func openStore(_ database: String, now: @escaping @Sendable () -> Date = Date.init) throws -> any Store {
    if let scheme = database.range(of: "://").map({ String(database[..<$0.lowerBound]) }), !scheme.contains("/") {
        throw StartupError("--database \(database) is a \(scheme) URL, and this build stores only in SpatiaLite files: give a file path")
    }
    return try SpatiaLiteStore(path: database, now: now)
}
