import ArgumentParser
import CoasterAPI
import CoasterCore
import CoasterService
import CoasterStore
import Foundation

struct Waits: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Posted waits and the evaluation of the wait estimator.",
        subcommands: [LoadPosted.self, Replay.self])

    struct LoadPosted: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "load-posted",
            abstract: "Load a park's official posted waits from CSV or JSON.",
            discussion: """
                CSV: a header `ride,at,minutes`, then one row per reading; `at` is RFC 3339 (or \
                `YYYY-MM-DD HH:MM:SS` in the park's time zone); minutes empty or -999 means the ride was down. \
                JSON: an array of {"ride", "at", "minutes"} with minutes null when down. `ride` is the ride's \
                id in the park (millennium-force) or its full id. Every row must name a listed ride of the \
                park, or nothing is written. How posted waits join the estimate: docs, "Waits".
                """)

        @OptionGroup var database: DatabaseOptions

        @Option(help: "The park's id, e.g. cedar-point.")
        var park: String

        @Argument(help: "A .csv file (header ride,at,minutes) or a .json array.", completion: .file(extensions: ["csv", "json"]))
        var file: String

        func run() async throws {
            guard let data = FileManager.default.contents(atPath: self.file) else { throw ValidationError("cannot read \(self.file)") }
            let store = try await self.database.open()
            defer { try? store.close() }
            let parkID = ParkID(rawValue: self.park)
            guard let summary = try await store.parkSummaries().first(where: { $0.id == parkID }) else {
                throw ValidationError("there is no park \(self.park) in \(self.database.shown)")
            }
            do {
                let rows = try PostedWaitFeed.parse(data, park: parkID, timeZone: TimeZone(identifier: summary.timeZone) ?? .gmt,
                                                    csv: self.file.lowercased().hasSuffix(".csv"))
                let loaded = try await store.loadPostedWaits(park: parkID, rows.map { PostedWaitEntry(ride: $0.ride, at: $0.at, minutes: $0.minutes) }).loaded
                print("Loaded \(loaded) posted waits for \(summary.name).")
            } catch let rejection as ImportRejection {
                print("\(self.file): INVALID, nothing written:")
                for issue in rejection.issues { print("    row \(issue.feature.map(String.init) ?? "-") (\(issue.pointer)): \(issue.reason)") }
                throw ExitCode.failure
            } catch PostedWaitError.unknownRides(let rows) {
                print("\(self.file): INVALID, nothing written: \(rows.count) row(s) name rides not listed in \(self.park):")
                for (row, ride) in rows.prefix(20) { print("    row \(row): \(ride)") }
                throw ExitCode.failure
            }
        }
    }

    struct Replay: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Score the wait estimator against the posted wait on real data.",
            discussion: """
                Replays TouringPlans' Animal Kingdom files in time order (posted waits as the official \
                feed, user-timed actual waits as crowd reports). For each actual wait it predicts the wait \
                from evidence strictly earlier in time and prints the mean absolute error (minutes) of the \
                posted wait and of the estimate, per ride and overall. With --queue-times, it also reports \
                what the Six Flags Great Adventure feed (posted waits only) can show.
                """)

        @Option(help: "The TouringPlans data directory (AK85.csv, AK86.csv).")
        var touringplans = "../shared/data/touringplans-animal-kingdom-waits"

        @Option(help: "Score only actuals from this day on (YYYY-MM-DD), e.g. to hold out a period.")
        var from: String?

        @Option(help: "The Queue-Times Six Flags Great Adventure directory (raw/*.csv); optional.")
        var queueTimes: String?

        func run() throws {
            let eastern = TimeZone(identifier: "America/New_York")!
            let scoredFrom = try self.from.map { text -> Date in
                guard let d = PostedWaitFeed.time(text + " 00:00:00", timeZone: eastern) else { throw ValidationError("--from takes YYYY-MM-DD") }
                return d
            } ?? .distantPast
            let rides = [("AK86.csv", "Avatar Flight of Passage"), ("AK85.csv", "Na'vi River Journey")]
            let replay = WaitReplay(timeZone: eastern)
            print("Wait-time data courtesy of TouringPlans.com.")
            print("Estimator: weighted median of reports (window \(Int(replay.estimator.window / 60)) min, time constant "
                + "\(Int(replay.estimator.timeConstant / 60)) min) and the posted wait through a robust line per part of the day "
                + "(prior weight \(replay.estimator.priorWeight), last \(replay.modelPairs) pairs).")
            if let from = self.from { print("Scoring actual waits entered from \(from) on.") }
            print("")
            print(Self.row(["ride", "actuals", "declined", "posted MAE", "estimate MAE", "improvement", "in range"]))
            print(Self.row(Array(repeating: "---", count: 7)))
            var total = WaitReplay.Score()
            for (file, name) in rides {
                let path = (self.touringplans as NSString).appendingPathComponent(file)
                guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { throw ValidationError("cannot read \(path)") }
                let score = replay.score(WaitReplay.touringPlans(text, timeZone: eastern), scoredFrom: scoredFrom)
                total = total + score
                print(Self.row(name, score))
            }
            print(Self.row("overall", total))
            if let dir = self.queueTimes { try QueueTimesReport.print(directory: dir) }
        }

        static func row(_ name: String, _ s: WaitReplay.Score) -> String {
            Self.row([name, "\(s.scored)", "\(s.declined)", String(format: "%.1f", s.postedMAE), String(format: "%.1f", s.estimateMAE),
                      String(format: "%.1f %%", s.improvement), String(format: "%.0f %%", 100 * s.coverage)])
        }

        static func row(_ cells: [String]) -> String { "| " + cells.joined(separator: " | ") + " |" }
    }
}

