@testable import CoasterStore
import Foundation
import GRDB
import Testing

/// Statements on per-request paths search an index; a full scan of a table that grows with parks,
/// users or reports is a slow request waiting for enough data.
@Suite("Query plans")
struct QueryPlanTests {
    @Test(arguments: [
        // A wait or status report: the ride's zones.
        "SELECT id FROM zones WHERE ride_id = 'p.r' AND kind IN ('ride', 'queue')",
        // A report: the reporter's last report of the ride.
        "SELECT max(at) FROM wait_reports WHERE user_id = 1 AND ride_id = 'p.r' AND source = 'crowd'",
        "SELECT max(at) FROM status_reports WHERE user_id = 1 AND ride_id = 'p.r'",
        // A fix: replays by client id, open visits.
        "SELECT id FROM fixes WHERE user_id = 1 AND client_id = 'c'",
        "SELECT park_id, last_evidence_at FROM visits WHERE user_id = 1 AND left_at IS NULL",
    ])
    func searchesAnIndex(_ sql: String) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coasterlife-plans-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Store(path: directory.appendingPathComponent("plans.sqlite").path)
        defer { try? store.close() }
        let plan = try await store.pool.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql).map { $0["detail"] as String }
        }
        #expect(!plan.isEmpty && plan.allSatisfy { !$0.hasPrefix("SCAN") }, "\(plan)")
    }
}
