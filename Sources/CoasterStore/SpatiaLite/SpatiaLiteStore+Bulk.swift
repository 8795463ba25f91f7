import CoasterCore
import Foundation
import GRDB

extension SpatiaLiteStore {
    /// Writes users, their latest positions, visits, sessions and friendships straight into the
    /// store, in transactions of `chunk` users: for loading a generated world or an export, not for
    /// serving requests (no validation beyond the schema's).
    public func bulkLoad(users: [BulkUser], friendships: [(UserID, UserID)], chunk: Int,
                         progress: (@Sendable (String) -> Void)? = nil) async throws {
        let now = self.now().timeIntervalSince1970
        try await self.writeInChunks(users, of: chunk, "users", progress: progress) { db, slice in
            let user = try db.cachedStatement(sql: """
                INSERT INTO users (id, username, display_name, password_hash, role, created_at) VALUES (?, ?, ?, ?, 'member', ?)
                """)
            let state = try db.cachedStatement(sql: """
                INSERT INTO track_state (user_id, lat, lon, accuracy, recorded_at, parks, zones) VALUES (?, ?, ?, ?, ?, ?, ?)
                """)
            let visit = try db.cachedStatement(sql: """
                INSERT INTO visits (user_id, park_id, how, entered_at, last_evidence_at) VALUES (?, ?, 'automatic', ?, ?)
                """)
            let session = try db.cachedStatement(sql: "INSERT INTO sessions (token_hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)")
            for u in slice {
                try user.execute(arguments: [u.id.rawValue, u.username, u.displayName, u.passwordHash, now])
                if let fix = u.latest {
                    try state.execute(arguments: [u.id.rawValue, fix.position.lat, fix.position.lon, fix.accuracy, fix.recordedAt.timeIntervalSince1970,
                                                  u.visits.map(\.0.rawValue).sorted().joined(separator: "\n"),
                                                  u.zones.map(\.rawValue).sorted().joined(separator: "\n")])
                }
                for (park, at) in u.visits {
                    try visit.execute(arguments: [u.id.rawValue, park.rawValue, at.timeIntervalSince1970, at.timeIntervalSince1970])
                }
                if let hash = u.tokenHash {
                    try session.execute(arguments: [hash, u.id.rawValue, now, now + 30 * 24 * 3600])
                }
            }
        }
        try await self.writeInChunks(friendships, of: chunk * 10, "friendships", progress: progress) { db, slice in
            let insert = try db.cachedStatement(sql: """
                INSERT OR IGNORE INTO friendships (requester, addressee, status, created_at, accepted_at) VALUES (?, ?, 'accepted', ?, ?)
                """)
            for (a, b) in slice { try insert.execute(arguments: [a.rawValue, b.rawValue, now, now]) }
        }
    }

    /// Writes `items` in transactions of `chunk`, each by `write`, reporting "`what` n/total"
    /// after each.
    private func writeInChunks<Item: Sendable>(_ items: [Item], of chunk: Int, _ what: String, progress: (@Sendable (String) -> Void)?,
                                               _ write: @escaping @Sendable (Database, ArraySlice<Item>) throws -> Void) async throws {
        for start in stride(from: 0, to: items.count, by: chunk) {
            let end = min(start + chunk, items.count)
            let slice = items[start..<end]
            try await self.pool.write { db in try write(db, slice) }
            progress?("\(what) \(end)/\(items.count)")
        }
    }
}

extension SpatiaLiteStore {
    /// Writes ride logs and counts them on the leaderboards by the ride log's own rule
    /// (``tally(user:ride:at:_:)``), in transactions of `chunk` rides; each user's rides in the
    /// order they were ridden (a coaster's first ride of a period is a credit). Badges are not
    /// awarded, nor visits or cooldowns checked: for loading a generated world or an export.
    public func bulkLogRides(_ rides: [BulkRide], chunk: Int, progress: (@Sendable (String) -> Void)? = nil) async throws {
        try await self.writeInChunks(rides, of: chunk, "ride logs", progress: progress) { db, slice in
            let insert = try db.cachedStatement(sql: "INSERT INTO ride_logs (user_id, ride_id, ridden_at) VALUES (?, ?, ?)")
            for r in slice {
                try Self.tally(user: r.user, ride: r.ride, at: r.at, db)
                try insert.execute(arguments: [r.user.rawValue, r.ride.id.rawValue, r.at.timeIntervalSince1970])
            }
            try Self.markTalliesSettled(db)
        }
    }
}

