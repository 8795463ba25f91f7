import ArgumentParser
import CoasterAPI
import CoasterCore
import CoasterService
import CoasterStore
import Foundation

struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Validate park GeoJSON files and load them into the database.",
        discussion: """
            Each FILE is a GeoJSON FeatureCollection holding one park (docs: Geofences, "Park files"). Every file \
            is validated first; if any is invalid, its problems are listed with feature index and JSON \
            pointer, nothing is written, and the exit status is 1. Otherwise all files are written in one \
            transaction, replacing earlier imports of the same parks. A running server picks up the \
            change on restart or when the park is loaded through PUT /v1/admin/parks/{parkId}.
            """)

    @OptionGroup var database: DatabaseOptions

    @Flag(help: "Only validate; write nothing.")
    var dryRun = false

    @Argument(help: "Park files (.geojson).", completion: .file(extensions: ["geojson", "json"]))
    var files: [String]

    func validate() throws {
        guard !self.files.isEmpty else { throw ValidationError("name at least one park file") }
    }

    func run() async throws {
        var definitions: [ParkDefinition] = []
        var failed = 0
        for (n, path) in self.files.enumerated() {
            let checked = ParkFiles.check(path)
            let prefix = "[\(n + 1)/\(self.files.count)] \(path)"
            switch checked.result {
            case .success(let read):
                let d = read.definition
                let kinds = Dictionary(grouping: d.zones, by: \.kind).mapValues(\.count)
                let zones = ZoneKind.allCases.compactMap { k in kinds[k].map { "\($0) \(k.rawValue)" } }.joined(separator: ", ")
                print("\(prefix): ok — \(d.park.name) (\(d.park.id)): \(d.rides.count) rides; zones: \(zones.isEmpty ? "none" : zones) [\(Self.ms(checked.seconds))]")
                for warning in read.warnings { print("    warning: \(warning)") }
                definitions.append(d)
            case .failure(let rejection):
                failed += 1
                print("\(prefix): INVALID — \(rejection.issues.count) problem\(rejection.issues.count == 1 ? "" : "s"):")
                for issue in rejection.issues { print("    \(issue)") }
            }
        }
        guard failed == 0 else {
            print("\(failed) of \(self.files.count) files invalid; nothing was written.")
            throw ExitCode.failure
        }
        guard !self.dryRun else {
            print("All \(self.files.count) files valid (dry run: nothing written).")
            return
        }
        let start = Date()
        print("Writing \(definitions.count) park\(definitions.count == 1 ? "" : "s") to \(self.database.shown) in one transaction…")
        let store = try await self.database.open()
        let results = try await store.replaceParks(definitions)
        try store.close()
        for r in results {
            print("  \(r.park): \(r.replaced ? "replaced" : "new"), \(r.zones) zones, \(r.rides) rides\(r.unlistedRides > 0 ? ", \(r.unlistedRides) rides no longer listed" : "")")
        }
        let zones = results.reduce(0) { $0 + $1.zones }
        let rides = results.reduce(0) { $0 + $1.rides }
        print("Imported \(results.count) parks (\(zones) zones, \(rides) rides) in \(Self.ms(Date().timeIntervalSince(start))).")
    }

    static func ms(_ seconds: Double) -> String {
        String(format: "%.0f ms", seconds * 1000)
    }
}
