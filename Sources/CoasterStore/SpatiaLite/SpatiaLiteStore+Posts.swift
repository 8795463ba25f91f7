import CoasterCore
import Foundation
import GRDB

extension SpatiaLiteStore: PostStore {
    public func createPost(_ draft: PostDraft, author: UserID, now: Date, privacy: LocationPrivacy) async throws -> PostView {
        try await self.pool.write { db in
            guard try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM users WHERE id = ?)"), arguments: [author.rawValue]) == true
            else { throw PostError.noSuchUser }
            let tags = try Self.resolveTags(parks: draft.parks, rides: draft.rides, db)
            try Self.checkPhotos(draft.photos, author: author, db)
            var visit: Int64?
            if let park = draft.verifiedAt {
                visit = try Int64.fetchOne(db.cachedStatement(sql: Self.backingVisit), arguments: [
                    author.rawValue, park.rawValue, now.addingTimeInterval(-PostRules.verificationWindow).timeIntervalSince1970,
                ])
                guard visit != nil else { throw PostError.noVisit(park) }
            }
            try db.cachedStatement(sql: """
                INSERT INTO posts (author_id, body, search_doc, visibility, visit_id, created_at) VALUES (?, ?, ?, ?, ?, ?)
                """).execute(arguments: [author.rawValue, draft.text, PostRules.searchDocument(draft.text), draft.visibility.rawValue, visit,
                                         now.timeIntervalSince1970])
            let id = db.lastInsertedRowID
            try Self.writePhotos(draft.photos, post: id, db)
            try Self.writeTags(tags, hashtags: draft.hashtags, post: id, db)
            return try Self.requirePostView(id, viewer: author, now: now, privacy: privacy, db)
        }
    }

    public func post(_ id: Int64, viewer: UserID, now: Date, privacy: LocationPrivacy) async throws -> PostView? {
        try await self.pool.read { db in
            guard try Self.readablePost(id, viewer: viewer, db) != nil else { return nil }
            return try Self.postViews([id], viewer: viewer, now: now, privacy: privacy, db).first
        }
    }

    public func editPost(_ id: Int64, author: UserID, edit: PostEdit, now: Date, privacy: LocationPrivacy) async throws -> PostView {
        try await self.pool.write { db in
            try Self.ownedPost(id, author, db)
            if let text = edit.text {
                try db.cachedStatement(sql: "UPDATE posts SET body = ?, search_doc = ? WHERE id = ?")
                    .execute(arguments: [text, PostRules.searchDocument(text), id])
            }
            if let visibility = edit.visibility {
                try db.cachedStatement(sql: "UPDATE posts SET visibility = ? WHERE id = ?").execute(arguments: [visibility.rawValue, id])
            }
            if let photos = edit.photos {
                try Self.checkPhotos(photos, author: author, db)
                try db.cachedStatement(sql: "DELETE FROM post_photos WHERE post_id = ?").execute(arguments: [id])
                try Self.writePhotos(photos, post: id, db)
            }
            if edit.parks != nil || edit.rides != nil || edit.text != nil {
                let current = try Self.tagValues(of: id, db)
                let tags = try Self.resolveTags(parks: edit.parks ?? current.parks, rides: edit.rides ?? current.rides, db)
                let body = try String.fetchOne(db.cachedStatement(sql: "SELECT body FROM posts WHERE id = ?"), arguments: [id]) ?? ""
                try db.cachedStatement(sql: "DELETE FROM post_tags WHERE post_id = ?").execute(arguments: [id])
                try Self.writeTags(tags, hashtags: PostRules.hashtags(in: body), post: id, db)
            }
            let left = try Row.fetchOne(db.cachedStatement(sql: """
                SELECT body, (SELECT count(*) FROM post_photos WHERE post_id = posts.id) AS photos FROM posts WHERE id = ?
                """), arguments: [id])!
            guard !PostRules.isBlank(left["body"]) || (left["photos"] as Int) > 0 else { throw PostError.emptyPost }
            try db.cachedStatement(sql: "UPDATE posts SET edited_at = ? WHERE id = ?").execute(arguments: [now.timeIntervalSince1970, id])
            return try Self.requirePostView(id, viewer: author, now: now, privacy: privacy, db)
        }
    }

    public func deletePost(_ id: Int64, author: UserID) async throws {
        try await self.pool.write { db in
            try Self.ownedPost(id, author, db)
            // Photos, tags, thumbs and comments go by their foreign keys.
            try db.cachedStatement(sql: "DELETE FROM posts WHERE id = ?").execute(arguments: [id])
        }
    }

    public func feed(_ feed: Feed, viewer: UserID, after: Int64?, since: Int64?, limit: Int, now: Date, privacy: LocationPrivacy) async throws -> [PostView] {
        let limit = max(0, min(limit, PostRules.largestPage))
        return try await self.pool.read { db in
            // `since` reads upwards from the client's newest (the oldest newer posts first, so a
            // full page leaves no gap); `after` downwards from the last post of the page before.
            let upwards = since != nil
            let window = upwards ? "p.id > :since" : "p.id < :after"
            let order = upwards ? "ASC" : "DESC"
            let lowest: Int64 = since ?? 0, highest: Int64 = after ?? Int64.max
            var arguments: [String: (any DatabaseValueConvertible)?] = [
                "viewer": viewer.rawValue, "since": lowest, "after": highest, "limit": limit,
                "scan": Self.feedScan(limit),
            ]
            let sql: String
            switch feed {
            case .home:
                // Each author's newest posts in the window, at most a page each (one index range
                // an author), then the page of them: the work is bounded by the number of people
                // the viewer follows or befriends, not by how much they posted.
                sql = """
                    WITH authors(id, everything) AS (
                        SELECT :viewer, 1
                        UNION ALL SELECT addressee, 1 FROM friendships WHERE requester = :viewer AND status = 'accepted'
                        UNION ALL SELECT requester, 1 FROM friendships WHERE addressee = :viewer AND status = 'accepted'
                        UNION ALL SELECT followee_id, 0 FROM user_follows WHERE follower_id = :viewer
                    ), shown(id, everything) AS (
                        SELECT id, max(everything) FROM authors a
                        WHERE a.id = :viewer OR (NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker = a.id AND b.blocked = :viewer)
                                                 AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker = :viewer AND b.blocked = a.id))
                        GROUP BY id
                    )
                    SELECT p.id FROM shown a JOIN posts p ON p.id IN (
                        SELECT q.id FROM posts q WHERE q.author_id = a.id AND \(window.replacingOccurrences(of: "p.id", with: "q.id"))
                            AND (a.everything OR q.visibility = 'public')
                        ORDER BY q.id \(order) LIMIT :limit)
                    ORDER BY p.id \(order) LIMIT :limit
                    """
            case .public:
                sql = """
                    SELECT p.id FROM posts p INDEXED BY posts_public
                    WHERE p.visibility = 'public' AND \(window) AND \(Self.postReadable())
                    ORDER BY p.id \(order) LIMIT :limit
                    """
            case .user(let author):
                arguments["author"] = author.rawValue
                sql = "SELECT p.id FROM posts p WHERE p.author_id = :author AND \(window) AND \(Self.postReadable()) ORDER BY p.id \(order) LIMIT :limit"
            case .park(let park):
                (arguments["kind"], arguments["value"]) = ("about", park.rawValue)
                sql = Self.taggedFeed(window: window, order: order)
            case .ride(let ride):
                let entry = try Self.catalogRide(ride, db)
                (arguments["kind"], arguments["value"]) = ("ride", entry?.id.rawValue ?? ride.rawValue)
                sql = Self.taggedFeed(window: window, order: order)
            case .tag(let hashtag):
                (arguments["kind"], arguments["value"]) = ("hashtag", hashtag)
                sql = Self.taggedFeed(window: window, order: order)
            }
            var ids = try Int64.fetchAll(db.cachedStatement(sql: sql), arguments: StatementArguments(arguments))
            if upwards { ids.reverse() }
            return try Self.postViews(ids, viewer: viewer, now: now, privacy: privacy, db)
        }
    }

    /// Tagged posts in the window the viewer may read: the tag's index range, newest first (or
    /// oldest first upwards), at most ``feedScan(_:)`` rows of it looked at, so that a tag full
    /// of posts the viewer may not read costs a bounded walk (the page comes back short, and
    /// the next asks on from its last post).
    static func taggedFeed(window: String, order: String) -> String {
        """
        SELECT p.id FROM (SELECT t.post_id FROM post_tags t WHERE t.kind = :kind AND t.value = :value
                              AND \(window.replacingOccurrences(of: "p.id", with: "t.post_id")) ORDER BY t.post_id \(order) LIMIT :scan) c
        JOIN posts p ON p.id = c.post_id
        WHERE \(Self.postReadable())
        ORDER BY p.id \(order) LIMIT :limit
        """
    }

    /// How many rows a feed looks at for one page at most (both stores' bound).
    static func feedScan(_ limit: Int) -> Int { PostFeeds.scan(limit) }

    public func setReaction(_ reaction: Reaction?, post: Int64, user: UserID, now: Date, privacy: LocationPrivacy) async throws -> PostView {
        try await self.pool.write { db in
            guard try Self.readablePost(post, viewer: user, db) != nil else { throw PostError.noSuchPost }
            if let reaction {
                try db.cachedStatement(sql: """
                    INSERT INTO post_reactions (post_id, user_id, value, at) VALUES (?, ?, ?, ?)
                    ON CONFLICT (post_id, user_id) DO UPDATE SET value = excluded.value, at = excluded.at WHERE value <> excluded.value
                    """).execute(arguments: [post, user.rawValue, reaction.rawValue, now.timeIntervalSince1970])
            } else {
                try db.cachedStatement(sql: "DELETE FROM post_reactions WHERE post_id = ? AND user_id = ?").execute(arguments: [post, user.rawValue])
            }
            return try Self.requirePostView(post, viewer: user, now: now, privacy: privacy, db)
        }
    }

    public func addComment(to post: Int64, author: UserID, text: String, now: Date) async throws -> CommentView {
        try await self.pool.write { db in
            guard try Self.readablePost(post, viewer: author, db) != nil else { throw PostError.noSuchPost }
            try db.cachedStatement(sql: "INSERT INTO comments (post_id, author_id, body, search_doc, created_at) VALUES (?, ?, ?, ?, ?)")
                .execute(arguments: [post, author.rawValue, text, PostRules.searchDocument(text), now.timeIntervalSince1970])
            let id = db.lastInsertedRowID
            return try Self.commentViews(where: "c.id = :id", ["id": id, "viewer": author.rawValue], db).first!
        }
    }

    public func comments(on post: Int64, viewer: UserID, order: CommentOrder, after: Int64?, limit: Int) async throws -> [CommentView]? {
        try await self.pool.read { db in
            guard try Self.readablePost(post, viewer: viewer, db) != nil else { return nil }
            let newest = order == .newest
            // Typed apart: in the dictionary literal `after ?? …` would be read as an `Int64??`
            // whose nil is bound as NULL.
            let start: Int64 = after ?? (newest ? Int64.max : 0)
            return try Self.commentViews(
                where: "c.post_id = :post AND c.id \(newest ? "<" : ">") :after AND \(Self.commentShown())",
                order: "ORDER BY c.id \(newest ? "DESC" : "ASC") LIMIT :limit",
                ["post": post, "after": start, "viewer": viewer.rawValue, "limit": max(0, min(limit, PostRules.largestPage))], db)
        }
    }

    public func deleteComment(_ id: Int64, user: UserID) async throws {
        try await self.pool.write { db in
            guard let row = try Row.fetchOne(db.cachedStatement(sql: """
                SELECT c.author_id, p.author_id AS post_author, p.id AS post_id FROM comments c JOIN posts p ON p.id = c.post_id WHERE c.id = ?
                """), arguments: [id])
            else { throw PostError.noSuchComment }
            let mine = (row["author_id"] as Int64) == user.rawValue || (row["post_author"] as Int64) == user.rawValue
            guard mine else {
                // Someone who may read the comment learns it is not theirs to delete; anyone else
                // that there is no such comment.
                let readable = try Self.readablePost(row["post_id"], viewer: user, db) != nil
                throw readable ? PostError.notAuthor : PostError.noSuchComment
            }
            try db.cachedStatement(sql: "DELETE FROM comments WHERE id = ?").execute(arguments: [id])
        }
    }

    public func searchPosts(_ query: PostQuery, terms: [SearchTerm], viewer: UserID, limit: Int, offset: Int, now: Date,
                            privacy: LocationPrivacy) async throws -> [PostHit] {
        guard !terms.isEmpty else { return [] }
        let match = Self.ftsMatch(terms)
        let (limit, offset) = (max(0, min(limit, PostRules.largestPage)), max(0, offset))
        return try await self.pool.read { db in
            var filters: [String] = []
            var arguments: [String: (any DatabaseValueConvertible)?] = ["viewer": viewer.rawValue]
            if let park = query.park {
                filters.append("EXISTS (SELECT 1 FROM post_tags t WHERE t.post_id = p.id AND t.kind = 'about' AND t.value = :park)")
                arguments["park"] = park.rawValue
            }
            if let ride = query.ride {
                filters.append("EXISTS (SELECT 1 FROM post_tags t WHERE t.post_id = p.id AND t.kind = 'ride' AND t.value = :ride)")
                arguments["ride"] = try Self.catalogRide(ride, db)?.id.rawValue ?? ride.rawValue
            }
            if let hashtag = query.hashtag {
                filters.append("EXISTS (SELECT 1 FROM post_tags t WHERE t.post_id = p.id AND t.kind = 'hashtag' AND t.value = :hashtag)")
                arguments["hashtag"] = hashtag
            }
            if let author = query.author {
                filters.append("p.author_id = :author")
                arguments["author"] = author.rawValue
            }
            if let from = query.from {
                filters.append("p.created_at >= :from")
                arguments["from"] = from.timeIntervalSince1970
            }
            if let to = query.to {
                filters.append("p.created_at < :to")
                arguments["to"] = to.timeIntervalSince1970
            }
            // The newest matches of each index, at most `candidates` each, ranked: bm25 is
            // computed for those rows only, whatever the word.
            let hits = try Row.fetchAll(db.cachedStatement(sql: """
                WITH hits(post_id, rank, in_comment) AS (
                    SELECT * FROM (SELECT rowid, bm25(posts_fts), 0 FROM posts_fts WHERE posts_fts MATCH :match ORDER BY rowid DESC LIMIT :candidates)
                    UNION ALL
                    SELECT * FROM (SELECT c.post_id, bm25(comments_fts), 1 FROM comments_fts JOIN comments c ON c.id = comments_fts.rowid
                                   WHERE comments_fts MATCH :match AND \(Self.commentShown())
                                   ORDER BY comments_fts.rowid DESC LIMIT :candidates)
                )
                SELECT post_id, min(rank) AS rank, min(in_comment) AS in_comment FROM hits GROUP BY post_id
                ORDER BY \(query.sort == .relevance ? "rank, post_id DESC" : "post_id DESC")
                """), arguments: ["match": match, "viewer": viewer.rawValue, "candidates": PostRules.searchCandidates])
            // Who may read each post, and the filters, asked in that order only until the page is
            // full: a page of mostly public posts looks at a few dozen of the candidates, not all.
            let shown = try db.cachedStatement(sql: "SELECT 1 FROM posts p WHERE p.id = :id AND \(Self.postReadable())" +
                                                     filters.map { " AND " + $0 }.joined())
            var page: [(id: Int64, inComment: Bool)] = [], skipped = 0
            for hit in hits {
                guard page.count < limit else { break }
                arguments["id"] = hit["post_id"] as Int64
                guard try Int.fetchOne(shown, arguments: StatementArguments(arguments)) != nil else { continue }
                if skipped < offset {
                    skipped += 1
                } else {
                    page.append((hit["post_id"], (hit["in_comment"] as Int) == 1))
                }
            }
            let views = try Self.postViews(page.map(\.id), viewer: viewer, now: now, privacy: privacy, db)
            return zip(views, page).map { PostHit(post: $0, inComment: $1.inComment) }
        }
    }

    /// An FTS5 query of the terms: each quoted (a term is folded letters and digits, so it holds
    /// no quote), the last word of each a prefix; all of them (FTS5's implicit AND).
    static func ftsMatch(_ terms: [SearchTerm]) -> String {
        terms.map { "\"\($0.words.joined(separator: " "))\"*" }.joined(separator: " ")
    }
}