extension SpatiaLiteStore {
    /// Writes messages in the order given (their ids follow it), in transactions of `chunk`
    /// messages. Friendships are not checked, nor anyone told: for loading a generated world or
    /// an export.
    public func bulkSendMessages(_ messages: [BulkMessage], chunk: Int, progress: (@Sendable (String) -> Void)? = nil) async throws {
        try await self.writeInChunks(messages, of: chunk, "messages", progress: progress) { db, slice in
            let insert = try db.cachedStatement(sql: "INSERT INTO messages (sender, recipient, body, sent_at, read_at) VALUES (?, ?, ?, ?, ?)")
            for m in slice {
                try insert.execute(arguments: [m.sender.rawValue, m.recipient.rawValue, m.body, m.sentAt.timeIntervalSince1970,
                                               m.readAt?.timeIntervalSince1970])
            }
        }
    }
}

extension SpatiaLiteStore {
    /// Writes posts, then comments on them, each in the order given, in transactions of `chunk`
    /// rows, with the rows the single writes write (``BulkStore/bulkLoadPosts(_:comments:chunk:progress:)``);
    /// the full-text indexes and the counts are the schema's triggers'. Returns the posts' ids.
    @discardableResult
    public func bulkLoadPosts(_ posts: [BulkPost], comments: [BulkComment], chunk: Int,
                              progress: (@Sendable (String) -> Void)? = nil) async throws -> [Int64] {
        let catalogue = try await self.pool.read { db in
            BulkPosts.Catalogue(parks: try String.fetchAll(db, sql: "SELECT id FROM catalog_parks"),
                                rides: try Row.fetchAll(db, sql: "SELECT id, ride_id, park_id FROM catalog_rides").map { ($0["id"], $0["ride_id"], $0["park_id"]) })
        }
        let tags = try BulkPosts.tags(of: posts, comments: comments, catalogue: catalogue)
        let chunk = max(chunk, 1)
        var ids: [Int64] = []
        ids.reserveCapacity(posts.count)
        for start in stride(from: 0, to: posts.count, by: chunk) {
            let range = start..<min(start + chunk, posts.count)
            let slice = posts[range], sliceTags = tags[range]
            let documents = await BulkPosts.searchDocuments(slice.map(\.text))
            ids += try await self.pool.write { db -> [Int64] in
                let post = try db.cachedStatement(sql: """
                    INSERT INTO posts (author_id, body, search_doc, visibility, created_at) VALUES (?, ?, ?, ?, ?)
                    """)
                let tag = try db.cachedStatement(sql: "INSERT OR IGNORE INTO post_tags (post_id, kind, value, position) VALUES (?, ?, ?, ?)")
                var written: [Int64] = []
                written.reserveCapacity(slice.count)
                for (p, (tags, document)) in zip(slice, zip(sliceTags, documents)) {
                    try post.execute(arguments: [p.author.rawValue, p.text, document, p.visibility.rawValue, p.createdAt.timeIntervalSince1970])
                    let id = db.lastInsertedRowID
                    for t in tags { try tag.execute(arguments: [id, t.kind, t.value, t.position]) }
                    written.append(id)
                }
                return written
            }
            progress?("posts \(range.upperBound)/\(posts.count)")
        }
        let postIDs = ids
        for start in stride(from: 0, to: comments.count, by: chunk) {
            let range = start..<min(start + chunk, comments.count)
            let slice = comments[range]
            let documents = await BulkPosts.searchDocuments(slice.map(\.text))
            try await self.pool.write { db in
                let insert = try db.cachedStatement(sql: "INSERT INTO comments (post_id, author_id, body, search_doc, created_at) VALUES (?, ?, ?, ?, ?)")
                for (c, document) in zip(slice, documents) {
                    try insert.execute(arguments: [postIDs[c.post], c.author.rawValue, c.text, document, c.createdAt.timeIntervalSince1970])
                }
            }
            progress?("comments \(range.upperBound)/\(comments.count)")
        }
        return ids
    }
}

extension SpatiaLiteStore {
    /// The migration a file this code opens ends with: a kept copy of a loaded world is the world
    /// this code would load only if it was written under the same schema.
    public static var schemaVersion: String { Migrations.migrator.migrations.last ?? "none" }

    /// The times the bulk loads write, by table (``bulkLoad(users:friendships:chunk:progress:)``,
    /// ``bulkLogRides(_:chunk:progress:)``, ``bulkSendMessages(_:chunk:progress:)``, and the
    /// parks' import): what ``bulkShiftTimes(by:chunk:progress:)`` moves. The tallies' times are
    /// counted again from the moved ride logs instead.
    static let bulkLoadedTimes: [(table: String, columns: [String])] = [
        ("parks", ["imported_at"]),
        ("users", ["created_at", "last_seen_at", "ghost_until"]),
        ("sessions", ["created_at", "expires_at", "revoked_at"]),
        ("friendships", ["created_at", "accepted_at"]),
        ("track_state", ["recorded_at"]),
        ("visits", ["entered_at", "left_at", "last_evidence_at"]),
        ("ride_logs", ["ridden_at"]),
        ("messages", ["sent_at", "read_at"]),
    ]

