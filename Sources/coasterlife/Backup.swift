import ArgumentParser
import CoasterCore
import CoasterService
import CoasterStore
import Foundation

struct Backup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a consistent copy of the database (and its photos) while the server keeps running.",
        discussion: """
            A SpatiaLite file is copied with SQLite's online backup API, checked with PRAGMA integrity_check, \
            then moved to DEST; photo files are copied into DEST's directory under photos/. To restore, stop \
            the server and serve (or copy) the backup file: `coasterlife serve --database DEST`. A PostgreSQL \
            database is dumped with pg_dump --format=custom into DEST (restore with pg_restore), its photo \
            files likewise beside it.
            """)

    @OptionGroup var database: DatabaseOptions

    @Argument(help: "Where to write the copy (e.g. backups/coasterlife-2026-11-21.sqlite).")
    var destination: String

    func run() async throws {
        if case .spatiaLite(let path) = try storeLocation(self.database.database), !FileManager.default.fileExists(atPath: path) {
            throw ValidationError("there is no database at \(path)")
        }
        let store = try await self.database.open()
        defer { try? store.close() }
        print("Backing up \(self.database.shown) to \(self.destination)…")
        let summary = try await store.backup(to: self.destination)
        print(String(format: "Wrote %@ (%.1f MB, checked) and %d photo files in %.2f s.", summary.path,
                     Double(summary.bytes) / 1e6, summary.photos, summary.seconds))
        if summary.photosLeftOut > 0 {
            print("Left out \(summary.photosLeftOut) photo(s) deleted while the backup ran: their files were gone before they could be copied.")
        }
    }
}
