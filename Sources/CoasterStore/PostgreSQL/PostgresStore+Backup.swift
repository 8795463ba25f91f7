import CoasterCore
import Foundation
import PostgresNIO

extension PostgresStore: BackupStore {
    /// A consistent copy of the database at `destination`, taken while the service keeps serving:
    /// `pg_dump --format=custom` (restore it with `pg_restore`), with the photo files it references
    /// copied beside it under `photos/`, as the SpatiaLite store's backup lays them out.
    ///
    /// PostgreSQL has no backup inside the store, so this runs the `pg_dump` found on `PATH`, which
    /// must be of the server's major version. The dump and the list of photos share one snapshot: a
    /// read-only transaction exports its snapshot (`pg_export_snapshot()`), reads the photos, copies
    /// their files, and stays open while `pg_dump --snapshot` dumps exactly what it saw. A photo
    /// deleted, with its file, after the snapshot cannot be taken out of a dump as the SpatiaLite
    /// store takes it out of its copy, so the backup starts again from a newer snapshot (three
    /// times at most): the dump never holds a photo whose file is not beside it, and nothing is
    /// left out. The dump is read back (`pg_restore --list`) before it is moved into place.
    ///
    /// The connection's password reaches `pg_dump` in its environment (`PGPASSWORD`), never on its
    /// command line, where other users of the machine could read it.
    public func backup(to destination: String) async throws -> BackupSummary {
        let start = Date()
        let server = try await self.single { tx in
            try await tx.one("SELECT current_setting('server_version_num')::int / 10000, current_setting('server_version')")
                .decode((Int, String).self)
        }
        let tools = try await PostgresClientTools.find(forServer: server)
        let fm = FileManager.default
        let target = URL(fileURLWithPath: destination)
        try fm.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        let temporary = target.deletingLastPathComponent().appendingPathComponent(".\(target.lastPathComponent).\(UUID().uuidString).partial")
        defer { try? fm.removeItem(at: temporary) }
        let photoSource = self.photoDirectory
        let photoTarget = target.deletingLastPathComponent().appendingPathComponent("photos", isDirectory: true)
        let arguments = ["--format=custom", "--no-password", "--file=\(temporary.path)"] + (self.location.schema.map { ["--schema=\($0)"] } ?? [])
        let environment = Self.clientEnvironment(self.location)

        var copied = 0
        var dumped = false
        for _ in 1...3 where !dumped {
            let attempt = try await self.unbounded(begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") { tx in
                let snapshot = try await tx.one("SELECT pg_export_snapshot()").decode(String.self)
                let photos = try await tx.rows("SELECT DISTINCT sha256, format FROM photos").compactMap { row in
                    // The formats are the schema's CHECK's, so every row has one.
                    let (sha, format) = try row.decode((String, String).self)
                    return InspectedImage.Format(rawValue: format).map { (sha, $0) }
                }
                let files = try Self.copyPhotoFiles(photos, from: photoSource, to: photoTarget)
                guard files.gone == 0 else { return files }
                try await tools.dump(arguments + ["--snapshot=\(snapshot)"], environment: environment)
                return files
            }
            copied += attempt.copied
            dumped = attempt.gone == 0
        }
        guard dumped else {
            throw PostgresBackupError("photos were deleted while their files were being copied, on three tries in a row: run the backup again")
        }
        try await tools.checkArchive(temporary)
        if fm.fileExists(atPath: target.path) { try fm.removeItem(at: target) }
        try fm.moveItem(at: temporary, to: target)
        let size = (try? fm.attributesOfItem(atPath: target.path)[.size] as? Int) ?? 0
        return BackupSummary(path: target.path, bytes: size, photos: copied, photosLeftOut: 0, seconds: Date().timeIntervalSince(start))
    }

