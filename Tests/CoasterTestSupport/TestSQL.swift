@testable import CoasterStore
import Foundation
import GRDB
import PostgresNIO

/// A value bound into a test's SQL.
public enum SQLValue: Sendable, Equatable {
    case int(Int64), double(Double), text(String), null
}

/// What a test binds into its SQL: integers, doubles, text, and `nil`.
public protocol SQLArgument: Sendable {
    var sqlValue: SQLValue { get }
}

extension Int: SQLArgument { public var sqlValue: SQLValue { .int(Int64(self)) } }
extension Int64: SQLArgument { public var sqlValue: SQLValue { .int(self) } }
extension Int32: SQLArgument { public var sqlValue: SQLValue { .int(Int64(self)) } }
extension Double: SQLArgument { public var sqlValue: SQLValue { .double(self) } }
extension String: SQLArgument { public var sqlValue: SQLValue { .text(self) } }
extension Optional: SQLArgument where Wrapped: SQLArgument { public var sqlValue: SQLValue { self?.sqlValue ?? .null } }

/// SQL a test runs beneath the store interface (rows a scenario needs that no use case writes,
/// counts the interface does not tell), on whichever store it runs: the SQL is written once, in the
/// dialect both accept, with `?` placeholders.
public struct TestSQL: Sendable {
    public let store: any Store

    public init(_ store: any Store) { self.store = store }

    /// Runs statements one after another in one transaction per statement.
    public func execute(_ sql: String, _ arguments: [any SQLArgument] = []) async throws {
        _ = try await self.rows(sql, arguments)
    }

    /// The first column of every row, as integers (`nil` for NULL).
    public func ints(_ sql: String, _ arguments: [any SQLArgument] = []) async throws -> [Int64?] {
        try await self.rows(sql, arguments).map { $0.first.flatMap { $0 }.flatMap { value in
            switch value { case .int(let n): n; case .double(let d): Int64(d); default: nil }
        } }
    }

    /// The first column of the first row as an integer.
    public func int(_ sql: String, _ arguments: [any SQLArgument] = []) async throws -> Int? {
        try await self.ints(sql, arguments).first.flatMap { $0 }.map(Int.init)
    }

    /// The first column of every row, as text.
    public func strings(_ sql: String, _ arguments: [any SQLArgument] = []) async throws -> [String] {
        try await self.rows(sql, arguments).compactMap { row in
            if case .text(let s)? = row.first { s } else { nil }
        }
    }

    /// Adds users with these ids (username `rider<id>`), as a scenario's riders.
    public func addRiders(_ ids: some Sequence<Int64>) async throws {
        for id in ids {
            try await self.execute("INSERT INTO users (id, username, display_name, password_hash, role, created_at) VALUES (?, ?, 'R', 'x', 'member', 0)",
                                   [id, "rider\(id)"])
        }
    }

    private func rows(_ sql: String, _ given: [any SQLArgument]) async throws -> [[SQLValue]] {
        let arguments = given.map(\.sqlValue)
        switch self.store {
        case let store as SpatiaLiteStore:
            return try await store.pool.write { db in
                let values: [(any DatabaseValueConvertible)?] = arguments.map { value in
                    switch value {
                    case .int(let n): n
                    case .double(let d): d
                    case .text(let s): s
                    case .null: nil
                    }
                }
                return try Row.fetchAll(db, sql: sql, arguments: StatementArguments(values)).map { row in
                    (0..<row.count).map { index in
                        switch row[index] as DatabaseValue {
                        case let v where v.isNull: .null
                        case let v: Int64.fromDatabaseValue(v).map { .int($0) }
                            ?? Double.fromDatabaseValue(v).map { .double($0) } ?? String.fromDatabaseValue(v).map { .text($0) } ?? .null
                        }
                    }
                }
            }
        case let store as PostgresStore:
            var bindings = PostgresBindings()
            for value in arguments {
                switch value {
                case .int(let n): bindings.append(n)
                case .double(let d): bindings.append(d)
                case .text(let s): bindings.append(s)
                case .null: bindings.appendNull()
                }
            }
            var numbered = ""
            var n = 0
            for character in sql {
                if character == "?" {
                    n += 1
                    numbered += "$\(n)"
                } else {
                    numbered.append(character)
                }
            }
            return try await store.execute(unsafeSQL: numbered, bindings).map { row in
                row.map { cell in
                    guard cell.bytes != nil else { return .null }
                    if let n = try? cell.decode(Int64.self) { return .int(n) }
                    if let n = try? cell.decode(Int32.self) { return .int(Int64(n)) }
                    if let n = try? cell.decode(Int16.self) { return .int(Int64(n)) }
                    if let d = try? cell.decode(Double.self) { return .double(d) }
                    if let b = try? cell.decode(Bool.self) { return .int(b ? 1 : 0) }
                    if let s = try? cell.decode(String.self) { return .text(s) }
                    return .null
                }
            }
        default:
            fatalError("no SQL for \(type(of: self.store))")
        }
    }
}
