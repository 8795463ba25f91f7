import CSpatiaLite
import Foundation
import GRDB

/// Why the store could not do what was asked.
public enum StoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file could not be opened or migrated; `reason` is a sentence for the operator.
    case cannotOpen(path: String, reason: String)
    /// The file holds in `table` a time no bulk load wrote, or a ride log not yet counted on the
    /// boards: it has served, so its times cannot be moved as a loaded world's
    /// (``SpatiaLiteStore/bulkShiftTimes(by:chunk:progress:)``).
    case notABulkLoad(path: String, table: String)

    public var description: String {
        switch self {
        case .cannotOpen(let path, let reason): "cannot open the database at \(path): \(reason)"
        case .notABulkLoad(let path, let table):
            "the database at \(path) holds \(table) no bulk load wrote: only a world as it was loaded can be moved in time"
        }
    }
}

/// The ``Store`` on one SQLite file in WAL mode with SpatiaLite on every connection (GRDB).
///
/// Its methods speak in domain operations and return CoasterCore values. Every method that writes
/// does its reading and writing in one transaction, applying the rules it is handed.
public struct SpatiaLiteStore: Sendable {
    /// The database: a pool of connections (one writer, several readers) when opened by path.
    let pool: any DatabaseWriter
    /// Fix batches, committed in groups (``GroupCommit``): the busiest write of the service.
    let fixWrites: GroupCommit
    /// Wait boards served again until a write they read commits (``WaitBoards``).
    let waitBoards = WaitBoards()
    let now: @Sendable () -> Date
    /// The file's path.
    public let path: String

    /// How far a write has gone when its caller hears it committed: into the WAL file through the
    /// operating system, so a process killed at any moment loses no acknowledged write (DESIGN: "a
    /// 2xx means committed: after `kill -9` every acknowledged write is there";
    /// `tools/chaos/durability`), but not flushed to the disk at every commit: the WAL is flushed
    /// when it is checkpointed. A power cut or kernel crash can lose the commits since the last
    /// flush, never the file's integrity (SQLite's guarantee for WAL with `NORMAL`). Flushing at
    /// every commit (`FULL`) cost 7 % of one-fix requests here (tools/bench/README.md, "The fix
    /// path, measured"). GRDB sets `NORMAL` for a pool too; it is set here so that the promise
    /// does not rest on a library default.
    static let synchronous = "NORMAL"

    /// Opens (creating if needed) and migrates the database at `path`, as a pool of connections.
    /// - Parameters:
    ///   - readers: the most concurrent read connections.
    ///   - now: the clock, injected so tests can move time.
    public init(path: String, readers: Int = 4, now: @escaping @Sendable () -> Date = Date.init) throws {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        /// The database: a pool of connections (one writer, several readers) when opened by path.
    let pool: any DatabaseWriter
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            pool = try DatabasePool(path: path, configuration: Self.configuration(readers: readers))
        } catch {
            throw Self.openingError(error, path: path)
        }
        try self.init(writer: pool, path: path, now: now)
    }

    /// A store over a database its caller opened (GRDB's `DatabasePool`, or a `DatabaseQueue`)
    /// with ``configuration(readers:)``: migrates it, and keeps photo files beside `path`.
    public init(writer: any DatabaseWriter, path: String, now: @escaping @Sendable () -> Date = Date.init) throws {
        do {
            try Migrations.migrator.migrate(writer)
            try writer.barrierWriteWithoutTransaction { try $0.execute(sql: "PRAGMA synchronous = \(Self.synchronous)") }
        } catch {
            throw Self.openingError(error, path: path)
        }
        self.pool = writer
        self.fixWrites = GroupCommit(writer)
        writer.add(transactionObserver: self.waitBoards, extent: .databaseLifetime)
        self.path = path
        self.now = now
    }

    /// How every connection of a store is set up: SpatiaLite loaded, and a large writer cache.
    public static func configuration(readers: Int = 4) -> Configuration {
        var configuration = Configuration()
        configuration.maximumReaderCount = max(1, readers)
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            try SpatiaLite.attach(to: db)
            // The writer touches index pages of every user (fixes are keyed by user): with SQLite's
            // default 2 MB cache it re-reads them from the OS on most inserts. 64 MB keeps them.
            if !db.configuration.readonly { try db.execute(sql: "PRAGMA cache_size = -65536") }
        }
        return configuration
    }

    private static func openingError(_ error: any Error, path: String) -> StoreError {
        switch error {
        case let error as DatabaseError: .cannotOpen(path: path, reason: error.message ?? error.description)
        case let error as SpatiaLiteError: .cannotOpen(path: path, reason: error.description)
        default: .cannotOpen(path: path, reason: "\(error)")
        }
    }

    /// Bytes of heap SQLite holds in this process now: every connection's page cache (the writer's
    /// may grow to 64 MB, see `init`), prepared statements, SpatiaLite's and the WAL index's
    /// allocations through SQLite. Process-wide, as SQLite counts it.
    public static var sqliteMemoryUsed: Int64 { sqlite3_memory_used() }

    /// Closes every connection; the store must not be used afterwards.
    public func close() throws {
        try self.pool.close()
    }

    /// Versions of the storage libraries, as SpatiaLite reports them.
    public func versions() async throws -> [String: String] {
        try await self.pool.read { db in
            let row = try Row.fetchOne(
                db, sql: "SELECT sqlite_version(), spatialite_version(), geos_version(), proj_version()")!
            return ["sqlite": row[0], "spatialite": row[1], "geos": row[2], "proj": row[3]]
        }
    }
}

extension SpatiaLiteStore: Store {}
