import CoasterCore
import Foundation
import GRDB

/// What a read that may find a challenge due for its winners did: its answer, or nothing because
/// it must be answered again after the winners are fixed (a write).
private enum FinalizingRead<T: Sendable>: Sendable {
    case done(T)
    case due
}

extension SpatiaLiteStore: ChallengeStore {
    public func createChallenge(_ draft: ChallengeDraft, author: UserID, rules: ChallengeRules, timeToLive: TimeInterval) async throws -> ChallengeView {
        let now = self.now()
        return try await self.pool.write { db in
            if case .ride(let ride) = draft.unit {
                guard try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM rides WHERE id = ? AND listed = 1)"),
                                        arguments: [ride.rawValue]) == true
                else { throw ChallengeError.unknownRide(ride) }
            }
            for (index, park) in draft.parks.enumerated() {
                guard try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM parks WHERE id = ?)"),
                                        arguments: [park.rawValue]) == true
                else { throw ChallengeError.unknownPark(index: index) }
            }
            try Self.checkMembershipLimit(author, rules: rules, now: now, db)
            let rideID: String? = if case .ride(let ride) = draft.unit { ride.rawValue } else { nil }
            let finalAt = ChallengeRules.finalAt(end: draft.end, unit: draft.unit, timeToLive: timeToLive)
            try db.execute(sql: """
                INSERT INTO challenges (author_id, name, description, unit, unit_label, ride_id, target, start_at, end_at, final_at, visibility,
                                        evidence, created_at, participants)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)
                """, arguments: [author.rawValue, draft.name, draft.description, draft.unit.name, draft.unit.label, rideID, draft.target,
                                 draft.start.timeIntervalSince1970, draft.end.timeIntervalSince1970, finalAt.timeIntervalSince1970,
                                 draft.visibility.rawValue, draft.evidence.rawValue, now.timeIntervalSince1970])
            let id = db.lastInsertedRowID
            for (position, park) in draft.parks.enumerated() {
                try db.execute(sql: "INSERT INTO challenge_parks (challenge_id, park_id, position) VALUES (?, ?, ?)",
                               arguments: [id, park.rawValue, position])
            }
            try db.execute(sql: "INSERT INTO challenge_members (challenge_id, user_id, state, joined_at, ends_at) VALUES (?, ?, 'member', ?, ?)",
                           arguments: [id, author.rawValue, now.timeIntervalSince1970, draft.end.timeIntervalSince1970])
            guard let view = try Self.visibleView(id, viewer: author, db) else { throw ChallengeError.noSuchChallenge }
            return view
        }
    }

    public func challenge(_ id: Int64, viewer: UserID) async throws -> ChallengeView? {
        let now = self.now()
        return try await self.finalizingRead(now: now, due: { try Self.dueChallenge(id, now: now, $0) }) { db in
            try Self.visibleView(id, viewer: viewer, db)
        }
    }

    public func editChallenge(_ id: Int64, author: UserID, name: String?, description: String?) async throws -> ChallengeView {
        let now = self.now()
        return try await self.pool.write { db in
            let row = try Self.authored(id, author, db)
            guard now.timeIntervalSince1970 < row["start_at"] else { throw ChallengeError.alreadyStarted }
            try db.execute(sql: "UPDATE challenges SET name = coalesce(?, name), description = coalesce(?, description) WHERE id = ?",
                           arguments: [name, description, id])
            return try Self.requireView(id, viewer: author, db)
        }
    }

    public func endChallenge(_ id: Int64, author: UserID, timeToLive: TimeInterval) async throws -> ChallengeView {
        let now = self.now()
        return try await self.pool.write { db in
            let row = try Self.authored(id, author, db)
            let t = now.timeIntervalSince1970
            guard t >= row["start_at"] else { throw ChallengeError.notStarted }
            guard t < row["end_at"] else { throw ChallengeError.ended }
            let unit = Self.unit(row)
            let finalAt = ChallengeRules.finalAt(end: now, unit: unit, timeToLive: timeToLive)
            try db.execute(sql: "UPDATE challenges SET end_at = ?, final_at = ? WHERE id = ?", arguments: [t, finalAt.timeIntervalSince1970, id])
            try db.execute(sql: "UPDATE challenge_members SET ends_at = ? WHERE challenge_id = ?", arguments: [t, id])
            // Hand entries are final at the end: such a challenge ends with its winners.
            try Self.finalizeIfDue(id, now: now, db)
            return try Self.requireView(id, viewer: author, db)
        }
    }

    public func deleteChallenge(_ id: Int64, author: UserID) async throws {
        try await self.pool.write { db in
            _ = try Self.authored(id, author, db)
            try db.execute(sql: "DELETE FROM challenges WHERE id = ?", arguments: [id])
        }
    }

    public func invite(_ id: Int64, author: UserID, users: [UserID]) async throws -> [UserSummary] {
        let now = self.now()
        return try await self.pool.write { db in
            let row = try Self.authored(id, author, db)
            let t = now.timeIntervalSince1970
            guard t < row["end_at"] else { throw ChallengeError.ended }
            let friends = try db.cachedStatement(sql: """
                SELECT EXISTS (SELECT 1 FROM friendships
                               WHERE ((requester = :a AND addressee = :b) OR (requester = :b AND addressee = :a)) AND status = 'accepted')
                """)
            for (index, user) in users.enumerated() where user != author {
                guard try Bool.fetchOne(friends, arguments: ["a": author.rawValue, "b": user.rawValue]) == true else {
                    throw ChallengeError.notAFriend(index: index)
                }
            }
            var invited: [UserSummary] = []
            for user in users where user != author {
                switch try Self.membership(id, user, db) {
                case .member, .invited:
                    continue
                case .declined:
                    try db.execute(sql: "UPDATE challenge_members SET state = 'invited', invited_at = ? WHERE challenge_id = ? AND user_id = ?",
                                   arguments: [t, id, user.rawValue])
                case nil:
                    try db.execute(sql: """
                        INSERT INTO challenge_members (challenge_id, user_id, state, invited_at, ends_at) VALUES (?, ?, 'invited', ?, ?)
                        """, arguments: [id, user.rawValue, t, row["end_at"] as Double])
                }
                if let summary = try Self.userSummary(user, db) { invited.append(summary) }
            }
            return invited
        }
    }

    public func join(_ id: Int64, user: UserID, rules: ChallengeRules) async throws -> ChallengeView {
        let now = self.now()
        return try await self.pool.write { db in
            let (row, membership) = try Self.requireVisible(id, user, db)
            let t = now.timeIntervalSince1970
            guard t < row["end_at"] else { throw ChallengeError.ended }
            guard membership != .member else { return try Self.requireView(id, viewer: user, db) }
            try Self.checkMembershipLimit(user, rules: rules, now: now, db)
            if membership == nil {
                try db.execute(sql: "INSERT INTO challenge_members (challenge_id, user_id, state, joined_at, ends_at) VALUES (?, ?, 'member', ?, ?)",
                               arguments: [id, user.rawValue, t, row["end_at"] as Double])
            } else {
                try db.execute(sql: """
                    UPDATE challenge_members SET state = 'member', joined_at = ?, ends_at = ?, progress = 0, reached_at = 0, shown_progress = 0,
                        shown_reached_at = 0, won = 0
                    WHERE challenge_id = ? AND user_id = ?
                    """, arguments: [t, row["end_at"] as Double, id, user.rawValue])
            }
            try db.execute(sql: "UPDATE challenges SET participants = participants + 1 WHERE id = ?", arguments: [id])
            return try Self.requireView(id, viewer: user, db)
        }
    }

    public func decline(_ id: Int64, user: UserID) async throws {
        try await self.pool.write { db in
            let (_, membership) = try Self.requireVisible(id, user, db)
            guard membership == .invited else { throw ChallengeError.notInvited }
            try db.execute(sql: "UPDATE challenge_members SET state = 'declined' WHERE challenge_id = ? AND user_id = ?", arguments: [id, user.rawValue])
        }
    }

    public func leave(_ id: Int64, user: UserID) async throws {
        try await self.pool.write { db in
            let (row, membership) = try Self.requireVisible(id, user, db)
            guard (row["author_id"] as Int64) != user.rawValue else { throw ChallengeError.authorCannotLeave }
            guard membership == .member else { throw ChallengeError.notAMember }
            try db.execute(sql: "DELETE FROM challenge_members WHERE challenge_id = ? AND user_id = ?", arguments: [id, user.rawValue])
            try db.execute(sql: "UPDATE challenges SET participants = participants - 1 WHERE id = ?", arguments: [id])
        }
    }

    public func ranking(_ id: Int64, viewer: UserID, limit: Int, offset: Int) async throws -> ChallengeRanking? {
        let now = self.now()
        return try await self.finalizingRead(now: now, due: { try Self.dueChallenge(id, now: now, $0) }) { db in
            try Self.ranking(id, viewer: viewer, limit: max(0, limit), offset: max(0, offset), db)
        }
    }

    public func addEntry(_ id: Int64, user: UserID, amount: Double, note: String?, photo: Int64?, rules: ChallengeRules) async throws
        -> (entry: ChallengeEntry, move: ChallengeMove)
    {
        let now = self.now()
        return try await self.pool.write { db in
            let (row, membership) = try Self.requireVisible(id, user, db)
            guard membership == .member, let member = try Self.memberRow(id, user, db) else { throw ChallengeError.notAMember }
            guard case .custom = Self.unit(row) else { throw ChallengeError.notCustom }
            let t = now.timeIntervalSince1970
            guard t < row["end_at"] else { throw ChallengeError.ended }
            guard t >= max(row["start_at"] as Double, member["joined_at"] as Double? ?? 0) else { throw ChallengeError.notStarted }
            if let photo {
                guard try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM photos WHERE id = ? AND user_id = ?)"),
                                        arguments: [photo, user.rawValue]) == true
                else { throw ChallengeError.noSuchPhoto }
            }
            let entries = try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM challenge_entries WHERE challenge_id = ? AND user_id = ?"),
                                           arguments: [id, user.rawValue]) ?? 0
            guard entries < rules.maximumEntries else { throw ChallengeError.tooManyEntries(limit: rules.maximumEntries) }
            try db.execute(sql: "INSERT INTO challenge_entries (challenge_id, user_id, amount, note, photo_id, at) VALUES (?, ?, ?, ?, ?, ?)",
                           arguments: [id, user.rawValue, amount, note, photo, t])
            let entryID = db.lastInsertedRowID
            try db.execute(sql: """
                UPDATE challenge_members SET progress = progress + :amount, shown_progress = shown_progress + :amount, reached_at = :at,
                    shown_reached_at = :at
                WHERE challenge_id = :c AND user_id = :u
                """, arguments: ["amount": amount, "at": t, "c": id, "u": user.rawValue])
            guard let move = try Self.move(id, user, db), let summary = try Self.userSummary(user, db) else { throw ChallengeError.notAMember }
            return (ChallengeEntry(id: entryID, challenge: id, user: summary, amount: amount, note: note, photo: photo, at: now), move)
        }
    }

    public func deleteEntry(_ id: Int64, entry: Int64, user: UserID) async throws -> ChallengeMove {
        try await self.pool.write { db in
            _ = try Self.requireVisible(id, user, db)
            try db.execute(sql: "DELETE FROM challenge_entries WHERE id = ? AND challenge_id = ? AND user_id = ?", arguments: [entry, id, user.rawValue])
            guard db.changesCount == 1 else { throw ChallengeError.noSuchEntry }
            try db.execute(sql: """
                UPDATE challenge_members SET
                    progress = (SELECT coalesce(sum(amount), 0) FROM challenge_entries WHERE challenge_id = :c AND user_id = :u),
                    reached_at = (SELECT coalesce(max(at), 0) FROM challenge_entries WHERE challenge_id = :c AND user_id = :u)
                WHERE challenge_id = :c AND user_id = :u
                """, arguments: ["c": id, "u": user.rawValue])
            try db.execute(sql: """
                UPDATE challenge_members SET shown_progress = progress, shown_reached_at = reached_at WHERE challenge_id = ? AND user_id = ?
                """, arguments: [id, user.rawValue])
            guard let move = try Self.move(id, user, db) else { throw ChallengeError.noSuchEntry }
            return move
        }
    }

    public func gallery(_ id: Int64, viewer: UserID, limit: Int, before: Int64?) async throws -> [ChallengeEntry]? {
        try await self.pool.read { db in
            guard try Self.visible(id, viewer, db) != nil else { return nil }
            return try Row.fetchAll(db.cachedStatement(sql: """
                SELECT e.*, u.username, u.display_name FROM challenge_entries e JOIN users u ON u.id = e.user_id
                WHERE e.challenge_id = ? AND e.photo_id IS NOT NULL AND e.id < ? ORDER BY e.id DESC LIMIT ?
                """), arguments: [id, before ?? Int64.max, max(0, limit)]).map(Self.entry)
        }
    }

    public func challenges(of user: UserID, list: ChallengeList, limit: Int, before: Int64?) async throws -> [ChallengeView] {
        let now = self.now()
        let t = now.timeIntervalSince1970
        let (state, condition) = switch list {
        case .ongoing: ("member", "c.start_at <= :now AND :now < c.end_at")
        case .upcoming: ("member", ":now < c.start_at")
        case .completed: ("member", "c.end_at <= :now")
        case .won: ("member", "m.won = 1")
        case .invited: ("invited", "c.end_at > :now")
        }
        let page = """
            SELECT c.id FROM challenge_members m JOIN challenges c ON c.id = m.challenge_id
            WHERE m.user_id = :user AND m.state = '\(state)' AND m.challenge_id < :before AND \(condition)
            ORDER BY m.challenge_id DESC LIMIT :limit
            """
        let arguments: StatementArguments = ["user": user.rawValue, "before": before ?? Int64.max, "limit": max(0, limit), "now": t]
        // The user's challenges due for their winners, at most a page of them, newest first: those
        // a page of any list may show (a completed challenge, or one the user won) are fixed first.
        let due = list == .invited ? nil : """
            SELECT c.id FROM challenge_members m JOIN challenges c ON c.id = m.challenge_id
            WHERE m.user_id = :user AND m.state = 'member' AND m.challenge_id < :before AND c.finalized_at IS NULL AND c.final_at <= :now
            ORDER BY m.challenge_id DESC LIMIT :limit
            """
        return try await self.finalizingRead(now: now, due: { db in
            guard let due else { return [] }
            return try Int64.fetchAll(db.cachedStatement(sql: due), arguments: arguments)
        }) { db in
            try Int64.fetchAll(db.cachedStatement(sql: page), arguments: arguments).compactMap { try Self.visibleView($0, viewer: user, db) }
        }
    }

    public func searchChallenges(_ query: String?, park: ParkID?, viewer: UserID, limit: Int, offset: Int) async throws -> [ChallengeView] {
        let words = ChallengeRules.searchWords(query ?? "")
        // Words are runs of letters and digits; quoted, each is one FTS5 string, matched as a prefix.
        let match = words.isEmpty ? nil : words.map { "\"\($0)\"*" }.joined(separator: " AND ")
        // The public challenges not yet final in the order of `challenges_public`, filtered by the
        // words' matches and the park.
        let sql = """
            SELECT id FROM challenges c WHERE visibility = 'public' AND finalized_at IS NULL\(match == nil ? "" : Self.matching)\(park == nil ? "" : Self.inPark)
            ORDER BY participants DESC, id DESC LIMIT :limit OFFSET :offset
            """
        let arguments: StatementArguments = ["match": match, "park": park?.rawValue, "limit": max(0, limit), "offset": max(0, offset)]
        return try await self.pool.read { db in
            try Int64.fetchAll(db.cachedStatement(sql: sql), arguments: arguments).compactMap { try Self.visibleView($0, viewer: viewer, db) }
        }
    }

    static let matching = " AND id IN (SELECT rowid FROM challenges_fts WHERE challenges_fts MATCH :match)"
    static let inPark = " AND EXISTS (SELECT 1 FROM challenge_parks p WHERE p.challenge_id = c.id AND p.park_id = :park)"

    public func trendingChallenges(since: Date, viewer: UserID, limit: Int) async throws -> [ChallengeView] {
        try await self.pool.read { db in
            try Int64.fetchAll(db.cachedStatement(sql: Self.trending), arguments: ["since": since.timeIntervalSince1970, "limit": max(0, limit)])
                .compactMap { try Self.visibleView($0, viewer: viewer, db) }
        }
    }

    /// Public challenges not yet final by joins and likes since a time: each part a range of its
    /// time index (`challenge_joins`, `challenge_likes_by_time`), grouped by challenge. Named,
    /// because SQLite would rather walk a whole index in challenge order than group a range.
    static let trending = """
        WITH recent(challenge_id, n) AS (
            SELECT challenge_id, count(*) FROM challenge_members INDEXED BY challenge_joins WHERE state = 'member' AND joined_at >= :since
            GROUP BY challenge_id
            UNION ALL
            SELECT challenge_id, count(*) FROM challenge_likes INDEXED BY challenge_likes_by_time WHERE at >= :since GROUP BY challenge_id
        )
        SELECT c.id FROM recent r JOIN challenges c ON c.id = r.challenge_id
        WHERE c.visibility = 'public' AND c.finalized_at IS NULL
        GROUP BY c.id HAVING sum(r.n) > 0
        ORDER BY sum(r.n) DESC, c.participants DESC, c.id DESC LIMIT :limit
        """

    public func setChallengeLike(_ id: Int64, user: UserID, liked: Bool) async throws -> ChallengeView {
        let now = self.now()
        return try await self.pool.write { db in
            _ = try Self.requireVisible(id, user, db)
            if liked {
                try db.execute(sql: "INSERT INTO challenge_likes (challenge_id, user_id, at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                               arguments: [id, user.rawValue, now.timeIntervalSince1970])
                if db.changesCount == 1 { try db.execute(sql: "UPDATE challenges SET likes = likes + 1 WHERE id = ?", arguments: [id]) }
            } else {
                try db.execute(sql: "DELETE FROM challenge_likes WHERE challenge_id = ? AND user_id = ?", arguments: [id, user.rawValue])
                if db.changesCount == 1 { try db.execute(sql: "UPDATE challenges SET likes = likes - 1 WHERE id = ?", arguments: [id]) }
            }
            try Self.finalizeIfDue(id, now: now, db)
            return try Self.requireView(id, viewer: user, db)
        }
    }

    /// Whether the credit `credit` (an alias of `challenge_credits`) is not a visit's, or its
    /// visit has no evidence from `before` (an SQL expression) on: until a visit is over its
    /// credit says where its rider may still be, so others see it only once the visit's last
    /// evidence is older than the time-to-live, as a post's "I was there". One probe of the
    /// visit's primary key.
    static func visitOver(_ credit: String, before: String) -> String {
        """
        (\(credit).source <> 'visit' OR NOT EXISTS (
            SELECT 1 FROM visits v WHERE v.id = \(credit).source_id AND coalesce(v.left_at, v.last_evidence_at) > \(before)))
        """
    }

    public func settleChallengeCredits(through cutoff: Date, limit: Int) async throws -> [ChallengeMove] {
        try await self.pool.write { db in
            let credits = try Row.fetchAll(db.cachedStatement(sql: """
                SELECT c.id, c.challenge_id, c.user_id, c.amount, c.at FROM challenge_credits c
                WHERE c.shown = 0 AND c.at <= :cutoff AND \(Self.visitOver("c", before: ":cutoff")) ORDER BY c.at, c.id LIMIT :limit
                """), arguments: ["cutoff": cutoff.timeIntervalSince1970, "limit": max(0, limit)])
            var moved = Set<[Int64]>()
            for credit in credits {
                try Self.show(credit, db)
                moved.insert([credit["challenge_id"], credit["user_id"]])
            }
            return try moved.sorted { ($0[0], $0[1]) < ($1[0], $1[1]) }.compactMap { try Self.move($0[0], UserID($0[1]), db) }
        }
    }

    @discardableResult
    public func finalizeChallenges(limit: Int) async throws -> [Int64] {
        let now = self.now()
        return try await self.pool.write { db in
            let due = try Int64.fetchAll(db.cachedStatement(sql: """
                SELECT id FROM challenges WHERE finalized_at IS NULL AND final_at <= ? ORDER BY final_at, id LIMIT ?
                """), arguments: [now.timeIntervalSince1970, max(0, limit)])
            for id in due { try Self.finalize(id, now: now, db) }
            return due
        }
    }

    public func challengeMoves(of user: UserID, source: String, id: Int64) async throws -> [ChallengeMove] {
        try await self.pool.read { db in
            try Int64.fetchAll(db.cachedStatement(sql: """
                SELECT DISTINCT challenge_id FROM challenge_credits WHERE user_id = ? AND source = ? AND source_id = ? ORDER BY challenge_id
                """), arguments: [user.rawValue, source, id]).compactMap { try Self.move($0, user, db) }
        }
    }

    public func challengeMembers(_ id: Int64, among users: [UserID]) async throws -> [UserID] {
        guard !users.isEmpty else { return [] }
        return try await self.pool.read { db -> [UserID] in
            var members: [UserID] = []
            // In slices: a statement binds at most so many values.
            for start in stride(from: 0, to: users.count, by: 500) {
                let slice = users[start..<min(users.count, start + 500)]
                let marks = Array(repeating: "?", count: slice.count).joined(separator: ", ")
                let values: [Int64] = [id] + slice.map(\.rawValue)
                let found = try Int64.fetchAll(db, sql: """
                    SELECT user_id FROM challenge_members WHERE challenge_id = ? AND state = 'member' AND user_id IN (\(marks))
                    """, arguments: StatementArguments(values))
                members += found.map { UserID($0) }
            }
            return members.sorted()
        }
    }

    // MARK: Counting: the ride-log and visit hooks

    /// Credits `evidence` (a ride log or a visit just written) to every active challenge of the
    /// user that counts it (``ChallengeRules/credit(_:challenge:joinedAt:)`` decides), in the
    /// transaction that wrote it. Each credit is a unique row, so nothing counts twice; the
    /// member's own progress moves at once, what others see when the credit is settled.
    static func creditChallenges(user: UserID, evidence: ChallengeEvidence, now: Date, _ db: Database) throws {
        let t = now.timeIntervalSince1970
        let candidates: [Row] = switch evidence {
        case .rideLog(_, let ride, _, _, _, _):
            try Row.fetchAll(db.cachedStatement(sql: Self.activeChallenges + " AND (c.unit IN ('rides', 'credits') OR c.unit = :ride) ORDER BY c.id"),
                             arguments: ["user": user.rawValue, "now": t, "ride": "ride:" + ride.rawValue])
        case .visit:
            try Row.fetchAll(db.cachedStatement(sql: Self.activeChallenges + " AND c.unit IN ('parks', 'visits') ORDER BY c.id"),
                             arguments: ["user": user.rawValue, "now": t])
        }
        guard !candidates.isEmpty else { return }
        let rules = ChallengeRules()
        let (ride, level): (RideID?, RideEvidence?) = if case .rideLog(_, let ride, _, _, let level, _) = evidence { (ride, level) } else { (nil, nil) }
        for row in candidates {
            let id: Int64 = row["id"]
            let challenge = Self.challenge(row, author: UserSummary(id: UserID(row["author_id"] as Int64), username: "", displayName: ""),
                                           parks: try Self.parks(of: id, db))
            guard let credit = rules.credit(evidence, challenge: challenge, joinedAt: Date(timeIntervalSince1970: row["joined_at"] ?? 0))
            else { continue }
            if let first = credit.firstSince, try Bool.fetchOne(db.cachedStatement(sql: """
                SELECT EXISTS (SELECT 1 FROM ride_logs WHERE user_id = ? AND ride_id = ? AND ridden_at < ?)
                """), arguments: [user.rawValue, first.ride.rawValue, first.since.timeIntervalSince1970]) == true {
                continue
            }
            let at = evidence.at.timeIntervalSince1970
            try db.cachedStatement(sql: """
                INSERT INTO challenge_credits (challenge_id, user_id, source, source_id, distinct_key, amount, at, park_id, ride_id, evidence)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
                """).execute(arguments: [id, user.rawValue, evidence.source, evidence.sourceID, credit.distinctKey, credit.amount, at,
                                         evidence.park.rawValue, ride?.rawValue, level?.rawValue])
            guard db.changesCount == 1 else { continue }
            try db.cachedStatement(sql: "UPDATE challenge_members SET progress = progress + ?, reached_at = ? WHERE challenge_id = ? AND user_id = ?")
                .execute(arguments: [credit.amount, at, id, user.rawValue])
        }
    }

    /// The user's memberships of challenges that have started and not ended, from
    /// `challenge_members_active`; the caller adds which units count its evidence, and the order
    /// (by challenge id, so that credits get their ids in that order on both stores).
    static let activeChallenges = """
        SELECT c.*, m.joined_at FROM challenge_members m JOIN challenges c ON c.id = m.challenge_id
        WHERE m.user_id = :user AND m.state = 'member' AND m.ends_at > :now AND c.start_at <= :now
        """

    // MARK: Settling and winners

    /// Shows one credit to everyone: its member's shown progress takes it.
    private static func show(_ credit: Row, _ db: Database) throws {
        try db.cachedStatement(sql: """
            UPDATE challenge_members SET shown_progress = shown_progress + ?, shown_reached_at = max(shown_reached_at, ?)
            WHERE challenge_id = ? AND user_id = ?
            """).execute(arguments: [credit["amount"] as Double, credit["at"] as Double, credit["challenge_id"] as Int64, credit["user_id"] as Int64])
        try db.cachedStatement(sql: "UPDATE challenge_credits SET shown = 1 WHERE id = ?").execute(arguments: [credit["id"] as Int64])
    }

    /// Fixes the winners of a challenge whose final time has come, if no one has yet.
    static func finalizeIfDue(_ id: Int64, now: Date, _ db: Database) throws {
        guard try !Self.dueChallenge(id, now: now, db).isEmpty else { return }
        try Self.finalize(id, now: now, db)
    }

    /// `[id]` if that challenge is due for its winners, else nothing.
    static func dueChallenge(_ id: Int64, now: Date, _ db: Database) throws -> [Int64] {
        try Int64.fetchAll(db.cachedStatement(sql: "SELECT id FROM challenges WHERE id = ? AND finalized_at IS NULL AND final_at <= ?"),
                           arguments: [id, now.timeIntervalSince1970])
    }

    /// Fixes a challenge's winners: every credit still hidden is shown (the final time is past
    /// every window's privacy delay), then those level with the first line win, if it has any
    /// progress, and get their badges.
    static func finalize(_ id: Int64, now: Date, _ db: Database) throws {
        guard try Bool.fetchOne(db.cachedStatement(sql: "SELECT finalized_at IS NULL FROM challenges WHERE id = ?"), arguments: [id]) == true
        else { return }
        // In any order: a member's shown progress ends as the sum and latest time of their credits.
        for credit in try Row.fetchAll(db.cachedStatement(sql: """
            SELECT id, challenge_id, user_id, amount, at FROM challenge_credits WHERE challenge_id = ? AND shown = 0
            """), arguments: [id]) {
            try Self.show(credit, db)
        }
        if let top = try Row.fetchOne(db.cachedStatement(sql: """
            SELECT shown_progress, shown_reached_at FROM challenge_members WHERE challenge_id = ? AND state = 'member'
            ORDER BY shown_progress DESC, shown_reached_at LIMIT 1
            """), arguments: [id]), (top["shown_progress"] as Double) > 0 {
            let winners = try Int64.fetchAll(db.cachedStatement(sql: """
                SELECT user_id FROM challenge_members
                WHERE challenge_id = ? AND state = 'member' AND shown_progress = ? AND shown_reached_at = ? ORDER BY user_id
                """), arguments: [id, top["shown_progress"] as Double, top["shown_reached_at"] as Double])
            for winner in winners {
                try db.execute(sql: "UPDATE challenge_members SET won = 1 WHERE challenge_id = ? AND user_id = ?", arguments: [id, winner])
                try Self.awardBadges(UserID(winner), at: now, db)
            }
        }
        try db.execute(sql: "UPDATE challenges SET finalized_at = ? WHERE id = ?", arguments: [now.timeIntervalSince1970, id])
    }

    /// Answers `body` from a read, or, when `due` names challenges due for their winners, from a
    /// write that fixes them first: a read never shows a completed challenge without its winners,
    /// and most reads take no writer.
    private func finalizingRead<T: Sendable>(
        now: Date, due: @escaping @Sendable (Database) throws -> [Int64], _ body: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        let read: FinalizingRead<T> = try await self.pool.read { db in try due(db).isEmpty ? .done(try body(db)) : .due }
        if case .done(let answer) = read { return answer }
        return try await self.pool.write { db in
            for id in try due(db) { try Self.finalize(id, now: now, db) }
            return try body(db)
        }
    }

    // MARK: Rankings and moves

    /// Members other than `user` whose shown line is strictly ahead of (progress, reachedAt):
    /// two ranges of `challenge_ranking`.
    static let aheadOf = """
        SELECT (SELECT count(*) FROM challenge_members
                WHERE challenge_id = :c AND state = 'member' AND shown_progress > :p AND user_id != :u)
             + (SELECT count(*) FROM challenge_members
                WHERE challenge_id = :c AND state = 'member' AND shown_progress = :p AND shown_reached_at < :r AND user_id != :u) AS ahead,
               (SELECT count(*) FROM challenge_members
                WHERE challenge_id = :c AND state = 'member' AND shown_progress = :p AND shown_reached_at = :r AND user_id < :u) AS level
        """

    /// Lines ahead of (progress, reachedAt) among the others' shown lines, and those level with it
    /// with a lower user id (which come before it in a ranking).
    private static func ahead(_ challenge: Int64, progress: Double, reachedAt: Double, excluding user: UserID, _ db: Database) throws
        -> (ahead: Int, level: Int)
    {
        let row = try Row.fetchOne(db.cachedStatement(sql: Self.aheadOf),
                                   arguments: ["c": challenge, "p": progress, "r": reachedAt, "u": user.rawValue])!
        return (row["ahead"], row["level"])
    }

    /// A member's progress and ranks as everyone else sees them and as they do; `nil` for no member.
    static func move(_ challenge: Int64, _ user: UserID, _ db: Database) throws -> ChallengeMove? {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: """
            SELECT m.progress, m.reached_at, m.shown_progress, m.shown_reached_at, c.name, u.id, u.username, u.display_name
            FROM challenge_members m JOIN challenges c ON c.id = m.challenge_id JOIN users u ON u.id = m.user_id
            WHERE m.challenge_id = ? AND m.user_id = ? AND m.state = 'member'
            """), arguments: [challenge, user.rawValue]) else { return nil }
        let shown = try Self.ahead(challenge, progress: row["shown_progress"], reachedAt: row["shown_reached_at"], excluding: user, db)
        let own = try Self.ahead(challenge, progress: row["progress"], reachedAt: row["reached_at"], excluding: user, db)
        return ChallengeMove(challenge: challenge, name: row["name"], user: Self.summary(row), shownProgress: row["shown_progress"],
                             shownRank: shown.ahead + 1, progress: row["progress"], rank: own.ahead + 1)
    }

    /// A ranking page: the others' shown lines, a range of `challenge_ranking`, with the viewer's
    /// own line in its place among them when they take part.
    private static func ranking(_ id: Int64, viewer: UserID, limit: Int, offset: Int, _ db: Database) throws -> ChallengeRanking? {
        guard let view = try Self.visibleView(id, viewer: viewer, db) else { return nil }
        struct Line {
            var user: UserSummary
            var progress: Double
            var reachedAt: Double
            var isViewer: Bool
            func isAhead(of other: Line) -> Bool {
                self.progress > other.progress || (self.progress == other.progress && self.reachedAt < other.reachedAt)
            }
        }
        var mine: (line: Line, ahead: Int, place: Int, shown: Double)?
        if view.membership == .member, let row = try Row.fetchOne(db.cachedStatement(sql: """
            SELECT m.progress, m.reached_at, m.shown_progress, u.id, u.username, u.display_name
            FROM challenge_members m JOIN users u ON u.id = m.user_id WHERE m.challenge_id = ? AND m.user_id = ?
            """), arguments: [id, viewer.rawValue]) {
            let line = Line(user: Self.summary(row), progress: row["progress"], reachedAt: row["reached_at"], isViewer: true)
            let (ahead, level) = try Self.ahead(id, progress: line.progress, reachedAt: line.reachedAt, excluding: viewer, db)
            mine = (line, ahead, ahead + level, row["shown_progress"])
        }
        // The viewer's line sits at `place` of the whole order: a page past it reads the others one
        // earlier, and a page holding it reads one fewer.
        let onPage = mine.map { $0.place >= offset && $0.place < offset + limit } ?? false
        let skip = mine.map { $0.place < offset } == true ? offset - 1 : offset
        let take = onPage ? limit - 1 : limit
        var lines = take <= 0 ? [] : try Row.fetchAll(db.cachedStatement(sql: """
            SELECT m.shown_progress, m.shown_reached_at, u.id, u.username, u.display_name
            FROM challenge_members m JOIN users u ON u.id = m.user_id
            WHERE m.challenge_id = ? AND m.state = 'member' AND m.user_id != ?
            ORDER BY m.shown_progress DESC, m.shown_reached_at, m.user_id LIMIT ? OFFSET ?
            """), arguments: [id, viewer.rawValue, take, skip]).map {
            Line(user: Self.summary($0), progress: $0["shown_progress"], reachedAt: $0["shown_reached_at"], isViewer: false)
        }
        if let mine, onPage { lines.insert(mine.line, at: min(lines.count, mine.place - offset)) }
        var entries: [ChallengeRankingEntry] = []
        for (index, line) in lines.enumerated() {
            let rank: Int
            if index > 0, !lines[index - 1].isAhead(of: line) {
                rank = entries[index - 1].rank
            } else if index > 0 {
                rank = offset + index + 1
            } else if line.isViewer, let mine {
                rank = mine.ahead + 1
            } else {
                let others = try Self.ahead(id, progress: line.progress, reachedAt: line.reachedAt, excluding: viewer, db).ahead
                rank = others + 1 + (mine.map { $0.line.isAhead(of: line) } == true ? 1 : 0)
            }
            entries.append(ChallengeRankingEntry(rank: rank, user: line.user, progress: line.progress,
                                                 lastActivity: line.reachedAt > 0 ? Date(timeIntervalSince1970: line.reachedAt) : nil))
        }
        let counted = mine == nil ? [] : try Row.fetchAll(db.cachedStatement(sql: Self.counted), arguments: ["c": id, "u": viewer.rawValue]).map {
            ChallengeCountedItem(source: $0["source"], id: $0["id"], amount: $0["amount"], at: Date(timeIntervalSince1970: $0["at"]),
                                 park: ($0["park_id"] as String?).map(ParkID.init(rawValue:)),
                                 ride: ($0["ride_id"] as String?).map(RideID.init(rawValue:)),
                                 evidence: ($0["evidence"] as String?).flatMap(RideEvidence.init(rawValue:)))
        }
        let own = mine.map {
            ChallengeRankingEntry(rank: $0.ahead + 1, user: $0.line.user, progress: $0.line.progress,
                                  lastActivity: $0.line.reachedAt > 0 ? Date(timeIntervalSince1970: $0.line.reachedAt) : nil)
        }
        return ChallengeRanking(view: view, entries: entries, mine: own, pending: mine.map { $0.line.progress - $0.shown } ?? 0, counted: counted)
    }

    /// The viewer's newest counted items: credits (by their source row) and hand entries, each
    /// `id` the item's own (the ride log's, the visit's, the entry's).
    static let counted = """
        SELECT source, source_id AS id, amount, at, park_id, ride_id, evidence FROM challenge_credits WHERE challenge_id = :c AND user_id = :u
        UNION ALL
        SELECT 'entry', id, amount, at, NULL, NULL, NULL FROM challenge_entries WHERE challenge_id = :c AND user_id = :u
        ORDER BY at DESC, id DESC LIMIT 50
        """

    // MARK: Reading challenges

    /// A challenge's row with its author's name (`author_username`, `author_display_name`).
    static let challengeByID = """
        SELECT c.*, u.username AS author_username, u.display_name AS author_display_name
        FROM challenges c JOIN users u ON u.id = c.author_id WHERE c.id = ?
        """

    /// The challenge's row and the viewer's place in it, if the viewer may see it: public, or they
    /// are a member or invited.
    static func visible(_ id: Int64, _ viewer: UserID, _ db: Database) throws -> (row: Row, membership: ChallengeMembership?)? {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: Self.challengeByID), arguments: [id]) else { return nil }
        let membership = try Self.membership(id, viewer, db)
        guard row["visibility"] == ChallengeVisibility.public.rawValue || membership == .member || membership == .invited else { return nil }
        return (row, membership)
    }

    static func requireVisible(_ id: Int64, _ viewer: UserID, _ db: Database) throws -> (row: Row, membership: ChallengeMembership?) {
        guard let visible = try Self.visible(id, viewer, db) else { throw ChallengeError.noSuchChallenge }
        return visible
    }

    /// The challenge's row, for an author-only operation.
    static func authored(_ id: Int64, _ author: UserID, _ db: Database) throws -> Row {
        let (row, _) = try Self.requireVisible(id, author, db)
        guard (row["author_id"] as Int64) == author.rawValue else { throw ChallengeError.notAuthor }
        return row
    }

    static func membership(_ id: Int64, _ user: UserID, _ db: Database) throws -> ChallengeMembership? {
        try String.fetchOne(db.cachedStatement(sql: "SELECT state FROM challenge_members WHERE challenge_id = ? AND user_id = ?"),
                            arguments: [id, user.rawValue]).flatMap(ChallengeMembership.init(rawValue:))
    }

    static func memberRow(_ id: Int64, _ user: UserID, _ db: Database) throws -> Row? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM challenge_members WHERE challenge_id = ? AND user_id = ? AND state = 'member'"),
                         arguments: [id, user.rawValue])
    }

    /// The challenge as the viewer sees it, or `nil` when they may not.
    static func visibleView(_ id: Int64, viewer: UserID, _ db: Database) throws -> ChallengeView? {
        guard let visible = try Self.visible(id, viewer, db) else { return nil }
        let (row, membership) = visible
        let author = UserSummary(id: UserID(row["author_id"] as Int64), username: row["author_username"], displayName: row["author_display_name"])
        let challenge = Self.challenge(row, author: author, parks: try Self.parks(of: id, db))
        let liked = try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM challenge_likes WHERE challenge_id = ? AND user_id = ?)"),
                                      arguments: [id, viewer.rawValue]) ?? false
        let winners = challenge.finalizedAt == nil ? [] : try Row.fetchAll(db.cachedStatement(sql: """
            SELECT u.id, u.username, u.display_name FROM challenge_members m JOIN users u ON u.id = m.user_id
            WHERE m.challenge_id = ? AND m.won = 1 ORDER BY m.user_id LIMIT 10
            """), arguments: [id]).map(Self.summary)
        return ChallengeView(challenge: challenge, membership: membership, liked: liked, winners: winners)
    }

    static func requireView(_ id: Int64, viewer: UserID, _ db: Database) throws -> ChallengeView {
        guard let view = try Self.visibleView(id, viewer: viewer, db) else { throw ChallengeError.noSuchChallenge }
        return view
    }

    /// A challenge's parks in their order (at most ``ChallengeRules/maximumParks``, sorted here).
    static func parks(of id: Int64, _ db: Database) throws -> [ParkID] {
        try Row.fetchAll(db.cachedStatement(sql: "SELECT park_id, position FROM challenge_parks WHERE challenge_id = ?"), arguments: [id])
            .sorted { ($0["position"] as Int) < ($1["position"] as Int) }.map { ParkID(rawValue: $0["park_id"]) }
    }

    static func unit(_ row: Row) -> ChallengeUnit {
        ChallengeUnit(name: row["unit"], label: row["unit_label"]) ?? .custom(label: row["unit_label"] ?? "")
    }

    static func challenge(_ row: Row, author: UserSummary, parks: [ParkID]) -> Challenge {
        Challenge(id: row["id"], author: author, name: row["name"], description: row["description"], unit: Self.unit(row), target: row["target"],
                  start: Date(timeIntervalSince1970: row["start_at"]), end: Date(timeIntervalSince1970: row["end_at"]),
                  visibility: ChallengeVisibility(rawValue: row["visibility"]) ?? .private, parks: parks,
                  evidence: RideEvidence(rawValue: row["evidence"]) ?? .inPark, createdAt: Date(timeIntervalSince1970: row["created_at"]),
                  finalizedAt: (row["finalized_at"] as Double?).map(Date.init(timeIntervalSince1970:)), participants: row["participants"],
                  likes: row["likes"])
    }

    static func entry(_ row: Row) -> ChallengeEntry {
        ChallengeEntry(id: row["id"], challenge: row["challenge_id"],
                       user: UserSummary(id: UserID(row["user_id"] as Int64), username: row["username"], displayName: row["display_name"]),
                       amount: row["amount"], note: row["note"], photo: row["photo_id"], at: Date(timeIntervalSince1970: row["at"]))
    }

    static func userSummary(_ user: UserID, _ db: Database) throws -> UserSummary? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT id, username, display_name FROM users WHERE id = ?"), arguments: [user.rawValue])
            .map(Self.summary)
    }

    /// Refuses a membership beyond the user's limit of challenges that have not ended.
    static func checkMembershipLimit(_ user: UserID, rules: ChallengeRules, now: Date, _ db: Database) throws {
        let active = try Int.fetchOne(db.cachedStatement(sql: """
            SELECT count(*) FROM challenge_members WHERE user_id = ? AND state = 'member' AND ends_at > ?
            """), arguments: [user.rawValue, now.timeIntervalSince1970]) ?? 0
        guard active < rules.maximumActiveMemberships else { throw ChallengeError.tooManyMemberships(limit: rules.maximumActiveMemberships) }
    }
}
