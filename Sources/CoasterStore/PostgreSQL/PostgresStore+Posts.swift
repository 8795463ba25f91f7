import CoasterCore
import Foundation
import PostgresNIO

/// Trip reports (docs: Posts), with the answers of the SpatiaLite store (``PostStore``).
///
/// Who may read a post is one SQL predicate (``postReadable(_:viewer:)``), used by every statement
/// that shows a post, its comments or its thumbs, or acts on one for someone other than its
/// author. Locks: a post's writes take its author's lock; a thumb or a comment takes its giver's
/// lock and holds the post's row with a key-share lock while it writes beside it, so the post
/// cannot be deleted under it; deleting a comment locks the comment's row. The counts on a post
/// are the schema's triggers' (``PostgresSchema/posts``).
///
/// Search matches the generated `tsvector` of a post's or comment's folded text with a `tsquery`
/// built here from the terms (``postQuery(_:)``: cast, never parsed from what the user typed), as
/// the catalogue does; the newest ``PostRules/searchCandidates`` matches of each index are ranked
/// by `ts_rank`.
extension PostgresStore: PostStore {
    public func createPost(_ draft: PostDraft, author: UserID, now: Date, privacy: LocationPrivacy) async throws -> PostView {
        let t = now.timeIntervalSince1970
        return try await Self.mappingPostRaces {
            try await self.transaction(locking: [author]) { tx in
                guard try await tx.one("SELECT EXISTS (SELECT 1 FROM users WHERE id = \(author.rawValue))").decode(Bool.self)
                else { throw PostError.noSuchUser }
                let tags = try await Self.resolvePostTags(parks: draft.parks, rides: draft.rides, tx)
                try await Self.checkPostPhotos(draft.photos, author: author, tx)
                var visit: Int64?
                if let park = draft.verifiedAt {
                    // The author's newest visit to the park that is going on or ended within the window.
                    visit = try await tx.first("""
                        SELECT id FROM visits
                        WHERE user_id = \(author.rawValue) AND park_id = \(park.rawValue)
                            AND coalesce(left_at, last_evidence_at) >= \(t - PostRules.verificationWindow)
                        ORDER BY entered_at DESC, id DESC LIMIT 1
                        """)?.decode(Int64.self)
                    guard visit != nil else { throw PostError.noVisit(park) }
                }
                let id = try await tx.one("""
                    INSERT INTO posts (author_id, body, search_doc, visibility, visit_id, created_at)
                    VALUES (\(author.rawValue), \(draft.text), \(PostRules.searchDocument(draft.text)), \(draft.visibility.rawValue), \(visit), \(t))
                    RETURNING id
                    """).decode(Int64.self)
                try await Self.writePostPhotos(draft.photos, post: id, tx)
                try await Self.writePostTags(tags, hashtags: draft.hashtags, post: id, tx)
                return try await Self.requirePostView(id, viewer: author, now: now, privacy: privacy, tx)
            }
        }
    }

    public func post(_ id: Int64, viewer: UserID, now: Date, privacy: LocationPrivacy) async throws -> PostView? {
        // Statements of their own, outside a transaction: the second reads the catalogue's rides,
        // which change only by imports.
        try await self.single { tx in
            try await Self.postViews([id], viewer: viewer, now: now, privacy: privacy, readableOnly: true, tx).first
        }
    }

    public func editPost(_ id: Int64, author: UserID, edit: PostEdit, now: Date, privacy: LocationPrivacy) async throws -> PostView {
        let t = now.timeIntervalSince1970
        return try await self.transaction(locking: [author]) { tx in
            try await Self.ownedPost(id, author, tx)
            // The text, the visibility and the mark in one statement: a refusal below rolls it back.
            let body = try await tx.one("""
                UPDATE posts SET body = coalesce(\(edit.text), body), search_doc = coalesce(\(edit.text.map(PostRules.searchDocument)), search_doc),
                    visibility = coalesce(\(edit.visibility?.rawValue), visibility), edited_at = \(t)
                WHERE id = \(id)
                RETURNING body
                """).decode(String.self)
            if let photos = edit.photos {
                try await Self.checkPostPhotos(photos, author: author, tx)
                try await tx.run("DELETE FROM post_photos WHERE post_id = \(id)")
                try await Self.writePostPhotos(photos, post: id, tx)
            }
            if edit.parks != nil || edit.rides != nil || edit.text != nil {
                let current = try await Self.postTagValues(of: id, tx)
                let tags = try await Self.resolvePostTags(parks: edit.parks ?? current.parks, rides: edit.rides ?? current.rides, tx)
                try await tx.run("DELETE FROM post_tags WHERE post_id = \(id)")
                try await Self.writePostTags(tags, hashtags: PostRules.hashtags(in: body), post: id, tx)
            }
            if PostRules.isBlank(body), try await !tx.one("SELECT EXISTS (SELECT 1 FROM post_photos WHERE post_id = \(id))").decode(Bool.self) {
                throw PostError.emptyPost
            }
            return try await Self.requirePostView(id, viewer: author, now: now, privacy: privacy, tx)
        }
    }

