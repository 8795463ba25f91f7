import ArgumentParser
import CoasterCore
import CoasterService
import CoasterStore
import Foundation

struct Backup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a consistent copy of the database (and its photos) while the server keeps running.",
        discussion: """
            Uses SQLite's online backup API, checks the copy with PRAGMA integrity_check, then moves it to \
            DEST; photo files are copied into DEST's directory under photos/. To restore, stop the server \
            and serve (or copy) the backup file: `coasterlife serve --database DEST`.
            """)

    @OptionGroup var database: DatabaseOptions

    @Argument(help: "Where to write the copy (e.g. backups/coasterlife-2026-11-21.sqlite).")
    var destination: String

    func run() async throws {
        guard FileManager.default.fileExists(atPath: self.database.database) else {
            throw ValidationError("there is no database at \(self.database.database)")
        }
        let store = try SpatiaLiteStore(path: self.database.database)
        defer { try? store.close() }
        print("Backing up \(self.database.database) to \(self.destination)…")
        let summary = try await store.backup(to: self.destination)
        print(String(format: "Wrote %@ (%.1f MB, integrity ok) and %d photo files in %.2f s.", summary.path,
                     Double(summary.bytes) / 1e6, summary.photos, summary.seconds))
        if summary.photosLeftOut > 0 {
            print("Left out \(summary.photosLeftOut) photo(s) deleted while the backup ran: their files were gone before they could be copied.")
        }
    }
}
