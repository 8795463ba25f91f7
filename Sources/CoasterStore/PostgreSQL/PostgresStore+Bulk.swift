import CoasterCore
import Foundation
import PostgresNIO

/// Bulk loads write each chunk with a few `unnest` statements (one a table), not a statement a
/// row, in transactions without the request deadline: a chunk of 50,000 users, or the 500,000
/// friendships that go with them, takes longer than any request may.
extension PostgresStore: BulkStore {
    /// Writes users, their latest positions, visits, sessions and friendships straight into the
    /// store, in transactions of `chunk` users: for loading a generated world or an export, not for
    /// serving requests (no validation beyond the schema's).
    ///
    /// Users keep the ids given; the `users` identity then moves past the largest, so the next
    /// account created gets a new id rather than a duplicate key.
    public func bulkLoad(users: [BulkUser], friendships: [(UserID, UserID)], chunk: Int,
                         progress: (@Sendable (String) -> Void)? = nil) async throws {
        let now = self.now().timeIntervalSince1970
        try await self.writeInChunks(users, of: chunk, "users", progress: progress) { tx, slice in
            try await tx.run("""
                INSERT INTO users (id, username, display_name, password_hash, role, created_at)
                SELECT u.id, u.username, u.display_name, u.password_hash, 'member', \(now)
                FROM unnest(\(slice.map(\.id.rawValue))::bigint[], \(slice.map(\.username))::text[], \(slice.map(\.displayName))::text[],
                            \(slice.map(\.passwordHash))::text[]) AS u(id, username, display_name, password_hash)
                """)
            let located = slice.filter { $0.latest != nil }
            if !located.isEmpty {
                let fixes = located.map { $0.latest! }
                try await tx.run("""
                    INSERT INTO track_state (user_id, lat, lon, accuracy, recorded_at, parks, zones)
                    SELECT * FROM unnest(\(located.map(\.id.rawValue))::bigint[], \(fixes.map(\.position.lat))::float8[],
                                         \(fixes.map(\.position.lon))::float8[], \(fixes.map(\.accuracy))::float8[],
                                         \(fixes.map(\.recordedAt.timeIntervalSince1970))::float8[],
                                         \(located.map { user in user.visits.map { $0.0.rawValue }.sorted().joined(separator: "\n") })::text[],
                                         \(located.map { user in user.zones.map(\.rawValue).sorted().joined(separator: "\n") })::text[])
                    """)
            }
            let visits = slice.flatMap { user in user.visits.map { (user: user.id.rawValue, park: $0.0.rawValue, at: $0.1.timeIntervalSince1970) } }
            if !visits.isEmpty {
                try await tx.run("""
                    INSERT INTO visits (user_id, park_id, how, entered_at, last_evidence_at)
                    SELECT v.user_id, v.park_id, 'automatic', v.at, v.at
                    FROM unnest(\(visits.map(\.user))::bigint[], \(visits.map(\.park))::text[], \(visits.map(\.at))::float8[])
                         WITH ORDINALITY AS v(user_id, park_id, at, n)
                    ORDER BY v.n
                    """)
            }
            let sessions = slice.compactMap { user in user.tokenHash.map { (user: user.id.rawValue, hash: ByteBuffer(bytes: $0)) } }
            if !sessions.isEmpty {
                try await tx.run("""
                    INSERT INTO sessions (token_hash, user_id, created_at, expires_at)
                    SELECT s.token_hash, s.user_id, \(now), \(now + 30 * 24 * 3600)
                    FROM unnest(\(sessions.map(\.hash))::bytea[], \(sessions.map(\.user))::bigint[]) AS s(token_hash, user_id)
                    """)
            }
            // Only ever forward: a sequence already past the largest id (accounts created and
            // deleted) keeps its place, so no id is handed out twice.
            try await tx.run("""
                SELECT setval(s.seq, s.largest) FROM (
                    SELECT pg_get_serial_sequence('users', 'id')::regclass AS seq, (SELECT max(id) FROM users) AS largest
                ) s
                WHERE s.largest > coalesce(pg_sequence_last_value(s.seq), 0)
                """)
        }
        // A pair already there, or given twice, or a user with themselves, is skipped, as SQLite's
        // INSERT OR IGNORE skips a row against a unique key or a CHECK.
        try await self.writeInChunks(friendships, of: chunk * 10, "friendships", progress: progress) { tx, slice in
            try await tx.run("""
                INSERT INTO friendships (requester, addressee, status, created_at, accepted_at)
                SELECT f.requester, f.addressee, 'accepted', \(now), \(now)
                FROM unnest(\(slice.map { $0.0.rawValue })::bigint[], \(slice.map { $0.1.rawValue })::bigint[]) AS f(requester, addressee)
                WHERE f.requester <> f.addressee
                ON CONFLICT (requester, addressee) DO NOTHING
                """)
        }
    }