    public func deletePost(_ id: Int64, author: UserID) async throws {
        try await self.transaction(locking: [author]) { tx in
            try await Self.ownedPost(id, author, tx)
            // Photos, tags, thumbs and comments go by their foreign keys.
            try await tx.run("DELETE FROM posts WHERE id = \(id)")
        }
    }

    public func feed(_ feed: Feed, viewer: UserID, after: Int64?, since: Int64?, limit: Int, now: Date, privacy: LocationPrivacy) async throws -> [PostView] {
        let limit = max(0, min(limit, PostRules.largestPage))
        // `since` reads upwards from the client's newest (the oldest newer posts first, so a full
        // page leaves no gap); `after` downwards from the last post of the page before.
        let upwards = since != nil
        let bound = since ?? after ?? Int64.max
        let (window, order) = upwards ? (">", "ASC") : ("<", "DESC")
        let v = viewer.rawValue
        return try await self.read { tx in
            let query: PostgresQuery
            switch feed {
            case .home:
                // Each author's newest posts in the window, at most a page each (one index range an
                // author), then the page of them: the work is bounded by the number of people the
                // viewer follows or befriends, not by how much they posted.
                query = """
                    WITH authors(id, everything) AS (
                        SELECT \(v)::bigint, true
                        UNION ALL SELECT addressee, true FROM friendships WHERE requester = \(v) AND status = 'accepted'
                        UNION ALL SELECT requester, true FROM friendships WHERE addressee = \(v) AND status = 'accepted'
                        UNION ALL SELECT followee_id, false FROM user_follows WHERE follower_id = \(v)
                    ), shown(id, everything) AS (
                        SELECT a.id, bool_or(a.everything) FROM authors a
                        WHERE a.id = \(v) OR (NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker = a.id AND b.blocked = \(v))
                                              AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker = \(v) AND b.blocked = a.id))
                        GROUP BY a.id
                    )
                    SELECT q.id FROM shown a CROSS JOIN LATERAL (
                        SELECT q.id FROM posts q
                        WHERE q.author_id = a.id AND q.id \(unescaped: window) \(bound) AND (a.everything OR q.visibility = 'public')
                        ORDER BY q.id \(unescaped: order) LIMIT \(limit)
                    ) q
                    ORDER BY q.id \(unescaped: order) LIMIT \(limit)
                    """
            case .public:
                query = """
                    SELECT p.id FROM posts p, (SELECT \(v)::bigint AS id) w
                    WHERE p.visibility = 'public' AND p.id \(unescaped: window) \(bound) AND \(unescaped: Self.postReadable("p", viewer: "w.id"))
                    ORDER BY p.id \(unescaped: order) LIMIT \(limit)
                    """
            case .user(let author):
                query = """
                    SELECT p.id FROM posts p, (SELECT \(v)::bigint AS id) w
                    WHERE p.author_id = \(author.rawValue) AND p.id \(unescaped: window) \(bound) AND \(unescaped: Self.postReadable("p", viewer: "w.id"))
                    ORDER BY p.id \(unescaped: order) LIMIT \(limit)
                    """
            case .park(let park):
                query = Self.taggedFeed(kind: "about", value: park.rawValue, viewer: viewer, window: window, bound: bound, order: order, limit: limit)
            case .ride(let ride):
                let entry = try await Self.catalogRideID(ride, tx) ?? ride.rawValue
                query = Self.taggedFeed(kind: "ride", value: entry, viewer: viewer, window: window, bound: bound, order: order, limit: limit)
            case .tag(let hashtag):
                query = Self.taggedFeed(kind: "hashtag", value: hashtag, viewer: viewer, window: window, bound: bound, order: order, limit: limit)
            }
            var ids = try await tx.rows(query).map { try $0.decode(Int64.self) }
            if upwards { ids.reverse() }
            return try await Self.postViews(ids, viewer: viewer, now: now, privacy: privacy, tx)
        }
    }

