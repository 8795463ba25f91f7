import CoasterCore
import Foundation

/// Consistent copies of the whole store, and checks of one.
public protocol BackupStore: Sendable {
    /// A consistent copy of the database at `destination`, taken while the service keeps serving,
    /// with the photo files it references copied beside it, checked before it is moved into place.
    /// SpatiaLite: SQLite's online backup API copies a snapshot, checked with `PRAGMA
    /// integrity_check`. PostgreSQL: `pg_dump --format=custom` of one exported snapshot, read back
    /// with `pg_restore --list`.
    ///
    /// The server may delete a photo, and its file, between the snapshot and the copying of the
    /// files (it may run in another process, so nothing here can hold it off): SpatiaLite deletes
    /// such a photo from the copy too, rather than keep it without its file; PostgreSQL, whose
    /// dump cannot be edited, takes the copy again from a new snapshot (three times at most).
    func backup(to destination: String) async throws -> BackupSummary

    /// A check of the live database: `["ok"]` when healthy (SpatiaLite: `PRAGMA integrity_check`;
    /// PostgreSQL: the schema's objects are all there and valid, from the catalog).
    func integrityCheck() async throws -> [String]

    /// Row counts of the tables that hold users' writes, for comparing a backup with its source.
    func tableCounts() async throws -> [String: Int]
}
