import CoasterCore
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// One open transaction on one pooled connection: the statements of a use case.
///
/// postgres-nio binds every `\(value)` interpolated into a ``PostgresQuery`` as a parameter (`$n`),
/// never as text, and runs one statement per call.
struct PostgresTransaction {
    let connection: PostgresConnection
    let logger: Logger

    /// Every row of a query.
    func rows(_ query: PostgresQuery, file: String = #fileID, line: Int = #line) async throws -> [PostgresRow] {
        try await self.connection.query(query, logger: self.logger, file: file, line: line).collect()
    }

    /// The first row of a query, if any.
    func first(_ query: PostgresQuery, file: String = #fileID, line: Int = #line) async throws -> PostgresRow? {
        try await self.rows(query, file: file, line: line).first
    }

    /// The one row a query always returns (an aggregate, or `RETURNING` of an insert).
    func one(_ query: PostgresQuery, file: String = #fileID, line: Int = #line) async throws -> PostgresRow {
        guard let row = try await self.first(query, file: file, line: line) else {
            throw PostgresStoreFault("the query at \(file):\(line) returned no row")
        }
        return row
    }

    /// Runs a statement, its rows (if any) dropped.
    func run(_ query: PostgresQuery, file: String = #fileID, line: Int = #line) async throws {
        _ = try await self.rows(query, file: file, line: line)
    }

    /// How many rows a statement returned: with `RETURNING 1`, how many it changed.
    func count(_ query: PostgresQuery, file: String = #fileID, line: Int = #line) async throws -> Int {
        try await self.rows(query, file: file, line: line).count
    }

    /// Serialises this transaction with every other that takes the same user's lock, until it ends:
    /// the "one writer per user" that SQLite's single writer gave. Users in id order, so two
    /// transactions locking the same pair cannot deadlock.
    func lock(_ users: UserID...) async throws {
        for user in Set(users).sorted(by: { $0.rawValue < $1.rawValue }) {
            try await self.run("SELECT pg_advisory_xact_lock(\(user.rawValue))")
        }
    }

    /// Serialises this transaction with every other that takes the same store-wide lock.
    func lock(_ lock: PostgresLock) async throws {
        try await self.run("SELECT pg_advisory_xact_lock(\(lock.rawValue))")
    }
}

/// Advisory locks of the store itself, one-key (`pg_advisory_xact_lock(bigint)`). User ids are
/// positive, so these keys are negative. Two-key locks are a key space of their own:
/// `(1, hashtext(ride_id))` serialises reports and posted-wait loads of one ride
/// (PostgresStore+Waits), `(2, hashtext(sha256))` photo files with the rows that use them
/// (PostgresStore+Photos).
enum PostgresLock: Int64 {
    /// Park imports, one at a time.
    case parkImport = -1
    /// Session revocations, committed in `seq` order (nodes poll them by `seq`).
    case revocations = -2
    /// Migrations, run by one node while others starting at the same time wait.
    case migrations = -3
    /// Ride logs, committed in id order (the leaderboards settle them by id).
    case rideLogs = -4
    /// Settling tallies, one settler at a time.
    case settling = -5
}

/// Something the store did not expect of the database (a bug, not a user's mistake).
struct PostgresStoreFault: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension PostgresStore {
    /// Runs `body` in a read-write transaction, after taking the locks of `users`; retried (up to
    /// three times) when PostgreSQL aborts it for a serialisation failure or a deadlock.
    func transaction<T: Sendable>(
        locking users: [UserID] = [], _ body: @escaping @Sendable (PostgresTransaction) async throws -> T
    ) async throws -> T {
        try await self.withDeadline { leased in
            var attempt = 0
            while true {
                attempt += 1
                do {
                    return try await self.once(begin: "BEGIN", leased: leased) { tx in
                        for user in Set(users).sorted(by: { $0.rawValue < $1.rawValue }) { try await tx.lock(user) }
                        return try await body(tx)
                    }
                } catch let error as PSQLError where attempt < 3 && Self.mayRetry(error) {
                    continue
                }
            }
        }
    }