    /// Moves every time a bulk load wrote by `seconds`, as if the world had been loaded that much
    /// later, and counts the ride logs on the leaderboards again at their moved times (a ride
    /// moved into another week counts on that week's board, and the tallies' minute slots follow
    /// it), by the ride log's own rule (``tally(user:ride:at:before:_:)``). A world kept on disk
    /// is loaded once and moved to the present before each use: the privacy rule hides positions
    /// older than its time-to-live, and the leaderboards read this week's rides.
    ///
    /// Only a world as the bulk loads left it may be moved: a time this does not move that holds a
    /// value (a fix's, a post's, a follow's), or a ride log not yet counted on the boards, throws
    /// ``StoreError/notABulkLoad(path:table:)`` before anything is written. Each table is moved in
    /// a transaction, reporting "`table`: n rows" after it, and the ride logs are counted again in
    /// transactions of `chunk` logs; a failure part-way leaves a file to throw away, as a bulk
    /// load's would.
    public func bulkShiftTimes(by seconds: Double, chunk: Int = 20_000, progress: (@Sendable (String) -> Void)? = nil) async throws {
        let path = self.path
        try await self.pool.read { db in
            // A time no load writes that holds a value: a row a served request wrote. Times are
            // named `at` or end in `_at` or `_until`.
            let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
            for table in tables where table != "tallies" {
                let moved = Self.bulkLoadedTimes.first { $0.table == table }?.columns ?? []
                let unmoved = try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info(?)", arguments: [table])
                    .filter { ($0 == "at" || $0.hasSuffix("_at") || $0.hasSuffix("_until")) && !moved.contains($0) }
                for column in unmoved {
                    let sql = "SELECT EXISTS (SELECT 1 FROM \(table.quotedDatabaseIdentifier) WHERE \(column.quotedDatabaseIdentifier) IS NOT NULL)"
                    if try Bool.fetchOne(db, sql: sql) ?? false { throw StoreError.notABulkLoad(path: path, table: table) }
                }
            }
            // A ride log a request wrote is counted on the boards when it settles; every ride log
            // of a load is counted as it is written.
            let settled = try Int64.fetchOne(db, sql: "SELECT through_log FROM tally_mark") ?? 0
            if try Int64.fetchOne(db, sql: "SELECT coalesce(max(id), 0) FROM ride_logs") ?? 0 != settled {
                throw StoreError.notABulkLoad(path: path, table: "ride_logs")
            }
        }
        // Each table in one statement, in rowid order, with every index that holds a moved time
        // (or filters on one) dropped first and built again by sorting afterwards: updated in
        // place, such an index (friendships by addressee and time) is written a random page at a
        // time, some hundreds of gigabytes through the log at a million users.
        for (table, columns) in Self.bulkLoadedTimes {
            let moved = try await self.pool.write { db -> Int in
                let indexes = try Row.fetchAll(db, sql: "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL",
                                               arguments: [table])
                    .map { (name: $0["name"] as String, sql: $0["sql"] as String) }
                    .filter { index in columns.contains { index.sql.contains($0) } }
                for index in indexes { try db.execute(sql: "DROP INDEX \(index.name.quotedDatabaseIdentifier)") }
                try db.execute(sql: "UPDATE \(table) SET \(columns.map { "\($0) = \($0) + :seconds" }.joined(separator: ", "))",
                               arguments: ["seconds": seconds])
                let rows = db.changesCount
                for index in indexes { try db.execute(sql: index.sql) }
                return rows
            }
            progress?("\(table): \(moved) rows")
        }
        // Every tally is the ride logs' (bulkLogRides), so they are counted again from nothing.
        try await self.pool.write { db in try db.execute(sql: "DELETE FROM tallies") }
        let logs = try await self.pool.read { db in try Int64.fetchOne(db, sql: "SELECT max(id) FROM ride_logs") } ?? 0
        let retally = max(1, chunk)
        for start in stride(from: Int64(0), to: logs, by: retally) {
            try await self.pool.write { db in
                let rows = try Row.fetchCursor(db, sql: """
                    SELECT l.id, l.user_id, l.ridden_at, r.id AS ride, r.park_id, r.type
                    FROM ride_logs l JOIN rides r ON r.id = l.ride_id WHERE l.id > ? AND l.id <= ? ORDER BY l.id
                    """, arguments: [start, start + Int64(retally)])
                while let row = try rows.next() {
                    let ride = Ride(id: RideID(rawValue: row["ride"] as String), park: ParkID(rawValue: row["park_id"] as String), name: "",
                                    type: RideType(rawValue: row["type"] as String) ?? .other, status: .operating)
                    try Self.tally(user: UserID(row["user_id"] as Int64), ride: ride, at: Date(timeIntervalSince1970: row["ridden_at"]),
                                   before: row["id"], db)
                }
                try Self.markTalliesSettled(db)
            }
            progress?("tallies \(min(start + Int64(retally), logs))/\(logs)")
        }
    }
}
