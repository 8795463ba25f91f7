import ArgumentParser
import CoasterAPI
import Hummingbird
import Logging

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the HTTP API.",
        discussion: """
            On first start with an empty database, the park files in --parks are validated and loaded, \
            so a new install answers with real parks at once.
            """)

    @OptionGroup var database: DatabaseOptions

    @Option(help: "Address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "Port to listen on (0 picks a free one).")
    var port = 8080

    @Option(help: "Park files loaded into an empty database on first start; --parks '' for none.")
    var parks = "data/parks"

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .info

    func validate() throws {
        guard (0...65_535).contains(self.port) else { throw ValidationError("--port must be 0…65535") }
    }

    func run() async throws {
        var logger = Logger(label: "coasterlife")
        logger.logLevel = self.logLevel
        let configuration = ServiceConfiguration(
            host: self.host, port: self.port, databasePath: self.database.database,
            seedParksDirectory: self.parks.isEmpty ? nil : self.parks)
        let app = try await buildApplication(configuration, logger: logger)
        try await app.runService()
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