    /// Tagged posts in the window the viewer may read: the tag's index range, newest first (or
    /// oldest first upwards), at most ``PostFeeds/scan(_:)`` rows of it looked at.
    private static func taggedFeed(kind: String, value: String, viewer: UserID, window: String, bound: Int64, order: String,
                                   limit: Int) -> PostgresQuery {
        """
        SELECT p.id
        FROM (SELECT t.post_id FROM post_tags t WHERE t.kind = \(kind) AND t.value = \(value) AND t.post_id \(unescaped: window) \(bound)
              ORDER BY t.post_id \(unescaped: order) LIMIT \(PostFeeds.scan(limit))) c
        JOIN posts p ON p.id = c.post_id CROSS JOIN (SELECT \(viewer.rawValue)::bigint AS id) w
        WHERE \(unescaped: Self.postReadable("p", viewer: "w.id"))
        ORDER BY p.id \(unescaped: order) LIMIT \(limit)
        """
    }

    public func setReaction(_ reaction: Reaction?, post: Int64, user: UserID, now: Date, privacy: LocationPrivacy) async throws -> PostView {
        let t = now.timeIntervalSince1970
        return try await Self.mappingPostRaces {
            try await self.transaction(locking: [user]) { tx in
                try await Self.requireReadablePost(post, viewer: user, tx)
                if let reaction {
                    try await tx.run("""
                        INSERT INTO post_reactions (post_id, user_id, value, at) VALUES (\(post), \(user.rawValue), \(reaction.rawValue), \(t))
                        ON CONFLICT (post_id, user_id) DO UPDATE SET value = excluded.value, at = excluded.at
                        WHERE post_reactions.value <> excluded.value
                        """)
                } else {
                    try await tx.run("DELETE FROM post_reactions WHERE post_id = \(post) AND user_id = \(user.rawValue)")
                }
                return try await Self.requirePostView(post, viewer: user, now: now, privacy: privacy, tx)
            }
        }
    }

    public func addComment(to post: Int64, author: UserID, text: String, now: Date) async throws -> CommentView {
        let t = now.timeIntervalSince1970
        return try await Self.mappingPostRaces {
            try await self.transaction(locking: [author]) { tx in
                try await Self.requireReadablePost(post, viewer: author, tx)
                return try Self.comment(try await tx.one("""
                    WITH c AS (
                        INSERT INTO comments (post_id, author_id, body, search_doc, created_at)
                        VALUES (\(post), \(author.rawValue), \(text), \(PostRules.searchDocument(text)), \(t))
                        RETURNING id, post_id, author_id, body, created_at
                    )
                    SELECT \(unescaped: Self.commentColumns) FROM c JOIN users u ON u.id = c.author_id
                    """))
            }
        }
    }

    public func comments(on post: Int64, viewer: UserID, order: CommentOrder, after: Int64?, limit: Int) async throws -> [CommentView]? {
        let newest = order == .newest
        let limit = max(0, min(limit, PostRules.largestPage))
        return try await self.read { tx -> [CommentView]? in
            guard try await Self.isReadablePost(post, viewer: viewer, tx) else { return nil }
            return try await tx.rows("""
                SELECT \(unescaped: Self.commentColumns) FROM comments c JOIN users u ON u.id = c.author_id CROSS JOIN (SELECT \(viewer.rawValue)::bigint AS id) w
                WHERE c.post_id = \(post) AND c.id \(unescaped: newest ? "<" : ">") \(after ?? (newest ? Int64.max : 0))
                    AND \(unescaped: Self.commentShown("c", viewer: "w.id"))
                ORDER BY c.id \(unescaped: newest ? "DESC" : "ASC") LIMIT \(limit)
                """).map(Self.comment)
        }
    }

