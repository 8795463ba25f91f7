import ArgumentParser

@main
struct CoasterLife: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coasterlife",
        abstract: "CoasterLife: geofenced check-ins, nearby friends and ride waits for theme parks.",
        subcommands: [Serve.self, Import.self, User.self, Waits.self],
        defaultSubcommand: nil)
}

/// Options every command that opens the database shares.
struct DatabaseOptions: ParsableArguments {
    @Option(name: .long, help: "The SpatiaLite database file (created if missing).")
    var database: String = "var/coasterlife.sqlite"
}
