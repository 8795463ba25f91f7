import CoasterCore
import CoasterStore
import Foundation

/// Reading park files from disk, as `coasterlife import` and the first start of `serve` do.
public enum ParkFiles {
    /// One file's outcome.
    public struct Checked: Sendable {
        public var path: String
        public var result: Result<ParkImport, ImportRejection>
        /// Time spent reading and validating, seconds.
        public var seconds: Double
    }

    /// The `.geojson` and `.json` files in a directory, sorted by name.
    public static func files(in directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory)
            .filter { $0.hasSuffix(".geojson") || $0.hasSuffix(".json") }
            .sorted()
            .map { (directory as NSString).appendingPathComponent($0) }
    }

    /// Reads and validates one file; nothing is written.
    public static func check(_ path: String, importer: ParkImporter = ParkImporter()) -> Checked {
        let start = Date()
        let result: Result<ParkImport, ImportRejection>
        if let data = FileManager.default.contents(atPath: path) {
            do {
                result = .success(try importer.read(data))
            } catch {
                result = .failure(error)
            }
        } else {
            result = .failure(ImportRejection(issues: [ImportIssue(feature: nil, pointer: "", reason: "cannot read \(path)")]))
        }
        return Checked(path: path, result: result, seconds: Date().timeIntervalSince(start))
    }
}