    public func deleteComment(_ id: Int64, user: UserID) async throws {
        try await self.transaction(locking: [user]) { tx in
            // The comment's row locked: of two deletes at once, the second finds none.
            guard let row = try await tx.first("""
                SELECT c.author_id, p.author_id, \(unescaped: Self.postReadable("p", viewer: "w.id"))
                FROM comments c JOIN posts p ON p.id = c.post_id CROSS JOIN (SELECT \(user.rawValue)::bigint AS id) w
                WHERE c.id = \(id) FOR UPDATE OF c
                """) else { throw PostError.noSuchComment }
            let (commenter, postAuthor, readable) = try row.decode((Int64, Int64, Bool).self)
            // Someone who may read the comment's post learns it is not theirs to delete; anyone
            // else that there is no such comment.
            guard commenter == user.rawValue || postAuthor == user.rawValue else { throw readable ? PostError.notAuthor : PostError.noSuchComment }
            try await tx.run("DELETE FROM comments WHERE id = \(id)")
        }
    }

    public func searchPosts(_ query: PostQuery, terms: [SearchTerm], viewer: UserID, limit: Int, offset: Int, now: Date,
                            privacy: LocationPrivacy) async throws -> [PostHit] {
        guard let match = Self.postQuery(terms) else { return [] }
        let (limit, offset) = (max(0, min(limit, PostRules.largestPage)), max(0, offset))
        return try await self.read { tx in
            // The newest matches of each index, at most `candidates` each, then ranked: `ts_rank`
            // is computed for those rows only, whatever the word.
            var sql = PostSearchSQL()
            let words = sql.bind(match), me = sql.bind(viewer.rawValue), candidates = sql.bind(PostRules.searchCandidates)
            let hits = try await tx.rows(PostgresQuery(unsafeSQL: """
                WITH hits(post_id, rank, in_comment) AS (
                    SELECT p.id, ts_rank(p.search, \(words)::tsquery), false
                    FROM (SELECT id FROM posts WHERE search @@ \(words)::tsquery ORDER BY id DESC LIMIT \(candidates)) m
                    JOIN posts p ON p.id = m.id
                    UNION ALL
                    SELECT c.post_id, ts_rank(c.search, \(words)::tsquery), true
                    FROM (SELECT c.id FROM comments c, (SELECT \(me)::bigint AS id) w
                          WHERE c.search @@ \(words)::tsquery AND \(Self.commentShown("c", viewer: "w.id"))
                          ORDER BY c.id DESC LIMIT \(candidates)) m
                    JOIN comments c ON c.id = m.id
                )
                SELECT post_id, bool_and(in_comment) FROM hits GROUP BY post_id
                ORDER BY \(query.sort == .relevance ? "max(rank) DESC, post_id DESC" : "post_id DESC")
                """, binds: sql.bindings)).map { try $0.decode((Int64, Bool).self) }

            // Who may read each post, and the filters, asked in that order only until the page is
            // full, a batch of candidates a statement: a page of mostly public posts looks at a
            // few dozen of them, not all.
            var check = PostSearchSQL()
            let viewerID = check.bind(viewer.rawValue)
            var filters: [String] = []
            if let park = query.park {
                filters.append("EXISTS (SELECT 1 FROM post_tags t WHERE t.post_id = p.id AND t.kind = 'about' AND t.value = \(check.bind(park.rawValue)))")
            }
            if let ride = query.ride {
                let entry = try await Self.catalogRideID(ride, tx) ?? ride.rawValue
                filters.append("EXISTS (SELECT 1 FROM post_tags t WHERE t.post_id = p.id AND t.kind = 'ride' AND t.value = \(check.bind(entry)))")
            }
            if let hashtag = query.hashtag {
                filters.append("EXISTS (SELECT 1 FROM post_tags t WHERE t.post_id = p.id AND t.kind = 'hashtag' AND t.value = \(check.bind(hashtag)))")
            }
            if let author = query.author { filters.append("p.author_id = \(check.bind(author.rawValue))") }
            if let from = query.from { filters.append("p.created_at >= \(check.bind(from.timeIntervalSince1970))") }
            if let to = query.to { filters.append("p.created_at < \(check.bind(to.timeIntervalSince1970))") }
            let shown = """
                SELECT p.id FROM posts p CROSS JOIN (SELECT \(viewerID)::bigint AS id) w
                WHERE p.id = ANY($\(check.bindings.count + 1)::bigint[]) AND \(Self.postReadable("p", viewer: "w.id"))
                """ + filters.map { " AND " + $0 }.joined()
            var page: [(id: Int64, inComment: Bool)] = [], skipped = 0, next = 0, batch = max(64, 2 * (offset + limit))
            while page.count < limit, next < hits.count {
                let slice = hits[next..<min(hits.count, next + batch)]
                next += slice.count
                batch *= 2
                var binds = check.bindings
                binds.append(slice.map(\.0))
                let readable = Set(try await tx.rows(PostgresQuery(unsafeSQL: shown, binds: binds)).map { try $0.decode(Int64.self) })
                for hit in slice where readable.contains(hit.0) {
                    guard page.count < limit else { break }
                    if skipped < offset {
                        skipped += 1
                    } else {
                        page.append(hit)
                    }
                }
            }
            let views = try await Self.postViews(page.map(\.id), viewer: viewer, now: now, privacy: privacy, tx)
            let inComment = Dictionary(page.map { ($0.id, $0.inComment) }, uniquingKeysWith: { a, _ in a })
            return views.map { PostHit(post: $0, inComment: inComment[$0.id] ?? false) }
        }
    }