    /// Copies each photo's file from the store's photo directory to a backup's, unless it is there
    /// already (a backup before this one copied it); `gone` counts the files no longer there to copy.
    private static func copyPhotoFiles(_ photos: [(String, InspectedImage.Format)], from source: URL,
                                       to target: URL) throws -> (copied: Int, gone: Int) {
        let fm = FileManager.default
        var copied = 0, gone = 0
        for (sha, format) in photos {
            let from = PhotoFiles.url(sha, format, under: source), to = PhotoFiles.url(sha, format, under: target)
            if from.standardizedFileURL == to.standardizedFileURL || fm.fileExists(atPath: to.path) { continue }
            guard fm.fileExists(atPath: from.path) else {
                gone += 1
                continue
            }
            try fm.createDirectory(at: to.deletingLastPathComponent(), withIntermediateDirectories: true)
            do {
                try fm.copyItem(at: from, to: to)
            } catch where !fm.fileExists(atPath: from.path) {
                gone += 1  // deleted while it was being copied
                try? fm.removeItem(at: to)
                continue
            }
            copied += 1
        }
        return (copied, gone)
    }

    /// The environment of a PostgreSQL client tool connecting where the store connects: libpq's
    /// variables, the password among them. Variables that would send it to another server (a
    /// service file, a host address) are dropped.
    static func clientEnvironment(_ location: PostgresLocation) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        for name in ["PGSERVICE", "PGSERVICEFILE", "PGHOSTADDR"] { environment[name] = nil }
        if let socket = location.unixSocketPath {
            environment["PGHOST"] = URL(fileURLWithPath: socket).deletingLastPathComponent().path
        } else {
            environment["PGHOST"] = location.host
        }
        environment["PGPORT"] = String(location.port)
        environment["PGUSER"] = location.user
        environment["PGDATABASE"] = location.database
        environment["PGSSLMODE"] = location.tls.rawValue
        environment["PGCONNECT_TIMEOUT"] = String(location.connectTimeout)
        environment["PGAPPNAME"] = "coasterlife-backup"
        if let password = location.password { environment["PGPASSWORD"] = password }
        return environment
    }

    /// `["ok"]`, or a sentence for each problem found, from a check of the schema that reads the
    /// catalogue, not the data (a few milliseconds whatever the database's size):
    /// - every table, index, trigger and function the migrations create is in the store's schema;
    /// - no index of it is left invalid (a `CREATE INDEX CONCURRENTLY` or `REINDEX` that failed);
    /// - every migration is recorded as applied, and PostGIS is installed;
    /// - `tally_mark` holds its one row, and the `users` identity is past the largest user id (a
    ///   bulk load that gave ids moves it on; behind it, the next account would collide).
    ///
    /// Pages are not read: PostgreSQL's own data checksums (`initdb --data-checksums`) and
    /// amcheck's `bt_index_check` are the tools for that, and amcheck is an extension the store
    /// does not require.
    public func integrityCheck() async throws -> [String] {
        let objects = PostgresSchemaObjects.all
        let migrations = PostgresSchema.migrations.map(\.identifier)
        return try await self.read { tx in
            let schema = "(SELECT oid FROM pg_namespace WHERE nspname = current_schema())"
            let missing = try await tx.rows("""
                SELECT e.kind || ' ' || e.name || ' is missing'
                FROM unnest(\(objects.map(\.kind))::text[], \(objects.map(\.name))::text[]) WITH ORDINALITY AS e(kind, name, n)
                WHERE NOT CASE e.kind
                    WHEN 'table' THEN EXISTS (SELECT 1 FROM pg_class c
                                              WHERE c.relnamespace = \(unescaped: schema) AND c.relname = e.name AND c.relkind = 'r')
                    WHEN 'index' THEN EXISTS (SELECT 1 FROM pg_class c
                                              WHERE c.relnamespace = \(unescaped: schema) AND c.relname = e.name AND c.relkind = 'i')
                    WHEN 'trigger' THEN EXISTS (SELECT 1 FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
                                                WHERE c.relnamespace = \(unescaped: schema) AND t.tgname = e.name)
                    ELSE EXISTS (SELECT 1 FROM pg_proc p WHERE p.pronamespace = \(unescaped: schema) AND p.proname = e.name)
                END
                ORDER BY e.n
                """).map { try $0.decode(String.self) }
            // The checks below read tables that must be there.
            guard missing.isEmpty else { return missing }
            let problems = try await tx.rows("""
                SELECT 'index ' || c.relname || ' is not valid: rebuild it (REINDEX INDEX ' || c.relname || ')'
                FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
                WHERE c.relnamespace = \(unescaped: schema) AND NOT (i.indisvalid AND i.indisready)
                UNION ALL
                SELECT 'migration "' || m || '" is not recorded as applied'
                FROM unnest(\(migrations)::text[]) AS m WHERE NOT EXISTS (SELECT 1 FROM schema_migrations s WHERE s.identifier = m)
                UNION ALL
                SELECT 'PostGIS is not installed in this database' WHERE NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'postgis')
                UNION ALL
                SELECT 'tally_mark has no row: settling the leaderboards cannot keep its place'
                WHERE NOT EXISTS (SELECT 1 FROM tally_mark WHERE id = 1)
                UNION ALL
                SELECT 'the users id sequence is behind the largest user id ' || s.largest || ': the next account would collide'
                FROM (SELECT pg_get_serial_sequence('users', 'id')::regclass AS seq, (SELECT max(id) FROM users) AS largest) s
                WHERE s.largest > coalesce(pg_sequence_last_value(s.seq), 0)
                """).map { try $0.decode(String.self) }
            return problems.isEmpty ? ["ok"] : problems
        }
    }

    /// Row counts of the tables that hold users' writes, for comparing a backup with its source:
    /// the same tables as the SpatiaLite store's, counted in one statement.
    public func tableCounts() async throws -> [String: Int] {
        let tables = CountedTables.names
        // Table names from the constant list above, never from input.
        let sql = "SELECT " + tables.map { "(SELECT count(*) FROM \($0))" }.joined(separator: ", ")
        return try await self.single { tx in
            let row = try await tx.one(PostgresQuery(unsafeSQL: sql)).makeRandomAccess()
            var counts: [String: Int] = [:]
            for (i, table) in tables.enumerated() { counts[table] = try row[i].decode(Int.self) }
            return counts
        }
    }
}