// MARK: Shared helpers

extension SpatiaLiteStore {
    /// Whether `viewer` may read the post `post` (an alias of `posts`): its author always; anyone
    /// else never when either blocks the other; otherwise a `public` post anyone, a `friends` post
    /// the author's accepted friends. The one rule of every read, thumb and comment.
    static func postReadable(_ post: String = "p", viewer: String = ":viewer") -> String {
        """
        (\(post).author_id = \(viewer) OR (
            NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker = \(post).author_id AND b.blocked = \(viewer))
            AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker = \(viewer) AND b.blocked = \(post).author_id)
            AND (\(post).visibility = 'public'
                 OR EXISTS (SELECT 1 FROM friendships f WHERE f.requester = \(post).author_id AND f.addressee = \(viewer) AND f.status = 'accepted')
                 OR EXISTS (SELECT 1 FROM friendships f WHERE f.requester = \(viewer) AND f.addressee = \(post).author_id AND f.status = 'accepted'))))
        """
    }

    /// Whether `viewer` sees the comment `c`: not when either of the two blocks the other.
    static func commentShown(_ comment: String = "c", viewer: String = ":viewer") -> String {
        """
        (\(comment).author_id = \(viewer) OR (
            NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker = \(comment).author_id AND b.blocked = \(viewer))
            AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker = \(viewer) AND b.blocked = \(comment).author_id)))
        """
    }

