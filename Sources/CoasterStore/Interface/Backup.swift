import CoasterCore
import Foundation

/// Consistent copies of the whole store, and checks of one.
public protocol BackupStore: Sendable {
    /// A consistent copy of the database at `destination`, taken while the service keeps serving:
    /// SQLite's online backup API copies a snapshot, the photo files it references are copied
    /// beside it, and the copy is checked (`PRAGMA integrity_check`) before it is moved into place.
    ///
    /// The server may delete a photo, and its file, between the snapshot and the copying of the
    /// files (it may run in another process, so nothing here can hold it off): such a photo is
    /// deleted from the copy too, rather than kept without its file.
    func backup(to destination: String) async throws -> BackupSummary

    /// `PRAGMA integrity_check` of the live database: `["ok"]` when healthy.
    func integrityCheck() async throws -> [String]

    /// Row counts of the tables that hold users' writes, for comparing a backup with its source.
    func tableCounts() async throws -> [String: Int]
}
