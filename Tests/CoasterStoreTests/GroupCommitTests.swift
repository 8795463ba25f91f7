@testable import CoasterStore
import CoasterTestSupport
import Dispatch
import Foundation
import GRDB
import Synchronization
import Testing

/// Every wait on the writer has a deadline (``waitUntil(_:_:sourceLocation:)``); the limit is the
/// backstop that turns any other wait that never ends into a failure. Ten minutes: in a full
/// parallel run on two cores these tests have taken over six to get their turns.
@Suite("Group commit", .enabled(if: TestDatabase.isSQLite), .timeLimit(.minutes(10)))
struct GroupCommitTests {
    /// Polls `condition` until it holds or a minute passes; the latter is recorded as an issue (at
    /// the caller's line), so a writer that never picks up its work fails the test instead of
    /// hanging it. A minute, not less: in a full parallel run on two cores this suite's tasks have
    /// waited over 10 s to start.
    static func waitUntil(_ what: String, sourceLocation: SourceLocation = #_sourceLocation, _ condition: () throws -> Bool) async rethrows {
        let deadline = ContinuousClock.now + .seconds(60)
        while try !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("still waiting after a minute until \(what)", sourceLocation: sourceLocation)
                return
            }
            try? await Task.sleep(for: .milliseconds(1))
        }
    }

    /// A pool with one table, and a way to hold its writer busy.
    struct Fixture {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coasterlife-group-\(UUID().uuidString)")
        let pool: DatabasePool

        init() throws {
            try FileManager.default.createDirectory(at: self.directory, withIntermediateDirectories: true)
            self.pool = try DatabasePool(path: self.directory.appendingPathComponent("g.sqlite").path)
            try self.pool.write { try $0.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER NOT NULL UNIQUE)") }
        }

        /// Occupies the writer until the returned semaphore is signalled.
        func holdWriter() -> DispatchSemaphore {
            let gate = DispatchSemaphore(value: 0)
            let held = DispatchSemaphore(value: 0)
            self.pool.asyncWriteWithoutTransaction { _ in
                held.signal()
                gate.wait()
            }
            held.wait()
            return gate
        }

        func values() throws -> [Int] {
            try self.pool.read { try Int.fetchAll($0, sql: "SELECT v FROM t ORDER BY v") }
        }

        func remove() {
            try? self.pool.close()
            try? FileManager.default.removeItem(at: self.directory)
        }
    }

    final class Counter: Sendable {
        private let value = Mutex(0)
        /// 0, 1, 2… across calls.
        func next() -> Int { self.value.withLock { n in defer { n += 1 }; return n } }
    }

    struct Refused: Error, Equatable {
        let v: Int
    }

    /// Submits the writes while the writer is held, waits until all are queued, then releases it.
    static func queued<T: Sendable>(
        _ group: GroupCommit, _ fixture: Fixture, count: Int, _ work: @escaping @Sendable (Int, Database) throws -> T
    ) async -> [Int: Result<T, any Error>] {
        let gate = fixture.holdWriter()
        return await withTaskGroup(of: (Int, Result<T, any Error>).self) { tasks in
            for i in 0..<count {
                tasks.addTask {
                    do { return (i, .success(try await group.write { try work(i, $0) })) } catch { return (i, .failure(error)) }
                }
            }
            await Self.waitUntil("\(count) writes are queued") { group.waiting >= count }
            gate.signal()
            var out: [Int: Result<T, any Error>] = [:]
            for await (i, result) in tasks { out[i] = result }
            return out
        }
    }

    @Test func writesQueuedTogetherShareOneTransaction() async throws {
        let f = try Fixture()
        defer { f.remove() }
        let group = GroupCommit(f.pool)
        let results = await Self.queued(group, f, count: 40) { i, db in
            try db.execute(sql: "INSERT INTO t (v) VALUES (?)", arguments: [i])
            return db.lastInsertedRowID
        }
        #expect(group.totals.groups == 1)
        #expect(try f.values() == Array(0..<40))
        // Each write saw its own insert, in the order they were queued within the group.
        let ids = Set(results.values.compactMap { try? $0.get() })
        #expect(ids.count == 40)
    }

    @Test func aFailingWriteRollsBackAloneAndTheOthersCommit() async throws {
        let f = try Fixture()
        defer { f.remove() }
        try await f.pool.write { try $0.execute(sql: "INSERT INTO t (v) VALUES (-1)") }
        let group = GroupCommit(f.pool)
        let results = await Self.queued(group, f, count: 30) { i, db in
            try db.execute(sql: "INSERT INTO t (v) VALUES (?)", arguments: [i * 10])
            // Every third write writes a second row, then fails: neither row may remain.
            if i % 3 == 0 {
                try db.execute(sql: "INSERT INTO t (v) VALUES (?)", arguments: [i * 10 + 1])
                throw Refused(v: i)
            }
            // Every fifth (not third) violates the unique constraint after its first insert.
            if i % 5 == 0, i > 0 { try db.execute(sql: "INSERT INTO t (v) VALUES (-1)") }
            return i
        }
        var expected = [-1]
        for i in 0..<30 {
            switch results[i] {
            case .success(let v):
                #expect(i % 3 != 0 && (i % 5 != 0 || i == 0))
                #expect(v == i)
                expected.append(i * 10)
            case .failure(let error as Refused):
                #expect(error == Refused(v: i))
            case .failure(let error as DatabaseError):
                #expect(i % 5 == 0 && i % 3 != 0)
                #expect(error.resultCode == .SQLITE_CONSTRAINT)
            case .failure(let error):
                Issue.record("write \(i): unexpected \(error)")
            case nil:
                Issue.record("write \(i) was not answered")
            }
        }
        #expect(group.totals.groups == 1)
        #expect(try f.values() == expected)
    }

    @Test func aFailedCommitFailsTheWholeGroup() async throws {
        let f = try Fixture()
        defer { f.remove() }
        // A deferred foreign key is checked at COMMIT: one write's dangling reference fails the commit.
        try await f.pool.write { db in
            try db.execute(sql: "CREATE TABLE child (id INTEGER PRIMARY KEY, parent INTEGER REFERENCES t (id) DEFERRABLE INITIALLY DEFERRED)")
        }
        let group = GroupCommit(f.pool)
        let results = await Self.queued(group, f, count: 10) { i, db in
            try db.execute(sql: "INSERT INTO t (v) VALUES (?)", arguments: [i])
            if i == 7 { try db.execute(sql: "INSERT INTO child (parent) VALUES (999999)") }
            return i
        }
        for i in 0..<10 {
            guard case .failure(let error as DatabaseError) = results[i] else {
                Issue.record("write \(i) should have failed with the commit: \(String(describing: results[i]))")
                continue
            }
            #expect(error.resultCode == .SQLITE_CONSTRAINT)
        }
        #expect(try f.values().isEmpty)
        // The next group is unaffected.
        #expect(try await group.write { db in try db.execute(sql: "INSERT INTO t (v) VALUES (100)") } == ())
        #expect(try f.values() == [100])
    }

    /// A write that makes SQLite drop the whole transaction (as SQLITE_FULL would) takes the group
    /// down with it; the writes after it do not run on their own in autocommit mode (GRDB refuses
    /// statements in an aborted transaction, and nothing here may get around that).
    @Test func aTransactionRolledBackUnderTheGroupStopsIt() async throws {
        let f = try Fixture()
        defer { f.remove() }
        let group = GroupCommit(f.pool)
        let ran = Counter()
        let results = await Self.queued(group, f, count: 6) { i, db in
            try db.execute(sql: "INSERT INTO t (v) VALUES (?)", arguments: [i])
            // The second write to run (whichever it is): one before it, four after.
            if ran.next() == 1 {
                try db.execute(sql: "ROLLBACK")
                throw Refused(v: i)
            }
            return i
        }
        let left = try f.values()
        #expect(left.isEmpty, "nothing of the group may remain: \(left)")
        for i in 0..<6 {
            if case .success = results[i] { Issue.record("write \(i) was acknowledged") }
        }
        // The next group is unaffected.
        try await group.write { db in try db.execute(sql: "INSERT INTO t (v) VALUES (100)") }
        #expect(try f.values() == [100])
    }

    @Test func otherWritesTakeTurnsBetweenGroups() async throws {
        let f = try Fixture()
        defer { f.remove() }
        let group = GroupCommit(f.pool)
        let gate = f.holdWriter()
        // Group A: eight writes; while it runs, its first write queues group B's eight.
        let all = Task {
            try await withThrowingTaskGroup(of: Void.self) { writes in
                for i in 0..<8 {
                    writes.addTask {
                        try await group.write { db in
                            try db.execute(sql: "INSERT INTO t (v) VALUES (?)", arguments: [i])
                            guard i == 0 else { return }
                            for j in 0..<8 {
                                Task { try await group.write { db in try db.execute(sql: "INSERT INTO t (v) VALUES (?)", arguments: [100 + j]) } }
                            }
                            let deadline = ContinuousClock.now + .seconds(10)
                            while group.waiting < 8, ContinuousClock.now < deadline { usleep(200) }
                        }
                    }
                }
                try await writes.waitForAll()
            }
        }
        await Self.waitUntil("group A's 8 writes are queued") { group.waiting >= 8 }
        // A plain write queued behind group A runs before group B, not after every group is drained.
        let seen = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int, any Error>) in
            f.pool.asyncWrite({ db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t") ?? 0 },
                              completion: { _, result in continuation.resume(with: result) })
            gate.signal()
        }
        try await all.value
        #expect(seen == 8)
        await Self.waitUntil("both groups commit") { group.totals.groups >= 2 && group.waiting == 0 }
        try await Self.waitUntil("all 16 rows are in") { try f.values().count >= 16 }
        #expect(try f.values() == Array(0..<8) + Array(100..<108))
    }
}
