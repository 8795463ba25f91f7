import GRDB
import Synchronization

/// Writes that share a transaction (group commit).
///
/// A write through ``write(_:)`` runs in its own savepoint of a transaction that also carries the
/// writes queued while the previous one was committing; its caller resumes after that commit. So
/// N concurrent writers pay one `BEGIN` and one `COMMIT` instead of N, and share the WAL frames of
/// the pages they all change; nothing is acknowledged before it is committed (how far a commit
/// goes: ``SpatiaLiteStore/synchronous``). A write that throws rolls back its own savepoint and fails
/// alone; a failed `COMMIT` fails every write of the group.
///
/// Each group is one job on the pool's serial writer queue, so other writes of the store (which
/// use the pool directly) take their turn between groups.
final class GroupCommit: Sendable {
    private struct Job: Sendable {
        /// Runs the write in its savepoint; returns how to answer its caller once the group has
        /// committed (`nil`) or failed to.
        let run: @Sendable (Database) -> @Sendable ((any Error)?) -> Void
        /// Answers a caller whose write never ran (the transaction could not begin).
        let fail: @Sendable (any Error) -> Void
    }

    private struct Queue {
        var jobs: [Job] = []
        /// A group is scheduled on the writer queue or running; it takes what is queued when done.
        var draining = false
        var groups = 0
        var writes = 0
    }

    private let writer: any DatabaseWriter
    private let queue = Mutex(Queue())

    init(_ writer: any DatabaseWriter) {
        self.writer = writer
    }

    /// Runs `work` in the next group's transaction and returns its result after the commit.
    func write<T: Sendable>(_ work: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            self.write(work) { continuation.resume(with: $0) }
        }
    }

    /// Runs `work` in the next group's transaction and calls `completion` with its result after
    /// the commit (or the failure), on the writer's thread: for callers that are not tasks (the
    /// HTTP fast lane answers on its event loop), so that no task is started per write.
    func write<T: Sendable>(
        _ work: @escaping @Sendable (Database) throws -> T, completion: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        let job = Job(
            run: { db in
                do {
                    let result = try Self.inSavepoint(db) { try work(db) }
                    return { error in completion(error.map { .failure($0) } ?? .success(result)) }
                } catch {
                    return { _ in completion(.failure(error)) }
                }
            },
            fail: { completion(.failure($0)) })
        let start = self.queue.withLock { queue in
            queue.jobs.append(job)
            defer { queue.draining = true }
            return !queue.draining
        }
        if start { self.schedule() }
    }

    /// Transactions run so far, and the writes they carried.
    var totals: (groups: Int, writes: Int) { self.queue.withLock { ($0.groups, $0.writes) } }

    /// Writes waiting for the next group.
    var waiting: Int { self.queue.withLock { $0.jobs.count } }

    private func schedule() {
        self.writer.asyncWriteWithoutTransaction { db in
            let jobs = self.queue.withLock { queue in
                defer { queue.jobs.removeAll(keepingCapacity: true) }
                queue.groups += 1
                queue.writes += queue.jobs.count
                return queue.jobs
            }
            Self.commit(jobs, db)
            let more = self.queue.withLock { queue in
                queue.draining = !queue.jobs.isEmpty
                return queue.draining
            }
            // Behind any other write that queued meanwhile: groups do not starve other writers.
            if more { self.schedule() }
        }
    }

    /// Runs `work` in a savepoint of the group's transaction, rolled back if it throws.
    ///
    /// GRDB's `inSavepoint` compiles its `SAVEPOINT` and `RELEASE` anew each time, 3 % of a fix
    /// request's instructions; these are prepared once per connection. GRDB still sees them begin
    /// and end the savepoint (a statement's effect on the transaction is read when it is
    /// prepared), and once SQLite has dropped the transaction (SQLITE_FULL) GRDB refuses them, so
    /// the write fails like every statement after it.
    private static func inSavepoint<T>(_ db: Database, _ work: () throws -> T) throws -> T {
        try db.cachedStatement(sql: "SAVEPOINT group_commit").execute()
        let value: T
        do {
            value = try work()
        } catch {
            // Undo the write's changes, then forget the savepoint (ROLLBACK TO keeps it).
            // Either can fail only when the transaction is gone, which the group then finds.
            try? db.cachedStatement(sql: "ROLLBACK TO SAVEPOINT group_commit").execute()
            try? db.cachedStatement(sql: "RELEASE SAVEPOINT group_commit").execute()
            throw error
        }
        try db.cachedStatement(sql: "RELEASE SAVEPOINT group_commit").execute()
        return value
    }

    private static func commit(_ jobs: [Job], _ db: Database) {
        var answers: [@Sendable ((any Error)?) -> Void] = []
        answers.reserveCapacity(jobs.count)
        do {
            try db.inTransaction(.immediate) {
                // On some errors (SQLITE_FULL, SQLITE_IOERR) SQLite rolls the whole transaction
                // back; GRDB then refuses every statement until the transaction ends, so the rest
                // of the group fails rather than running in autocommit (GroupCommitTests).
                for job in jobs { answers.append(job.run(db)) }
                return .commit
            }
            for answer in answers { answer(nil) }
        } catch {
            for answer in answers { answer(error) }
            for job in jobs.dropFirst(answers.count) { job.fail(error) }
        }
    }
}