    /// Writes ride logs and counts them on the leaderboards by the ride log's own rule
    /// (``tally(_:_:)``), in transactions of `chunk` rides; each user's rides in the order they
    /// were ridden (a coaster's first ride of a period is a credit). Badges are not awarded, nor
    /// visits or cooldowns checked: for loading a generated world or an export.
    ///
    /// The logs are written first, their ids in the order given, then tallied as logs with those
    /// ids: a log's earlier rides are those with lower ids, the same ones the SpatiaLite store
    /// finds by tallying each ride before writing it. Takes the settler's lock and the ride logs'
    /// (``PostgresLock/settling``, ``PostgresLock/rideLogs``): the chunk counts its own logs and
    /// marks them settled, and no settler may count them again.
    public func bulkLogRides(_ rides: [BulkRide], chunk: Int, progress: (@Sendable (String) -> Void)? = nil) async throws {
        try await self.writeInChunks(rides, of: chunk, "ride logs", progress: progress) { tx, slice in
            try await tx.lock(.settling)
            try await tx.lock(.rideLogs)
            let ids = try await tx.rows("""
                INSERT INTO ride_logs (user_id, ride_id, ridden_at)
                SELECT r.user_id, r.ride_id, r.ridden_at
                FROM unnest(\(slice.map(\.user.rawValue))::bigint[], \(slice.map(\.ride.id.rawValue))::text[],
                            \(slice.map(\.at.timeIntervalSince1970))::float8[]) WITH ORDINALITY AS r(user_id, ride_id, ridden_at, n)
                ORDER BY r.n
                RETURNING id
                """).map { try $0.decode(Int64.self) }.sorted()
            // Identities are handed out in the order the rows are inserted: the smallest id is the first ride.
            let logs = zip(ids, slice).map { id, ride in
                TallyLog(id: id, user: ride.user, ride: ride.ride.id, park: ride.ride.park, isCoaster: ride.ride.type == .coaster,
                         at: ride.at.timeIntervalSince1970)
            }
            try await Self.tally(logs, tx)
            try await Self.markTalliesSettled(tx)
        }
    }

    /// Writes messages in the order given (their ids follow it), in transactions of `chunk`
    /// messages. Friendships are not checked, nor anyone told: for loading a generated world or
    /// an export.
    public func bulkSendMessages(_ messages: [BulkMessage], chunk: Int, progress: (@Sendable (String) -> Void)? = nil) async throws {
        try await self.writeInChunks(messages, of: chunk, "messages", progress: progress) { tx, slice in
            try await tx.run("""
                INSERT INTO messages (sender, recipient, body, sent_at, read_at)
                SELECT m.sender, m.recipient, m.body, m.sent_at, m.read_at
                FROM unnest(\(slice.map(\.sender.rawValue))::bigint[], \(slice.map(\.recipient.rawValue))::bigint[],
                            \(slice.map(\.body))::text[], \(slice.map(\.sentAt.timeIntervalSince1970))::float8[],
                            \(NullableArray(slice.map { $0.readAt?.timeIntervalSince1970 }))::float8[])
                     WITH ORDINALITY AS m(sender, recipient, body, sent_at, read_at, n)
                ORDER BY m.n
                """)
        }
    }