/// Why a PostgreSQL backup could not be made: a sentence for the operator.
public struct PostgresBackupError: Error, Equatable, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// The objects the store's migrations create, by kind (`table`, `index`, `trigger`, `function`)
/// and name, read from the migrations' statements themselves.
enum PostgresSchemaObjects {
    static let all: [(kind: String, name: String)] = {
        var objects: [(kind: String, name: String)] = [("table", "schema_migrations")]
        let patterns: [(String, Regex<(Substring, Substring)>)] = [
            ("table", /CREATE\s+TABLE\s+(\w+)/),
            ("index", /CREATE\s+(?:UNIQUE\s+)?INDEX\s+(\w+)/),
            ("trigger", /CREATE\s+TRIGGER\s+(\w+)/),
            ("function", /CREATE\s+FUNCTION\s+(\w+)/),
        ]
        for migration in PostgresSchema.migrations {
            for statement in migration.statements {
                for (kind, pattern) in patterns {
                    for match in statement.matches(of: pattern) { objects.append((kind, String(match.output.1))) }
                }
            }
        }
        return objects
    }()
}

/// `pg_dump` and `pg_restore`, as found on `PATH`, of the server's major version.
private struct PostgresClientTools: Sendable {
    let pgDump: URL
    let pgRestore: URL

