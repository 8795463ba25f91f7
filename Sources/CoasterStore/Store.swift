import CSpatiaLite
import Foundation
import GRDB

/// Why the store could not do what was asked.
public enum StoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file could not be opened or migrated; `reason` is a sentence for the operator.
    case cannotOpen(path: String, reason: String)

    public var description: String {
        switch self {
        case .cannotOpen(let path, let reason): "cannot open the database at \(path): \(reason)"
        }
    }
}

/// CoasterLife's durable record: one SQLite file in WAL mode with SpatiaLite on every connection.
///
/// All SQL of the service lives behind this type; its methods speak in domain operations and return
/// CoasterCore values. Every method that writes does its reading, deciding and writing in one
/// transaction.
public struct Store: Sendable {
    let pool: DatabasePool
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

    /// Opens (creating if needed) and migrates the database at `path`.
    /// - Parameters:
    ///   - readers: the most concurrent read connections.
    ///   - now: the clock, injected so tests can move time.
    public init(path: String, readers: Int = 4, now: @escaping @Sendable () -> Date = Date.init) throws {
        var configuration = Configuration()
        configuration.maximumReaderCount = max(1, readers)
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            try SpatiaLite.attach(to: db)
            // The writer touches index pages of every user (fixes are keyed by user): with SQLite's
            // default 2 MB cache it re-reads them from the OS on most inserts. 64 MB keeps them.
            if !db.configuration.readonly { try db.execute(sql: "PRAGMA cache_size = -65536") }
        }
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            self.pool = try DatabasePool(path: path, configuration: configuration)
            try Migrations.migrator.migrate(self.pool)
            try self.pool.barrierWriteWithoutTransaction { try $0.execute(sql: "PRAGMA synchronous = \(Self.synchronous)") }
            self.fixWrites = GroupCommit(self.pool)
            self.pool.add(transactionObserver: self.waitBoards, extent: .databaseLifetime)
        } catch let error as DatabaseError {
            throw StoreError.cannotOpen(path: path, reason: error.message ?? error.description)
        } catch let error as SpatiaLiteError {
            throw StoreError.cannotOpen(path: path, reason: error.description)
        } catch {
            throw StoreError.cannotOpen(path: path, reason: "\(error)")
        }
        self.path = path
        self.now = now
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