    /// A `tsquery` in its text form that holds every term (`&`): a word as a prefix lexeme
    /// (`'word':*`), a phrase as its words in a row (`<->`), the last one a prefix. Cast, not
    /// parsed, so each word is one lexeme whatever it holds (words are folded letters and digits;
    /// quotes and backslashes are escaped all the same). `nil` when no post can match: a word
    /// longer than PostgreSQL indexes (2,047 bytes) is in no document.
    static func postQuery(_ terms: [SearchTerm]) -> String? {
        guard !terms.isEmpty, terms.allSatisfy({ $0.words.allSatisfy { !$0.isEmpty && $0.utf8.count <= 2_047 } }) else { return nil }
        return terms.map { term in
            let words = term.words
            let lexemes = words.enumerated().map { index, word in
                "'" + word.replacingOccurrences(of: "'", with: "''").replacingOccurrences(of: "\\", with: "\\\\") + "'"
                    + (index == words.count - 1 ? ":*" : "")
            }
            return lexemes.count == 1 ? lexemes[0] : "(" + lexemes.joined(separator: " <-> ") + ")"
        }.joined(separator: " & ")
    }

    /// Runs a write, answering a race the database caught by a foreign key as the check before
    /// it would have: the author's account gone (``PostError/noSuchUser``), the post gone
    /// (``PostError/noSuchPost``).
    private static func mappingPostRaces<T>(_ work: () async throws -> T) async throws -> T {
        do {
            return try await work()
        } catch let error as PSQLError where Self.sqlState(error) == "23503" {
            switch error.serverInfo?[.constraintName] {
            case "posts_author_id_fkey", "post_reactions_user_id_fkey", "comments_author_id_fkey": throw PostError.noSuchUser
            case "post_reactions_post_id_fkey", "comments_post_id_fkey", "post_tags_post_id_fkey", "post_photos_post_id_fkey": throw PostError.noSuchPost
            default: throw error
            }
        }
    }
}

/// A statement put together from parts, each value bound as the next `$n`.
private struct PostSearchSQL {
    var bindings = PostgresBindings()

    /// Binds `value` and returns its placeholder.
    mutating func bind<Value: PostgresDynamicTypeEncodable>(_ value: Value) -> String {
        self.bindings.append(value)
        return "$\(self.bindings.count)"
    }
}

// MARK: - Shared helpers

/// A post's tags as stored: catalogue ids of the tagged parks and rides, and every park it is about.
private struct PostTags: Sendable {
    var parks: [String] = []
    var rides: [String] = []
    var about: [String] = []
}

extension PostgresStore {
    /// Whether the user whose id is the SQL expression `viewer` may read the post `post` (an
    /// alias of `posts`): its author always; anyone else never when either blocks the other;
    /// otherwise a `public` post anyone, a `friends` post the author's accepted friends. The one
    /// rule of every read, thumb and comment.
    static func postReadable(_ post: String, viewer: String) -> String {
        """
        (\(post).author_id = \(viewer) OR (
            NOT EXISTS (SELECT 1 FROM blocks pb WHERE pb.blocker = \(post).author_id AND pb.blocked = \(viewer))
            AND NOT EXISTS (SELECT 1 FROM blocks pb WHERE pb.blocker = \(viewer) AND pb.blocked = \(post).author_id)
            AND (\(post).visibility = 'public'
                 OR EXISTS (SELECT 1 FROM friendships pf WHERE pf.status = 'accepted'
                                AND ((pf.requester = \(post).author_id AND pf.addressee = \(viewer))
                                     OR (pf.requester = \(viewer) AND pf.addressee = \(post).author_id))))))
        """
    }