/// What posted-only data (Queue-Times, Six Flags Great Adventure) can tell: how fast a posted wait
/// goes stale, which is the gap fresh crowd reports fill, and how often rides are closed.
enum QueueTimesReport {
    static func print(directory: String) throws {
        let raw = (directory as NSString).appendingPathComponent("raw")
        let files = try FileManager.default.contentsOfDirectory(atPath: raw).filter { $0.hasSuffix(".csv") }.sorted()
        var series: [String: [(Date, Int?)]] = [:]
        for file in files {
            let text = try String(contentsOfFile: (raw as NSString).appendingPathComponent(file), encoding: .utf8)
            for line in text.split(whereSeparator: \.isNewline).dropFirst() {
                let c = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                guard c.count >= 9, let at = try? Date(c[0], strategy: .iso8601) else { continue }
                let open = c[c.count - 2] == "true"
                series[c[4], default: []].append((at, open ? Int(c[c.count - 1]) : nil))
            }
        }
        Swift.print("")
        Swift.print("Queue-Times, Six Flags Great Adventure (posted waits only, no actual waits; powered by Queue-Times.com):")
        let readings = series.values.reduce(0) { $0 + $1.count }
        let open = series.values.reduce(0) { $0 + $1.filter { $0.1 != nil }.count }
        Swift.print("  \(series.count) attractions, \(readings) five-minute readings, open in \(String(format: "%.0f", 100 * Double(open) / Double(max(1, readings)))) % of them.")
        Swift.print("  How far a posted wait k minutes old is from the current posted wait (MAE, minutes, rides open at both times):")
        for lag in [15, 30, 60] {
            var sum = 0.0
            var n = 0
            for points in series.values {
                let byTime = Dictionary(points.map { ($0.0, $0.1) }, uniquingKeysWith: { a, _ in a })
                for (t, now) in points {
                    guard let now, let then = byTime[t.addingTimeInterval(-Double(lag) * 60)] ?? nil else { continue }
                    sum += Double(abs(now - then))
                    n += 1
                }
            }
            Swift.print("    \(lag) min: \(String(format: "%.1f", sum / Double(max(1, n)))) (\(n) pairs)")
        }
        Swift.print("  With no timed waits there is no truth to score an estimate against; the estimator falls back to the")
        Swift.print("  posted wait (ratio 1 until pairs are learned) and says unknown once the feed is an hour stale.")
    }
}
