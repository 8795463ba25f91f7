import CoasterStore
import Testing

/// What a `--database` value names: a URL is never a file name, and a PostgreSQL URL reads as libpq reads it.
@Suite("Store locations")
struct StoreLocationTests {
    @Test func pathsAreSpatiaLiteFiles() throws {
        #expect(try StoreLocation("var/coasterlife.sqlite") == .spatiaLite(path: "var/coasterlife.sqlite"))
        #expect(try StoreLocation("/tmp/a b/x.sqlite") == .spatiaLite(path: "/tmp/a b/x.sqlite"))
        // A colon that is not a scheme's leaves a path a path.
        #expect(try StoreLocation("./backups/2026:11:27.sqlite") == .spatiaLite(path: "./backups/2026:11:27.sqlite"))
    }

    @Test func urlsOfOtherSchemesAreRefusedNotTakenForFiles() {
        for value in ["mysql://u@h/db", "sqlite://x.db", "http://example.com/db", ""] {
            #expect(throws: StoreLocationError.self, "\(value)") { try StoreLocation(value) }
        }
        // `postgres:` without slashes is still a URL (the file it would make is what must not happen).
        #expect(throws: StoreLocationError.self) { try StoreLocation("postgres:") }
        #expect(throws: StoreLocationError.self) { try StoreLocation("postgresql:coaster") }
    }

    @Test func postgresURLsReadAsLibpqReadsThem() throws {
        guard case .postgres(let a) = try StoreLocation("postgres://coaster:p%40ss@db.internal:5433/coasterlife?sslmode=require&pool=8") else {
            Issue.record("not a PostgreSQL location"); return
        }
        #expect(a.user == "coaster" && a.password == "p@ss" && a.host == "db.internal" && a.port == 5433 && a.database == "coasterlife")
        #expect(a.tls == .require && a.poolSize == 8 && a.unixSocketPath == nil)
        #expect(a.description == "postgres://coaster:***@db.internal:5433/coasterlife", "the password is never shown")

        let b = try PostgresLocation(url: "postgresql://coaster@/coasterlife?host=/var/run/postgresql", environment: ["PGPASSWORD": "from-env"])
        #expect(b.unixSocketPath == "/var/run/postgresql/.s.PGSQL.5432" && b.password == "from-env" && b.host == "localhost")

        let c = try PostgresLocation(url: "postgres://u@[::1]/d", environment: [:])
        #expect(c.host == "::1" && c.port == 5432 && c.tls == .prefer && c.password == nil)
        #expect(c.description == "postgres://u@[::1]:5432/d")
    }

    @Test func postgresURLsThatNameTooLittleOrTooMuchAreRefusedWithTheReason() {
        let cases: [(String, String)] = [
            ("postgres://localhost/db", "names no user"),
            ("postgres://u@localhost", "names no database"),
            ("postgres://u@localhost/db?sslmode=maybe", "sslmode=maybe"),
            ("postgres://u@localhost/db?pool=0", "pool=0"),
            ("postgres://u@localhost/db?host=relative", "absolute socket directory"),
            ("postgres://u@localhost/db?colour=blue", "unknown parameter 'colour'"),
            ("postgres://u:secret@localhost:99999/db", "--database postgres://***@localhost:99999/db"),
        ]
        for (url, reason) in cases {
            let error = #expect(throws: StoreLocationError.self) { try PostgresLocation(url: url, environment: [:]) }
            #expect(error?.description.contains(reason) == true, "\(url): \(String(describing: error))")
            #expect(error?.description.contains("secret") == false, "a refusal never shows the password: \(url)")
        }
    }
}