    /// Whether the viewer sees the comment `comment`: not when either of the two blocks the other.
    static func commentShown(_ comment: String, viewer: String) -> String {
        """
        (\(comment).author_id = \(viewer) OR (
            NOT EXISTS (SELECT 1 FROM blocks cb WHERE cb.blocker = \(comment).author_id AND cb.blocked = \(viewer))
            AND NOT EXISTS (SELECT 1 FROM blocks cb WHERE cb.blocker = \(viewer) AND cb.blocked = \(comment).author_id)))
        """
    }

    private static func isReadablePost(_ id: Int64, viewer: UserID, _ tx: PostgresTransaction) async throws -> Bool {
        try await tx.first("""
            SELECT 1 FROM posts p, (SELECT \(viewer.rawValue)::bigint AS id) w WHERE p.id = \(id) AND \(unescaped: Self.postReadable("p", viewer: "w.id"))
            """) != nil
    }

    /// Throws ``PostError/noSuchPost`` unless `viewer` may read the post, whose row is then held
    /// with a key-share lock until the transaction ends (it is not deleted under a thumb or comment).
    private static func requireReadablePost(_ id: Int64, viewer: UserID, _ tx: PostgresTransaction) async throws {
        guard try await tx.first("""
            SELECT 1 FROM posts p, (SELECT \(viewer.rawValue)::bigint AS id) w
            WHERE p.id = \(id) AND \(unescaped: Self.postReadable("p", viewer: "w.id"))
            FOR KEY SHARE OF p
            """) != nil else { throw PostError.noSuchPost }
    }

    /// Checks a change by the author: no such post for anyone who may not read it, not the
    /// author for anyone else.
    private static func ownedPost(_ id: Int64, _ author: UserID, _ tx: PostgresTransaction) async throws {
        guard let row = try await tx.first("""
            SELECT p.author_id, \(unescaped: Self.postReadable("p", viewer: "w.id")) FROM posts p, (SELECT \(author.rawValue)::bigint AS id) w
            WHERE p.id = \(id)
            """) else { throw PostError.noSuchPost }
        let (owner, readable) = try row.decode((Int64, Bool).self)
        guard owner == author.rawValue else { throw readable ? PostError.notAuthor : PostError.noSuchPost }
    }

    /// The catalogue entry of a ride, by its own id or its fenced ride's (``catalogRide(_:)``).
    private static func catalogRideID(_ ride: RideID, _ tx: PostgresTransaction) async throws -> String? {
        try await tx.first("""
            SELECT id FROM catalog_rides WHERE id = \(ride.rawValue) OR ride_id = \(ride.rawValue) ORDER BY id = \(ride.rawValue) DESC LIMIT 1
            """)?.decode(String.self)
    }

    /// Catalogue ids of the tagged parks and rides, and every park the post is about (the parks,
    /// then the rides' parks), each once in order; an unknown one throws naming its entry. Two
    /// statements, whatever the number of tags.
    private static func resolvePostTags(parks: [ParkID], rides: [RideID], _ tx: PostgresTransaction) async throws -> PostTags {
        var tags = PostTags()
        if !parks.isEmpty {
            let known = Set(try await tx.rows("SELECT id FROM catalog_parks WHERE id = ANY(\(parks.map(\.rawValue))::text[])")
                .map { try $0.decode(String.self) })
            for (index, park) in parks.enumerated() {
                guard known.contains(park.rawValue) else { throw PostError.unknownTag(pointer: "/parks/\(index)") }
                tags.parks.append(park.rawValue)
                if !tags.about.contains(park.rawValue) { tags.about.append(park.rawValue) }
            }
        }
        if !rides.isEmpty {
            let entries = try await tx.rows("""
                SELECT r.id, r.park_id FROM unnest(\(rides.map(\.rawValue))::text[]) WITH ORDINALITY AS g(id, n)
                LEFT JOIN LATERAL (SELECT e.id, e.park_id FROM catalog_rides e WHERE e.id = g.id OR e.ride_id = g.id
                                   ORDER BY e.id = g.id DESC LIMIT 1) r ON true
                ORDER BY g.n
                """).map { try $0.decode((String?, String?).self) }
            for (index, entry) in entries.enumerated() {
                guard let id = entry.0, let park = entry.1 else { throw PostError.unknownTag(pointer: "/rides/\(index)") }
                guard !tags.rides.contains(id) else { continue }
                tags.rides.append(id)
                if !tags.about.contains(park) { tags.about.append(park) }
            }
        }
        return tags
    }