    /// Writes posts, then comments on them, each in the order given, in transactions of `chunk`
    /// rows, with the rows the single writes write (``BulkStore/bulkLoadPosts(_:comments:chunk:progress:)``):
    /// a statement a table a chunk. The counts are the schema's statement triggers' (each locks
    /// the chunk's posts in id order once); the search vectors are generated columns; the tables
    /// are analysed at the end. Returns the posts' ids.
    @discardableResult
    public func bulkLoadPosts(_ posts: [BulkPost], comments: [BulkComment], chunk: Int,
                              progress: (@Sendable (String) -> Void)? = nil) async throws -> [Int64] {
        let catalogue = try await self.read { tx in
            BulkPosts.Catalogue(parks: try await tx.rows("SELECT id FROM catalog_parks").map { try $0.decode(String.self) },
                                rides: try await tx.rows("SELECT id, ride_id, park_id FROM catalog_rides").map {
                                    let (id, ride, park) = try $0.decode((String, String?, String).self)
                                    return (id, ride, park)
                                })
        }
        let tags = try BulkPosts.tags(of: posts, comments: comments, catalogue: catalogue)
        let chunk = max(chunk, 1)
        var ids: [Int64] = []
        ids.reserveCapacity(posts.count)
        for start in stride(from: 0, to: posts.count, by: chunk) {
            let range = start..<min(start + chunk, posts.count)
            let slice = Array(posts[range]), sliceTags = Array(tags[range])
            let documents = await BulkPosts.searchDocuments(slice.map(\.text))
            ids += try await self.unbounded { tx -> [Int64] in
                // Identities are handed out in the order the rows are inserted: sorted, the ids
                // are the posts' in the order given.
                let written = try await tx.rows("""
                    INSERT INTO posts (author_id, body, search_doc, visibility, created_at)
                    SELECT p.author_id, p.body, p.search_doc, p.visibility, p.created_at
                    FROM unnest(\(slice.map(\.author.rawValue))::bigint[], \(slice.map(\.text))::text[], \(documents)::text[],
                                \(slice.map(\.visibility.rawValue))::text[], \(slice.map(\.createdAt.timeIntervalSince1970))::float8[])
                         WITH ORDINALITY AS p(author_id, body, search_doc, visibility, created_at, n)
                    ORDER BY p.n
                    RETURNING id
                    """).map { try $0.decode(Int64.self) }.sorted()
                var post: [Int64] = [], kind: [String] = [], value: [String] = [], position: [Int] = []
                for (id, rows) in zip(written, sliceTags) {
                    for t in rows {
                        post.append(id)
                        kind.append(t.kind)
                        value.append(t.value)
                        position.append(t.position)
                    }
                }
                if !post.isEmpty {
                    try await tx.run("""
                        INSERT INTO post_tags (post_id, kind, value, position)
                        SELECT * FROM unnest(\(post)::bigint[], \(kind)::text[], \(value)::text[], \(position)::int[])
                        """)
                }
                return written
            }
            progress?("posts \(range.upperBound)/\(posts.count)")
        }
        let postIDs = ids
        for start in stride(from: 0, to: comments.count, by: chunk) {
            let range = start..<min(start + chunk, comments.count)
            let slice = Array(comments[range])
            let documents = await BulkPosts.searchDocuments(slice.map(\.text))
            try await self.unbounded { tx in
                try await tx.run("""
                    INSERT INTO comments (post_id, author_id, body, search_doc, created_at)
                    SELECT c.post_id, c.author_id, c.body, c.search_doc, c.created_at
                    FROM unnest(\(slice.map { postIDs[$0.post] })::bigint[], \(slice.map(\.author.rawValue))::bigint[], \(slice.map(\.text))::text[],
                                \(documents)::text[], \(slice.map(\.createdAt.timeIntervalSince1970))::float8[])
                         WITH ORDINALITY AS c(post_id, author_id, body, search_doc, created_at, n)
                    ORDER BY c.n
                    """)
            }
            progress?("comments \(range.upperBound)/\(comments.count)")
        }
        // The planner's statistics of the tables, now: until autovacuum's next pass a search
        // filtered by a park was planned without them (a nested loop over every hit: 0.86 s
        // against 47 ms on 5,000 posts).
        try await self.unbounded { tx in try await tx.run("ANALYZE posts, post_tags, comments") }
        return ids
    }

    /// Writes `items` in transactions of `chunk`, each by `write`, reporting "`what` n/total"
    /// after each.
    private func writeInChunks<Item: Sendable>(_ items: [Item], of chunk: Int, _ what: String, progress: (@Sendable (String) -> Void)?,
                                               _ write: @escaping @Sendable (PostgresTransaction, ArraySlice<Item>) async throws -> Void) async throws {
        for start in stride(from: 0, to: items.count, by: max(chunk, 1)) {
            let end = min(start + max(chunk, 1), items.count)
            let slice = items[start..<end]
            try await self.unbounded { tx in try await write(tx, slice) }
            progress?("\(what) \(end)/\(items.count)")
        }
    }
}
