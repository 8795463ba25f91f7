import CoasterCore
import CoasterStore
import Foundation

/// Reading the ride catalogue file (`data/catalog/coasters.json`, docs: Catalogue), as
/// `coasterlife catalog import`, the first start of `serve` and `PUT /v1/admin/catalog` do.
public enum CatalogFiles {
    /// The catalogue file in the repository.
    public static let defaultPath = "data/catalog/coasters.json"

    /// Why a file is refused: every problem, each with its JSON pointer.
    public struct Refusal: Error, CustomStringConvertible, Sendable {
        public var problems: [CatalogFileProblems.Problem]

        public init(_ problems: [CatalogFileProblems.Problem]) { self.problems = problems }

        public var description: String { self.problems.map { "\($0.pointer.isEmpty ? "(file)" : $0.pointer): \($0.reason)" }.joined(separator: "\n") }
    }

    /// Checks a file's bytes: JSON (RFC 8259, by ``JSONSyntax``) of the catalogue's shape
    /// (``CatalogFile``), whose entries ``CatalogImport/check(_:)`` passes.
    public static func check(_ data: Data) throws(Refusal) -> CatalogImport {
        if let fault = JSONSyntax.fault(in: data) { throw Refusal([.init(pointer: "", reason: "not valid JSON: \(fault)")]) }
        let file: CatalogFile
        do {
            file = try JSONDecoder().decode(CatalogFile.self, from: data)
        } catch let error as DecodingError {
            throw Refusal([Self.problem(error)])
        } catch {
            throw Refusal([.init(pointer: "", reason: "\(error)")])
        }
        do {
            return try CatalogImport.check(file)
        } catch {
            throw Refusal(error.problems)
        }
    }

    /// Reads and checks the file at `path`.
    public static func check(path: String) throws(Refusal) -> CatalogImport {
        guard let data = FileManager.default.contents(atPath: path) else { throw Refusal([.init(pointer: "", reason: "cannot read \(path)")]) }
        return try self.check(data)
    }

    /// Loads the catalogue file into a store whose catalogue knows no park beyond the fenced ones
    /// (a new database, or one from before the catalogue), after its parks: so the fenced rides'
    /// entries are there to match. `nil` when the catalogue had more already.
    public static func seed(_ store: any Store, from path: String) async throws -> CatalogImportSummary? {
        let fenced = try await store.parkSummaries().count
        guard try await store.catalogCounts().parks <= fenced else { return nil }
        let file: CatalogImport
        do {
            file = try self.check(path: path)
        } catch {
            throw StartupError("the catalogue file \(path) is invalid:\n\(error)")
        }
        return try await store.importCatalog(file)
    }

    private static func problem(_ error: DecodingError) -> CatalogFileProblems.Problem {
        func pointer(_ path: [any CodingKey]) -> String {
            path.map { key in
                key.intValue.map { "/\($0)" } ?? "/" + key.stringValue.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
            }.joined()
        }
        switch error {
        case .keyNotFound(let key, let context):
            return .init(pointer: pointer(context.codingPath + [key]), reason: "required member \"\(key.stringValue)\" is missing")
        case .typeMismatch(let type, let context):
            return .init(pointer: pointer(context.codingPath), reason: "expected \(type == String.self ? "a string" : type == Int.self ? "an integer" : type == Double.self ? "a number" : "a value of another type")")
        case .valueNotFound(_, let context):
            return .init(pointer: pointer(context.codingPath), reason: "a value, not null")
        case .dataCorrupted(let context):
            return .init(pointer: pointer(context.codingPath), reason: context.debugDescription)
        @unknown default:
            return .init(pointer: "", reason: "the file could not be decoded")
        }
    }
}
