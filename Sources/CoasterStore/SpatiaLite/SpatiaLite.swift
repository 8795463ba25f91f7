import CSpatiaLite
import GRDB

/// Failures of the SpatiaLite layer, which reports many of them by return value, not by error.
public enum SpatiaLiteError: Error, Equatable, Sendable, CustomStringConvertible {
    case noConnection
    case registrationFailed(Int32)
    /// An admin function (`AddGeometryColumn`, `CreateSpatialIndex`…) returned something other than 1.
    case callFailed(sql: String, result: String)

    public var description: String {
        switch self {
        case .noConnection: "no SQLite connection to initialise SpatiaLite on"
        case .registrationFailed(let rc): "could not tie SpatiaLite's cache to the connection (SQLite code \(rc))"
        case .callFailed(let sql, let result): "SpatiaLite call failed: \(sql) returned \(result)"
        }
    }
}

// GRDB has no "connection will close" hook, so the SpatiaLite connection cache is handed to SQLite
// as the user data of a dummy function: SQLite calls its destructor when the connection closes.
private let spatialiteCacheDestructor: @convention(c) (UnsafeMutableRawPointer?) -> Void = { cache in
    spatialite_cleanup_ex(cache)
}

private let spatialiteCacheOwner: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
    context, _, _ in
    sqlite3_result_null(context)
}

enum SpatiaLite {
    /// Process-wide library set-up, run once before the first connection.
    static let initializeLibrary: Void = spatialite_initialize()

    /// Loads SpatiaLite into one connection (writer or reader); called from `prepareDatabase`.
    static func attach(to db: Database) throws {
        _ = initializeLibrary
        guard let connection = db.sqliteConnection, let cache = spatialite_alloc_connection() else {
            throw SpatiaLiteError.noConnection
        }
        // GEOS/RTTOPO warnings would otherwise go to stderr; the store reports failures itself.
        spatialite_set_silent_mode(cache)
        spatialite_init_ex(connection, cache, 0)
        let rc = sqlite3_create_function_v2(
            connection, "coasterlife_spatialite_cache", 0, SQLITE_UTF8, cache,
            spatialiteCacheOwner, nil, nil, spatialiteCacheDestructor)
        // On failure SQLite has already run the destructor, so the cache is not leaked.
        guard rc == SQLITE_OK else { throw SpatiaLiteError.registrationFailed(rc) }
    }
}

extension Database {
    /// Runs a SpatiaLite admin function that reports failure by returning 0 (the reason goes only to
    /// stderr), and throws unless it returned 1.
    func spatialiteCall(_ sql: String, _ arguments: StatementArguments = []) throws {
        let result = try DatabaseValue.fetchOne(self, sql: sql, arguments: arguments)
        guard let result, Int.fromDatabaseValue(result) == 1 else {
            throw SpatiaLiteError.callFailed(sql: sql, result: result.map { "\($0)" } ?? "nothing")
        }
    }
}
