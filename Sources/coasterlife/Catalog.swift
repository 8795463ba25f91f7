import ArgumentParser
import CoasterCore
import CoasterService
import CoasterStore
import Foundation

struct Catalog: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Manage the ride catalogue (docs: Catalogue).",
        subcommands: [CatalogImportCommand.self])
}

struct CatalogImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Validate a ride catalogue file and load it into the database.",
        discussion: """
            FILE is a catalogue file (data/catalog/README.md has the format). It is validated first; if it \
            is invalid, every problem is listed with its JSON pointer, nothing is written, and the exit \
            status is 1. Otherwise it is written in one transaction: entries are added or updated by id, \
            and an entry naming a ride a park file fences (same park, same name) fills that ride's \
            missing figures instead. Importing the same file twice changes nothing. PUT /v1/admin/catalog \
            does the same on a running server.
            """)

    @OptionGroup var database: DatabaseOptions

    @Flag(help: "Only validate; write nothing.")
    var dryRun = false

    @Argument(help: "The catalogue file.", completion: .file(extensions: ["json"]))
    var file = CatalogFiles.defaultPath

    func run() async throws {
        let start = Date()
        let file: CatalogImport
        do {
            file = try CatalogFiles.check(path: self.file)
        } catch {
            print("\(self.file): INVALID — \(error.problems.count) problem\(error.problems.count == 1 ? "" : "s"):")
            for problem in error.problems { print("    \(problem.pointer.isEmpty ? "(file)" : problem.pointer): \(problem.reason)") }
            print("Nothing was written.")
            throw ExitCode.failure
        }
        print("\(self.file): ok — \(file.parks.count) parks, \(file.rides.count) rides [\(Import.ms(Date().timeIntervalSince(start)))]")
        guard !self.dryRun else {
            print("Valid (dry run: nothing written).")
            return
        }
        print("Writing to \(self.database.shown) in one transaction…")
        let store = try await self.database.open()
        do {
            let summary = try await store.importCatalog(file)
            let counts = try await store.catalogCounts()
            try store.close()
            print("  added \(summary.added), updated \(summary.updated), matched to fenced rides \(summary.matchedFenced), parks \(summary.parks)")
            print("The catalogue holds \(counts.rides) rides in \(counts.parks) parks [\(Import.ms(Date().timeIntervalSince(start)))].")
        } catch {
            try? store.close()
            throw error
        }
    }
}