    /// The tools on `PATH`, refused with a sentence when missing or of another major version
    /// than the server's (`server`: its major version and full version string).
    static func find(forServer server: (major: Int, version: String)) async throws -> PostgresClientTools {
        let package = "postgresql-client-\(server.major)"
        guard let pgDump = Self.onPath("pg_dump") else {
            throw PostgresBackupError("""
                pg_dump was not found on PATH: backing up PostgreSQL runs pg_dump, which comes with the PostgreSQL \
                client tools (Debian/Ubuntu: apt-get install \(package))
                """)
        }
        let beside = pgDump.deletingLastPathComponent().appendingPathComponent("pg_restore")
        guard let pgRestore = FileManager.default.isExecutableFile(atPath: beside.path) ? beside : Self.onPath("pg_restore") else {
            throw PostgresBackupError("pg_restore was not found beside \(pgDump.path) or on PATH: install \(package)")
        }
        let (status, output, _) = try await Self.run(pgDump, ["--version"])
        // "pg_dump (PostgreSQL) 15.20 (Debian 15.20-0+deb12u1)"
        let major = output.firstMatch(of: /\(PostgreSQL\)\s+(\d+)/).flatMap { Int($0.output.1) }
        guard status == 0, let major else {
            throw PostgresBackupError("\(pgDump.path) --version did not say which PostgreSQL it belongs to: \(output.prefix(200))")
        }
        guard major == server.major else {
            throw PostgresBackupError("""
                \(pgDump.path) is pg_dump \(major), but the server runs PostgreSQL \(server.version): install pg_dump \(server.major) \
                (Debian/Ubuntu: apt-get install \(package)) and put it first on PATH
                """)
        }
        return PostgresClientTools(pgDump: pgDump, pgRestore: pgRestore)
    }

    /// Runs `pg_dump` with `arguments`; throws with what it wrote to standard error if it fails.
    func dump(_ arguments: [String], environment: [String: String]) async throws {
        let (status, _, errors) = try await Self.run(self.pgDump, arguments, environment: environment)
        guard status == 0 else {
            throw PostgresBackupError("pg_dump failed (exit status \(status)): \(errors.trimmingCharacters(in: .whitespacesAndNewlines).suffix(2000))")
        }
    }

    /// Reads an archive's table of contents back (`pg_restore --list`): a dump cut short or damaged
    /// does not read.
    func checkArchive(_ archive: URL) async throws {
        let (status, _, errors) = try await Self.run(self.pgRestore, ["--list", archive.path])
        guard status == 0 else {
            throw PostgresBackupError("""
                the dump does not read back (pg_restore --list, exit status \(status)): \
                \(errors.trimmingCharacters(in: .whitespacesAndNewlines).suffix(2000))
                """)
        }
    }

    private static func onPath(_ tool: String) -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") where !directory.isEmpty {
            let candidate = URL(fileURLWithPath: String(directory), isDirectory: true).appendingPathComponent(tool)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }

    /// Runs a tool to its end without holding a thread while it runs. Its output goes to files, not
    /// pipes, so a tool that writes much cannot stall on a full pipe nobody reads yet.
    private static func run(_ tool: URL, _ arguments: [String],
                            environment: [String: String]? = nil) async throws -> (status: Int32, output: String, errors: String) {
        let fm = FileManager.default
        let base = fm.temporaryDirectory.appendingPathComponent("coasterlife-\(tool.lastPathComponent)-\(UUID().uuidString)")
        let outputFile = base.appendingPathExtension("out"), errorFile = base.appendingPathExtension("err")
        guard fm.createFile(atPath: outputFile.path, contents: nil), fm.createFile(atPath: errorFile.path, contents: nil) else {
            throw PostgresBackupError("cannot create a file in \(fm.temporaryDirectory.path) for the output of \(tool.lastPathComponent)")
        }
        defer {
            try? fm.removeItem(at: outputFile)
            try? fm.removeItem(at: errorFile)
        }
        let output = try FileHandle(forWritingTo: outputFile), errors = try FileHandle(forWritingTo: errorFile)
        defer {
            try? output.close()
            try? errors.close()
        }
        let process = Process()
        process.executableURL = tool
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = errors
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: PostgresBackupError("cannot run \(tool.path): \(error.localizedDescription)"))
            }
        }
        let read = { (url: URL) in (try? String(contentsOf: url, encoding: .utf8)) ?? "" }
        return (status, read(outputFile), read(errorFile))
    }
}
