@testable import CoasterAPI
import CoasterHTTP
import Foundation
import Testing

/// The kinds of problem the service answers with are the ones its docs list: a kind added to
/// the code and not to the article's table (or left in the table when removed) fails here.
@Suite("Problem types")
struct ProblemTypeTests {
    @Test func theDocsListEveryKindAndNoOther() throws {
        let article = try String(
            contentsOf: TestService.repoRoot.appendingPathComponent("Sources/CoasterAPI/CoasterLife.docc/OperationsAndSecurity.md"),
            encoding: .utf8)
        // A row of the "Errors" table names its kinds in its first cell: `/problems/a`, `b`, ….
        var documented: [String] = []
        for line in article.split(separator: "\n") where line.hasPrefix("| `/problems/") {
            let cell = line.split(separator: "|", omittingEmptySubsequences: true)[0]
            documented += cell.split(separator: "`").enumerated().filter { $0.offset % 2 == 1 }.map {
                String($0.element.hasPrefix("/problems/") ? $0.element.dropFirst("/problems/".count) : $0.element)
            }
        }
        let listed = ProblemType.all.map(\.rawValue)
        #expect(Set(listed).count == listed.count, "a kind listed twice")
        #expect(documented.sorted() == listed.sorted())
    }
}