    /// The post's author if `viewer` may read it, else `nil`.
    static func readablePost(_ id: Int64, viewer: UserID, _ db: Database) throws -> UserID? {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT p.author_id FROM posts p WHERE p.id = :id AND \(Self.postReadable())"),
                           arguments: ["id": id, "viewer": viewer.rawValue]).map { UserID($0) }
    }

    /// Checks a change by the author: no such post for anyone who may not read it, not the
    /// author for anyone else.
    static func ownedPost(_ id: Int64, _ author: UserID, _ db: Database) throws {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT p.author_id, \(Self.postReadable()) AS readable FROM posts p WHERE p.id = :id"),
                                         arguments: ["id": id, "viewer": author.rawValue])
        else { throw PostError.noSuchPost }
        guard (row["author_id"] as Int64) == author.rawValue else { throw (row["readable"] as Bool) ? PostError.notAuthor : PostError.noSuchPost }
    }

    /// The author's newest visit to the park that is going on or ended after the given time.
    static let backingVisit = """
        SELECT id FROM visits WHERE user_id = ? AND park_id = ? AND coalesce(left_at, last_evidence_at) >= ? ORDER BY entered_at DESC LIMIT 1
        """

    /// Catalogue ids of the tagged parks and rides, and every park the post is about (the parks,
    /// then the rides' parks), each once in order; an unknown one throws naming its entry.
    static func resolveTags(parks: [ParkID], rides: [RideID], _ db: Database) throws -> (parks: [String], rides: [String], about: [String]) {
        var parkIDs: [String] = [], rideIDs: [String] = [], about: [String] = []
        for (index, park) in parks.enumerated() {
            guard let entry = try Self.catalogParkRow(park, db) else { throw PostError.unknownTag(pointer: "/parks/\(index)") }
            parkIDs.append(entry.id.rawValue)
            if !about.contains(entry.id.rawValue) { about.append(entry.id.rawValue) }
        }
        for (index, ride) in rides.enumerated() {
            guard let entry = try Self.catalogRide(ride, db) else { throw PostError.unknownTag(pointer: "/rides/\(index)") }
            guard !rideIDs.contains(entry.id.rawValue) else { continue }
            rideIDs.append(entry.id.rawValue)
            if !about.contains(entry.park.id.rawValue) { about.append(entry.park.id.rawValue) }
        }
        return (parkIDs, rideIDs, about)
    }

    static func writeTags(_ tags: (parks: [String], rides: [String], about: [String]), hashtags: [String], post: Int64, _ db: Database) throws {
        let insert = try db.cachedStatement(sql: "INSERT OR IGNORE INTO post_tags (post_id, kind, value, position) VALUES (?, ?, ?, ?)")
        for (kind, values) in [("park", tags.parks), ("ride", tags.rides), ("about", tags.about), ("hashtag", hashtags)] {
            for (position, value) in values.enumerated() { try insert.execute(arguments: [post, kind, value, position]) }
        }
    }

    /// The post's tagged parks and rides, as the author tagged them.
    static func tagValues(of post: Int64, _ db: Database) throws -> (parks: [ParkID], rides: [RideID]) {
        let rows = try Row.fetchAll(db.cachedStatement(sql: "SELECT kind, value FROM post_tags WHERE post_id = ? AND kind IN ('park', 'ride') ORDER BY position"),
                                    arguments: [post])
        return (rows.filter { ($0["kind"] as String) == "park" }.map { ParkID(rawValue: $0["value"]) }, rows.filter { ($0["kind"] as String) == "ride" }.map { RideID(rawValue: $0["value"]) })
    }

    /// Refuses a photo that is not the author's, naming its index.
    static func checkPhotos(_ photos: [Int64], author: UserID, _ db: Database) throws {
        let owned = try db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM photos WHERE id = ? AND user_id = ?)")
        for (index, photo) in photos.enumerated() where try Bool.fetchOne(owned, arguments: [photo, author.rawValue]) != true {
            throw PostError.noSuchPhoto(index: index)
        }
    }

    static func writePhotos(_ photos: [Int64], post: Int64, _ db: Database) throws {
        let insert = try db.cachedStatement(sql: "INSERT INTO post_photos (post_id, photo_id, position) VALUES (?, ?, ?)")
        for (position, photo) in photos.enumerated() { try insert.execute(arguments: [post, photo, position]) }
    }

    static func requirePostView(_ id: Int64, viewer: UserID, now: Date, privacy: LocationPrivacy, _ db: Database) throws -> PostView {
        guard let view = try Self.postViews([id], viewer: viewer, now: now, privacy: privacy, db).first else { throw PostError.noSuchPost }
        return view
    }

    /// The posts of these ids as `viewer` sees them, in the order given (the caller decided they
    /// may read them). Four reads for a page, whatever its size: posts, tags, photos, rides.
    static func postViews(_ ids: [Int64], viewer: UserID, now: Date, privacy: LocationPrivacy, _ db: Database) throws -> [PostView] {
        guard !ids.isEmpty else { return [] }
        let list = "[" + ids.map(String.init).joined(separator: ",") + "]"
        var tags: [Int64: [Row]] = [:]
        for row in try Row.fetchAll(db.cachedStatement(sql: """
            SELECT t.post_id, t.kind, t.value, cp.name AS park_name, cp.fenced AS park_fenced FROM post_tags t
            LEFT JOIN catalog_parks cp ON t.kind = 'about' AND cp.id = t.value
            WHERE t.post_id IN (SELECT value FROM json_each(?)) AND t.kind IN ('about', 'ride', 'hashtag') ORDER BY t.post_id, t.kind, t.position
            """), arguments: [list]) {
            tags[row["post_id"], default: []].append(row)
        }
        var photos: [Int64: [Int64]] = [:]
        for row in try Row.fetchAll(db.cachedStatement(sql: """
            SELECT post_id, photo_id FROM post_photos WHERE post_id IN (SELECT value FROM json_each(?)) ORDER BY post_id, position
            """), arguments: [list]) {
            photos[row["post_id"], default: []].append(row["photo_id"])
        }
        let rideIDs = Set(tags.values.joined().filter { ($0["kind"] as String) == "ride" }.map { $0["value"] as String })
        var rides: [String: CatalogRide] = [:]
        if !rideIDs.isEmpty {
            for row in try Row.fetchAll(db.cachedStatement(sql: """
                SELECT r.*, p.name AS park_name, p.fenced AS park_fenced FROM catalog_rides r JOIN catalog_parks p ON p.id = r.park_id
                WHERE r.id IN (SELECT value FROM json_each(?))
                """), arguments: ["[" + rideIDs.map { "\"\($0)\"" }.joined(separator: ",") + "]"]) {
                let ride = Self.catalogRide(from: row)
                rides[ride.id.rawValue] = ride
            }
        }
        var byID: [Int64: PostView] = [:]
        for row in try Row.fetchAll(db.cachedStatement(sql: """
            SELECT p.*, u.username, u.display_name, r.value AS reaction,
                   v.park_id AS visit_park, v.entered_at AS visit_at, coalesce(v.left_at, v.last_evidence_at) AS visit_last,
                   vp.name AS visit_park_name, vp.fenced AS visit_park_fenced
            FROM posts p JOIN users u ON u.id = p.author_id
            LEFT JOIN post_reactions r ON r.post_id = p.id AND r.user_id = :viewer
            LEFT JOIN visits v ON v.id = p.visit_id
            LEFT JOIN catalog_parks vp ON vp.id = v.park_id
            WHERE p.id IN (SELECT value FROM json_each(:ids))
            """), arguments: ["viewer": viewer.rawValue, "ids": list]) {
            let id: Int64 = row["id"]
            let author = UserID(row["author_id"] as Int64)
            let postTags = tags[id] ?? []
            var verified: VerifiedVisit?
            if let park: String = row["visit_park"], let at: Double = row["visit_at"], let last: Double = row["visit_last"],
               author == viewer || privacy.revealsPlace(at: Date(timeIntervalSince1970: last), now: now) {
                verified = VerifiedVisit(park: CatalogPark(id: ParkID(rawValue: park), name: row["visit_park_name"] ?? park, fenced: row["visit_park_fenced"] ?? true),
                                         at: Date(timeIntervalSince1970: at))
            }
            byID[id] = PostView(
                id: id, author: UserSummary(id: author, username: row["username"], displayName: row["display_name"]), text: row["body"],
                visibility: PostVisibility(rawValue: row["visibility"]) ?? .friends, photos: photos[id] ?? [],
                parks: postTags.filter { ($0["kind"] as String) == "about" }.map {
                    CatalogPark(id: ParkID(rawValue: $0["value"]), name: $0["park_name"] ?? $0["value"], fenced: $0["park_fenced"] ?? false)
                },
                rides: postTags.filter { ($0["kind"] as String) == "ride" }.compactMap { rides[$0["value"] as String] },
                hashtags: postTags.filter { ($0["kind"] as String) == "hashtag" }.map { $0["value"] },
                verified: verified, ups: row["ups"], downs: row["downs"], comments: row["comments"],
                reaction: (row["reaction"] as String?).flatMap(Reaction.init(rawValue:)),
                createdAt: Date(timeIntervalSince1970: row["created_at"]), editedAt: (row["edited_at"] as Double?).map(Date.init(timeIntervalSince1970:)))
        }
        return ids.compactMap { byID[$0] }
    }

    static func commentViews(where condition: String, order: String = "", _ arguments: [String: (any DatabaseValueConvertible)?], _ db: Database) throws -> [CommentView] {
        try Row.fetchAll(db.cachedStatement(sql: """
            SELECT c.id, c.post_id, c.author_id, c.body, c.created_at, u.username, u.display_name FROM comments c JOIN users u ON u.id = c.author_id
            WHERE \(condition) \(order)
            """), arguments: StatementArguments(arguments)).map { row in
            CommentView(id: row["id"], post: row["post_id"],
                        author: UserSummary(id: UserID(row["author_id"] as Int64), username: row["username"], displayName: row["display_name"]),
                        text: row["body"], createdAt: Date(timeIntervalSince1970: row["created_at"]))
        }
    }
}
