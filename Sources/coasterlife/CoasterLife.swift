import ArgumentParser

@main
struct CoasterLife: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coasterlife",
        abstract: "CoasterLife: geofenced check-ins, nearby friends and ride waits for theme parks.",
        subcommands: [Serve.self, Import.self, User.self, Waits.self, Backup.self],
        defaultSubcommand: nil)
}

import Foundation

/// Options every command that opens the database shares.
struct DatabaseOptions: ParsableArguments {
    @Option(name: .long, help: "The SpatiaLite database file (created if missing). Environment: COASTERLIFE_DATABASE.")
    var database: String = Environment.value("COASTERLIFE_DATABASE") ?? "var/coasterlife.sqlite"
}

/// Defaults from the environment: every `serve` option has a `COASTERLIFE_…` variable; a flag wins.
enum Environment {
    static func value(_ name: String) -> String? {
        ProcessInfo.processInfo.environment[name].flatMap { $0.isEmpty ? nil : $0 }
    }
}