    /// Runs `body` in a read-only transaction on one snapshot (what a GRDB read gives the SQLite
    /// store: a page read with several statements cannot mix two moments).
    func read<T: Sendable>(_ body: @escaping @Sendable (PostgresTransaction) async throws -> T) async throws -> T {
        try await self.withDeadline { leased in
            try await self.once(begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", leased: leased, body)
        }
    }

    /// Runs `body` on a pooled connection outside a transaction: for one statement, which is its
    /// own transaction (a round trip less each for `BEGIN` and `COMMIT`).
    func single<T: Sendable>(_ body: @escaping @Sendable (PostgresTransaction) async throws -> T) async throws -> T {
        try await self.withDeadline { leased in
            try await self.client.withConnection { connection in
                leased.set()
                return try await body(PostgresTransaction(connection: connection, logger: self.logger))
            }
        }
    }

    /// Runs `body` in a transaction on one pooled connection with neither the store's deadline nor
    /// the server's statement and idle timeouts: for work whose size is the database's (a bulk
    /// load, loading every user, a dump that shares the transaction's snapshot), never a request's.
    func unbounded<T: Sendable>(begin: PostgresQuery = "BEGIN",
                                _ body: @escaping @Sendable (PostgresTransaction) async throws -> T) async throws -> T {
        try await self.once(begin: begin, leased: Leased()) { tx in
            try await tx.run("""
                SELECT set_config('statement_timeout', '0', true), set_config('idle_in_transaction_session_timeout', '0', true)
                """)
            return try await body(tx)
        }
    }

    private func once<T: Sendable>(begin: PostgresQuery, leased: Leased,
                                   _ body: @escaping @Sendable (PostgresTransaction) async throws -> T) async throws -> T {
        try await self.client.withConnection { connection in
            leased.set()
            let tx = PostgresTransaction(connection: connection, logger: self.logger)
            try await tx.run(begin)
            let value: T
            do {
                value = try await body(tx)
            } catch {
                // The connection goes back to the pool: it must not carry the aborted transaction.
                do { try await tx.run("ROLLBACK") } catch { try? await connection.close() }
                throw error
            }
            do {
                try await tx.run("COMMIT")
            } catch {
                try? await tx.run("ROLLBACK")
                throw error
            }
            return value
        }
    }

    /// A serialisation failure or a deadlock: the transaction did nothing and may run again.
    static func mayRetry(_ error: PSQLError) -> Bool {
        guard error.code == .server, let state = error.serverInfo?[.sqlState] else { return false }
        return state == "40001" || state == "40P01"
    }

    /// A server error that says nothing of the request and may pass: a statement or lock timeout,
    /// the server shutting down or starting, or short of a resource (class 53: disk full, out of
    /// memory, too many connections). The request is answered 503, to be tried again, with the
    /// server's own words in the log, never a bare 500.
    static func isUnavailable(sqlState state: String) -> Bool {
        state.hasPrefix("53") || ["57014", "55P03", "57P01", "57P02", "57P03"].contains(state)
    }

    /// The SQLSTATE of a server error.
    static func sqlState(_ error: any Error) -> String? {
        guard let error = error as? PSQLError, error.code == .server else { return nil }
        return error.serverInfo?[.sqlState]
    }

    /// Whether a use case has its connection: from then on its statements are bounded by the
    /// server, and its outcome, whatever it is, is the answer.
    final class Leased: Sendable {
        private let value = Mutex(false)
        func set() { self.value.withLock { $0 = true } }
        var isSet: Bool { self.value.withLock { $0 } }
    }

    /// Bounds the wait for a connection: with the server gone, the pool would wait for its circuit
    /// breaker (60 s). Once the work has its connection the deadline no longer applies: its
    /// statements are bounded by the server (`statement_timeout`, `lock_timeout`), and a commit
    /// must not be answered as a failure because it came late.
    private func withDeadline<T: Sendable>(_ work: @escaping @Sendable (Leased) async throws -> T) async throws -> T {
        let deadline = self.deadline
        let server = self.location.server
        let leased = Leased()
        do {
            return try await withThrowingTaskGroup(of: T?.self) { group in
                group.addTask { try await work(leased) }
                group.addTask {
                    try await Task.sleep(for: deadline)
                    return nil
                }
                defer { group.cancelAll() }
                while let outcome = try await group.next() {
                    if let value = outcome { return value }
                    guard leased.isSet else { break }
                }
                throw StoreUnavailable("PostgreSQL at \(server) gave no connection within \(deadline)")
            }
        } catch let error as PSQLError {
            switch (error.code, Self.sqlState(error)) {
            case (.connectionError, _), (.serverClosedConnection, _), (.clientClosedConnection, _), (.poolClosed, _), (.queryCancelled, _),
                 (.uncleanShutdown, _):
                throw StoreUnavailable("PostgreSQL at \(server): \(error.code)")
            case (.server, let state?) where Self.isUnavailable(sqlState: state):
                throw StoreUnavailable("PostgreSQL at \(server): \(error.serverInfo?[.message] ?? "unavailable") (SQLSTATE \(state))")
            default:
                throw error
            }
        }
    }
}