    private static func writePostTags(_ tags: PostTags, hashtags: [String], post: Int64, _ tx: PostgresTransaction) async throws {
        var kinds: [String] = [], values: [String] = [], positions: [Int] = []
        for (kind, list) in [("park", tags.parks), ("ride", tags.rides), ("about", tags.about), ("hashtag", hashtags)] {
            for (position, value) in list.enumerated() {
                kinds.append(kind)
                values.append(value)
                positions.append(position)
            }
        }
        guard !kinds.isEmpty else { return }
        try await tx.run("""
            INSERT INTO post_tags (post_id, kind, value, position)
            SELECT \(post), u.kind, u.value, u.position FROM unnest(\(kinds)::text[], \(values)::text[], \(positions)::int[]) AS u(kind, value, position)
            ON CONFLICT DO NOTHING
            """)
    }

    /// The post's tagged parks and rides, as the author tagged them.
    private static func postTagValues(of post: Int64, _ tx: PostgresTransaction) async throws -> (parks: [ParkID], rides: [RideID]) {
        let rows = try await tx.rows("SELECT kind, value FROM post_tags WHERE post_id = \(post) AND kind IN ('park', 'ride') ORDER BY position")
            .map { try $0.decode((String, String).self) }
        return (rows.filter { $0.0 == "park" }.map { ParkID(rawValue: $0.1) }, rows.filter { $0.0 == "ride" }.map { RideID(rawValue: $0.1) })
    }

    /// Refuses a photo that is not the author's, naming its index.
    private static func checkPostPhotos(_ photos: [Int64], author: UserID, _ tx: PostgresTransaction) async throws {
        guard !photos.isEmpty else { return }
        let owned = Set(try await tx.rows("SELECT id FROM photos WHERE id = ANY(\(photos)::bigint[]) AND user_id = \(author.rawValue)")
            .map { try $0.decode(Int64.self) })
        if let index = photos.firstIndex(where: { !owned.contains($0) }) { throw PostError.noSuchPhoto(index: index) }
    }

    private static func writePostPhotos(_ photos: [Int64], post: Int64, _ tx: PostgresTransaction) async throws {
        guard !photos.isEmpty else { return }
        try await tx.run("""
            INSERT INTO post_photos (post_id, photo_id, position)
            SELECT \(post), u.photo, u.n - 1 FROM unnest(\(photos)::bigint[]) WITH ORDINALITY AS u(photo, n)
            """)
    }

    private static func requirePostView(_ id: Int64, viewer: UserID, now: Date, privacy: LocationPrivacy,
                                        _ tx: PostgresTransaction) async throws -> PostView {
        guard let view = try await Self.postViews([id], viewer: viewer, now: now, privacy: privacy, tx).first else { throw PostError.noSuchPost }
        return view
    }

