import CoasterCore
import Foundation
import GRDB

extension SpatiaLiteStore {
    /// A consistent copy of the database at `destination`, taken while the service keeps serving:
    /// SQLite's online backup API copies a snapshot, the photo files it references are copied
    /// beside it, and the copy is checked (`PRAGMA integrity_check`) before it is moved into place.
    ///
    /// The server may delete a photo, and its file, between the snapshot and the copying of the
    /// files (it may run in another process, so nothing here can hold it off): such a photo is
    /// deleted from the copy too, rather than kept without its file.
    public func backup(to destination: String) async throws -> BackupSummary {
        let start = Date()
        let fm = FileManager.default
        let target = URL(fileURLWithPath: destination)
        try fm.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        let temporary = target.deletingLastPathComponent().appendingPathComponent(".\(target.lastPathComponent).\(UUID().uuidString).partial")
        defer { try? fm.removeItem(at: temporary) }
        let copy = try DatabaseQueue(path: temporary.path)
        try self.pool.backup(to: copy)
        let photos = try await copy.read { db in
            // The formats are the schema's CHECK's, so every row has one.
            try Row.fetchAll(db, sql: "SELECT DISTINCT sha256, format FROM photos").compactMap { row in
                InspectedImage.Format(rawValue: row["format"]).map { (row["sha256"] as String, $0) }
            }
        }
        let photoTarget = target.deletingLastPathComponent().appendingPathComponent("photos", isDirectory: true)
        var copied = 0
        var gone: [String] = []
        for (sha, format) in photos {
            let from = self.photoURL(sha, format), to = PhotoFiles.url(sha, format, under: photoTarget)
            if from.standardizedFileURL == to.standardizedFileURL || fm.fileExists(atPath: to.path) { continue }
            guard fm.fileExists(atPath: from.path) else {
                gone.append(sha)
                continue
            }
            try fm.createDirectory(at: to.deletingLastPathComponent(), withIntermediateDirectories: true)
            do {
                try fm.copyItem(at: from, to: to)
            } catch where !fm.fileExists(atPath: from.path) {
                gone.append(sha)  // deleted while it was being copied
                try? fm.removeItem(at: to)
                continue
            }
            copied += 1
        }
        let leftOut = try await copy.write { [gone] db in
            var count = 0
            for sha in gone {
                try db.execute(sql: "DELETE FROM photos WHERE sha256 = ?", arguments: [sha])
                count += db.changesCount
            }
            return count
        }
        let check = try await copy.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
        guard check == ["ok"] else { throw StoreError.cannotOpen(path: destination, reason: "the copy failed its integrity check: \(check.prefix(3))") }
        try copy.close()
        if fm.fileExists(atPath: target.path) { try fm.removeItem(at: target) }
        try fm.moveItem(at: temporary, to: target)
        let size = (try? fm.attributesOfItem(atPath: target.path)[.size] as? Int) ?? 0
        return BackupSummary(path: target.path, bytes: size, photos: copied, photosLeftOut: leftOut, seconds: Date().timeIntervalSince(start))
    }

    /// `PRAGMA integrity_check` of the live database: `["ok"]` when healthy.
    public func integrityCheck() async throws -> [String] {
        try await self.pool.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
    }

    /// Row counts of the tables that hold users' writes, for comparing a backup with its source.
    public func tableCounts() async throws -> [String: Int] {
        try await self.pool.read { db in
            var counts: [String: Int] = [:]
            for table in CountedTables.names {
                counts[table] = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)") ?? 0
            }
            return counts
        }
    }
}
