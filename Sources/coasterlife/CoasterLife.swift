import ArgumentParser

@main
struct CoasterLife: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coasterlife",
        abstract: "CoasterLife: geofenced check-ins, nearby friends and ride waits for theme parks.",
        subcommands: [Serve.self, Import.self, Catalog.self, User.self, Waits.self, Backup.self],
        defaultSubcommand: nil)
}

import CoasterService
import CoasterStore
import Foundation

/// Options every command that opens the database shares.
struct DatabaseOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "The database: a SpatiaLite file (created if missing) or postgres://user[:password]@host[:port]/database. Environment: COASTERLIFE_DATABASE.",
        discussion: "A PostgreSQL URL takes libpq's query parameters sslmode=disable|prefer|require and host=/socket/directory, and pool=N (connections, default 16); the password may come from PGPASSWORD."))
    var database: String = Environment.value("COASTERLIFE_DATABASE") ?? "var/coasterlife.sqlite"

    @Option(name: .customLong("photos"), help: "Where a PostgreSQL store keeps photo files: a directory every node shares (default: photos). A SpatiaLite store keeps them beside its file. Environment: COASTERLIFE_PHOTOS.")
    var photosOption: String?

    /// `--photos`, or its environment variable.
    var photos: String? { self.photosOption ?? Environment.value("COASTERLIFE_PHOTOS") }

    /// Opens the store these options name.
    func open(now: @escaping @Sendable () -> Date = Date.init) async throws -> any Store {
        try await openStore(self.database, photos: self.photos, now: now)
    }

    /// The database for messages: a PostgreSQL password is never shown.
    var shown: String { (try? StoreLocation(self.database).description) ?? StoreLocation.redacted(self.database) }
}

/// Defaults from the environment: every `serve` option has a `COASTERLIFE_…` variable; a flag wins.
enum Environment {
    static func value(_ name: String) -> String? {
        ProcessInfo.processInfo.environment[name].flatMap { $0.isEmpty ? nil : $0 }
    }
}