    /// The posts of these ids as `viewer` sees them, in the order given: those the caller decided
    /// they may read, or with `readableOnly` those of them the viewer may read. Two statements
    /// for a page, whatever its size: the posts with their photos and tags, and the tagged rides.
    private static func postViews(_ ids: [Int64], viewer: UserID, now: Date, privacy: LocationPrivacy, readableOnly: Bool = false,
                                  _ tx: PostgresTransaction) async throws -> [PostView] {
        guard !ids.isEmpty else { return [] }
        struct Found {
            var view: PostView
            var rides: [String]
        }
        var found: [Int64: Found] = [:]
        for row in try await tx.rows("""
            SELECT p.id, p.author_id, u.username, u.display_name, p.body, p.visibility, p.ups, p.downs, p.comments, p.created_at, p.edited_at,
                   r.value, v.park_id, v.entered_at, coalesce(v.left_at, v.last_evidence_at), vp.name, vp.fenced,
                   ARRAY(SELECT f.photo_id FROM post_photos f WHERE f.post_id = p.id ORDER BY f.position),
                   g.kinds, g.vals, g.names, g.fenced
            FROM posts p CROSS JOIN (SELECT \(viewer.rawValue)::bigint AS id) w
            JOIN users u ON u.id = p.author_id
            LEFT JOIN post_reactions r ON r.post_id = p.id AND r.user_id = w.id
            LEFT JOIN visits v ON v.id = p.visit_id
            LEFT JOIN catalog_parks vp ON vp.id = v.park_id
            LEFT JOIN LATERAL (
                SELECT array_agg(t.kind ORDER BY t.kind, t.position) AS kinds, array_agg(t.value ORDER BY t.kind, t.position) AS vals,
                       array_agg(coalesce(cp.name, t.value) ORDER BY t.kind, t.position) AS names,
                       array_agg(coalesce(cp.fenced, false) ORDER BY t.kind, t.position) AS fenced
                FROM post_tags t LEFT JOIN catalog_parks cp ON t.kind = 'about' AND cp.id = t.value
                WHERE t.post_id = p.id AND t.kind IN ('about', 'ride', 'hashtag')
            ) g ON true
            WHERE p.id = ANY(\(ids)::bigint[]) \(unescaped: readableOnly ? "AND " + Self.postReadable("p", viewer: "w.id") : "")
            """) {
            var c = ColumnReader(row.makeRandomAccess())
            let id: Int64 = try c.next()
            let author = UserSummary(id: UserID(try c.next(Int64.self)), username: try c.next(), displayName: try c.next())
            let body: String = try c.next()
            let visibility = PostVisibility(rawValue: try c.next()) ?? .friends
            let ups: Int = try c.next(), downs: Int = try c.next(), comments: Int = try c.next()
            let createdAt: Double = try c.next()
            let editedAt: Double? = try c.next()
            let reaction = try c.next(String?.self).flatMap(Reaction.init(rawValue:))
            let visitPark: String? = try c.next()
            let visitAt: Double? = try c.next(), visitLast: Double? = try c.next()
            let visitParkName: String? = try c.next()
            let visitParkFenced: Bool? = try c.next()
            let photos: [Int64] = try c.next()
            let kinds = try c.next([String]?.self) ?? [], values = try c.next([String]?.self) ?? []
            let names = try c.next([String]?.self) ?? [], fenced = try c.next([Bool]?.self) ?? []
            var verified: VerifiedVisit?
            if let visitPark, let visitAt, let visitLast,
               author.id == viewer || privacy.revealsPlace(at: Date(timeIntervalSince1970: visitLast), now: now) {
                verified = VerifiedVisit(park: CatalogPark(id: ParkID(rawValue: visitPark), name: visitParkName ?? visitPark, fenced: visitParkFenced ?? true),
                                         at: Date(timeIntervalSince1970: visitAt))
            }
            var parks: [CatalogPark] = [], rides: [String] = [], hashtags: [String] = []
            for (i, kind) in kinds.enumerated() {
                switch kind {
                case "about": parks.append(CatalogPark(id: ParkID(rawValue: values[i]), name: names[i], fenced: fenced[i]))
                case "ride": rides.append(values[i])
                default: hashtags.append(values[i])
                }
            }
            found[id] = Found(view: PostView(id: id, author: author, text: body, visibility: visibility, photos: photos, parks: parks, rides: [],
                                           hashtags: hashtags, verified: verified, ups: ups, downs: downs, comments: comments, reaction: reaction,
                                           createdAt: Date(timeIntervalSince1970: createdAt),
                                           editedAt: editedAt.map(Date.init(timeIntervalSince1970:))),
                              rides: rides)
        }
        let rideIDs = Array(Set(found.values.flatMap(\.rides))).sorted()
        var rides: [String: CatalogRide] = [:]
        if !rideIDs.isEmpty {
            for row in try await tx.rows("""
                SELECT \(unescaped: Self.catalogRideColumns) FROM catalog_rides r JOIN catalog_parks p ON p.id = r.park_id
                WHERE r.id = ANY(\(rideIDs)::text[])
                """) {
                let ride = try Self.catalogRide(row)
                rides[ride.id.rawValue] = ride
            }
        }
        return ids.compactMap { id in
            guard var row = found[id] else { return nil }
            row.view.rides = row.rides.compactMap { rides[$0] }
            return row.view
        }
    }

    /// The columns ``comment(_:)`` reads, of `comments c` (or a CTE of its rows) and its author `u`.
    private static let commentColumns = "c.id, c.post_id, c.author_id, u.username, u.display_name, c.body, c.created_at"

    private static func comment(_ row: PostgresRow) throws -> CommentView {
        let (id, post, author, username, displayName, body, createdAt) = try row.decode((Int64, Int64, Int64, String, String, String, Double).self)
        return CommentView(id: id, post: post, author: UserSummary(id: UserID(author), username: username, displayName: displayName), text: body,
                           createdAt: Date(timeIntervalSince1970: createdAt))
    }
}
