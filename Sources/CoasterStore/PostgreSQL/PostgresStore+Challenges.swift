import CoasterCore
import Foundation
import PostgresNIO

/// Challenges among friends.
///
/// Locks: a use case that reads, decides and writes a member's row takes that member's lock (the
/// joiner, liker or entrant; the author for the author's operations), as SQLite's single writer
/// serialised them. Settling and fixing winners take the settler's lock (``PostgresLock/settling``,
/// one settler at a time, shared with the leaderboards') and never a user's. Rows are locked in one
/// order everywhere, so that these transactions side by side do not deadlock: a challenge's row
/// before its members' rows (joins, leaves, entries and likes lock the challenge's row as they read
/// it), member rows by (challenge, user) (the hooks lock their rider's rows by challenge as they read
/// them, the settler locks the rows it moves in that order before their credits).
extension PostgresStore: ChallengeStore {
    public func createChallenge(_ draft: ChallengeDraft, author: UserID, rules: ChallengeRules, timeToLive: TimeInterval) async throws -> ChallengeView {
        let now = self.now()
        let t = now.timeIntervalSince1970
        let rideID: String? = if case .ride(let ride) = draft.unit { ride.rawValue } else { nil }
        let finalAt = ChallengeRules.finalAt(end: draft.end, unit: draft.unit, timeToLive: timeToLive).timeIntervalSince1970
        let answer = try await self.transaction(locking: [author]) { tx in
            let (rideListed, missingPark, active) = try await tx.one("""
                SELECT EXISTS (SELECT 1 FROM rides WHERE id = \(rideID) AND listed),
                       (SELECT min(p.n) FROM unnest(\(draft.parks.map(\.rawValue))::text[]) WITH ORDINALITY AS p(id, n)
                        WHERE NOT EXISTS (SELECT 1 FROM parks WHERE parks.id = p.id)),
                       (SELECT count(*) FROM challenge_members WHERE user_id = \(author.rawValue) AND state = 'member' AND ends_at > \(t))
                """).decode((Bool, Int?, Int).self)
            if case .ride(let ride) = draft.unit, !rideListed { throw ChallengeError.unknownRide(ride) }
            if let missingPark { throw ChallengeError.unknownPark(index: missingPark - 1) }
            guard active < rules.maximumActiveMemberships else { throw ChallengeError.tooManyMemberships(limit: rules.maximumActiveMemberships) }
            let id = try await tx.one("""
                WITH c AS (
                    INSERT INTO challenges (author_id, name, description, unit, unit_label, ride_id, target, start_at, end_at, final_at,
                                            visibility, evidence, created_at, participants)
                    VALUES (\(author.rawValue), \(draft.name), \(draft.description), \(draft.unit.name), \(draft.unit.label), \(rideID),
                            \(draft.target), \(draft.start.timeIntervalSince1970), \(draft.end.timeIntervalSince1970), \(finalAt),
                            \(draft.visibility.rawValue), \(draft.evidence.rawValue), \(t), 1)
                    RETURNING id
                ), placed AS (
                    INSERT INTO challenge_parks (challenge_id, park_id, position)
                    SELECT c.id, p.id, p.n - 1 FROM c, unnest(\(draft.parks.map(\.rawValue))::text[]) WITH ORDINALITY AS p(id, n)
                ), author AS (
                    INSERT INTO challenge_members (challenge_id, user_id, state, joined_at, ends_at)
                    SELECT c.id, \(author.rawValue), 'member', \(t), \(draft.end.timeIntervalSince1970) FROM c
                )
                SELECT id FROM c
                """).decode(Int64.self)
            return try await Self.requireView(id, viewer: author, now: now, tx)
        }
        return try await self.finishing(answer, viewer: author, now: now)
    }

    public func challenge(_ id: Int64, viewer: UserID) async throws -> ChallengeView? {
        let now = self.now()
        return try await self.finalizingRead(now: now) { tx, checkDue in
            // Due is due whoever asks: the winners are fixed even on the read of one who may not see them.
            guard let found = try await Self.viewRows([id], viewer: viewer, now: now, tx).first else { return .done(nil) }
            if checkDue, found.due { return .due([id]) }
            return .done(found.visible ? found.view : nil)
        }
    }

    public func editChallenge(_ id: Int64, author: UserID, name: String?, description: String?) async throws -> ChallengeView {
        let now = self.now()
        let answer = try await self.transaction(locking: [author]) { tx in
            let head = try await Self.authored(id, author, tx)
            guard now.timeIntervalSince1970 < head.start else { throw ChallengeError.alreadyStarted }
            try await tx.run("UPDATE challenges SET name = coalesce(\(name), name), description = coalesce(\(description), description) WHERE id = \(id)")
            return try await Self.requireView(id, viewer: author, now: now, tx)
        }
        return try await self.finishing(answer, viewer: author, now: now)
    }

    public func endChallenge(_ id: Int64, author: UserID, timeToLive: TimeInterval) async throws -> ChallengeView {
        let now = self.now()
        let t = now.timeIntervalSince1970
        let answer = try await self.transaction(locking: [author]) { tx in
            // The challenge's row first: a join waits for the new end, and the members' rows follow in one order.
            let head = try await Self.authored(id, author, lock: .noKeyUpdate, tx)
            guard t >= head.start else { throw ChallengeError.notStarted }
            guard t < head.end else { throw ChallengeError.ended }
            let finalAt = ChallengeRules.finalAt(end: now, unit: head.unit, timeToLive: timeToLive).timeIntervalSince1970
            try await tx.run("UPDATE challenges SET end_at = \(t), final_at = \(finalAt) WHERE id = \(id)")
            try await tx.run("""
                UPDATE challenge_members m SET ends_at = \(t)
                FROM (SELECT user_id FROM challenge_members WHERE challenge_id = \(id) ORDER BY user_id FOR NO KEY UPDATE) l
                WHERE m.challenge_id = \(id) AND m.user_id = l.user_id
                """)
            return try await Self.requireView(id, viewer: author, now: now, tx)
        }
        // Hand entries are final at the end: such a challenge ends with its winners.
        return try await self.finishing(answer, viewer: author, now: now)
    }

    public func deleteChallenge(_ id: Int64, author: UserID) async throws {
        try await self.transaction(locking: [author]) { tx in
            _ = try await Self.authored(id, author, tx)
            try await tx.run("DELETE FROM challenges WHERE id = \(id)")
        }
    }

    public func invite(_ id: Int64, author: UserID, users: [UserID]) async throws -> [UserSummary] {
        let now = self.now()
        let t = now.timeIntervalSince1970
        let ids = users.map(\.rawValue)
        return try await self.transaction(locking: [author]) { tx in
            // The author's lock keeps the end where it is (only they end it); an invitee joining at
            // the same time is met by the upsert below.
            let head = try await Self.authored(id, author, tx)
            guard t < head.end else { throw ChallengeError.ended }
            if let stranger = try await tx.one("""
                SELECT min(u.n) FROM unnest(\(ids)::bigint[]) WITH ORDINALITY AS u(id, n)
                WHERE u.id <> \(author.rawValue) AND NOT EXISTS (
                    SELECT 1 FROM friendships f
                    WHERE ((f.requester = \(author.rawValue) AND f.addressee = u.id) OR (f.requester = u.id AND f.addressee = \(author.rawValue)))
                        AND f.status = 'accepted')
                """).decode(Int?.self) {
                throw ChallengeError.notAFriend(index: stranger - 1)
            }
            var seen = Set<Int64>()
            let invitees = ids.filter { $0 != author.rawValue && seen.insert($0).inserted }
            guard !invitees.isEmpty else { return [] }
            // Members and invitees stay as they are; one who declined is invited again.
            var invited: [Int64: UserSummary] = [:]
            for row in try await tx.rows("""
                WITH invited AS (
                    INSERT INTO challenge_members AS m (challenge_id, user_id, state, invited_at, ends_at)
                    SELECT \(id), u.id, 'invited', \(t), \(head.end) FROM unnest(\(invitees)::bigint[]) WITH ORDINALITY AS u(id, n) ORDER BY u.n
                    ON CONFLICT (challenge_id, user_id) DO UPDATE SET state = 'invited', invited_at = excluded.invited_at WHERE m.state = 'declined'
                    RETURNING m.user_id
                )
                SELECT u.id, u.username, u.display_name FROM invited i JOIN users u ON u.id = i.user_id
                """) {
                let summary = try Self.summary(row)
                invited[summary.id.rawValue] = summary
            }
            return invitees.compactMap { invited[$0] }
        }
    }

    public func join(_ id: Int64, user: UserID, rules: ChallengeRules) async throws -> ChallengeView {
        let now = self.now()
        let t = now.timeIntervalSince1970
        let answer = try await self.transaction(locking: [user]) { tx in
            // Locked as it is read: an end or a delete waits, or is waited for.
            let head = try await Self.requireVisible(id, user, lock: .noKeyUpdate, tx)
            guard t < head.end else { throw ChallengeError.ended }
            guard head.membership != .member else { return try await Self.requireView(id, viewer: user, now: now, tx) }
            try await Self.checkMembershipLimit(user, rules: rules, now: t, tx)
            try await tx.run("""
                INSERT INTO challenge_members AS m (challenge_id, user_id, state, joined_at, ends_at)
                VALUES (\(id), \(user.rawValue), 'member', \(t), \(head.end))
                ON CONFLICT (challenge_id, user_id) DO UPDATE SET state = 'member', joined_at = excluded.joined_at, ends_at = excluded.ends_at,
                    progress = 0, reached_at = 0, shown_progress = 0, shown_reached_at = 0, won = false
                """)
            try await tx.run("UPDATE challenges SET participants = participants + 1 WHERE id = \(id)")
            return try await Self.requireView(id, viewer: user, now: now, tx)
        }
        return try await self.finishing(answer, viewer: user, now: now)
    }

    public func decline(_ id: Int64, user: UserID) async throws {
        try await self.transaction(locking: [user]) { tx in
            let head = try await Self.requireVisible(id, user, tx)
            guard head.membership == .invited else { throw ChallengeError.notInvited }
            try await tx.run("UPDATE challenge_members SET state = 'declined' WHERE challenge_id = \(id) AND user_id = \(user.rawValue)")
        }
    }

    public func leave(_ id: Int64, user: UserID) async throws {
        try await self.transaction(locking: [user]) { tx in
            let head = try await Self.requireVisible(id, user, lock: .noKeyUpdate, tx)
            guard head.author != user.rawValue else { throw ChallengeError.authorCannotLeave }
            guard head.membership == .member else { throw ChallengeError.notAMember }
            try await tx.run("DELETE FROM challenge_members WHERE challenge_id = \(id) AND user_id = \(user.rawValue)")
            try await tx.run("UPDATE challenges SET participants = participants - 1 WHERE id = \(id)")
        }
    }

    public func ranking(_ id: Int64, viewer: UserID, limit: Int, offset: Int) async throws -> ChallengeRanking? {
        let now = self.now()
        return try await self.finalizingRead(now: now) { tx, checkDue in
            guard let found = try await Self.viewRows([id], viewer: viewer, now: now, tx).first else { return .done(nil) }
            if checkDue, found.due { return .due([id]) }
            guard found.visible else { return .done(nil) }
            return .done(try await Self.ranking(found.view, viewer: viewer, limit: max(0, limit), offset: max(0, offset), tx))
        }
    }

    public func addEntry(_ id: Int64, user: UserID, amount: Double, note: String?, photo: Int64?, rules: ChallengeRules) async throws
        -> (entry: ChallengeEntry, move: ChallengeMove)
    {
        let now = self.now()
        let t = now.timeIntervalSince1970
        let (entryID, move) = try await self.transaction(locking: [user]) { tx -> (Int64, ChallengeMove) in
            // Shared: the end cannot move while the entry is checked against it.
            let head = try await Self.requireVisible(id, user, lock: .share, tx)
            guard head.membership == .member else { throw ChallengeError.notAMember }
            guard case .custom = head.unit else { throw ChallengeError.notCustom }
            guard t < head.end else { throw ChallengeError.ended }
            guard t >= max(head.start, head.joinedAt ?? 0) else { throw ChallengeError.notStarted }
            let (photoIsTheirs, entries) = try await tx.one("""
                SELECT EXISTS (SELECT 1 FROM photos WHERE id = \(photo) AND user_id = \(user.rawValue)),
                       (SELECT count(*) FROM challenge_entries WHERE challenge_id = \(id) AND user_id = \(user.rawValue))
                """).decode((Bool, Int).self)
            if photo != nil, !photoIsTheirs { throw ChallengeError.noSuchPhoto }
            guard entries < rules.maximumEntries else { throw ChallengeError.tooManyEntries(limit: rules.maximumEntries) }
            let entryID = try await tx.one("""
                WITH entry AS (
                    INSERT INTO challenge_entries (challenge_id, user_id, amount, note, photo_id, at)
                    VALUES (\(id), \(user.rawValue), \(amount), \(note), \(photo), \(t)) RETURNING id
                ), member AS (
                    UPDATE challenge_members SET progress = progress + \(amount), shown_progress = shown_progress + \(amount),
                        reached_at = \(t), shown_reached_at = \(t)
                    WHERE challenge_id = \(id) AND user_id = \(user.rawValue)
                )
                SELECT id FROM entry
                """).decode(Int64.self)
            guard let move = try await Self.moves([(id, user.rawValue)], tx).first else { throw ChallengeError.notAMember }
            return (entryID, move)
        }
        return (ChallengeEntry(id: entryID, challenge: id, user: move.user, amount: amount, note: note, photo: photo, at: now), move)
    }

    public func deleteEntry(_ id: Int64, entry: Int64, user: UserID) async throws -> ChallengeMove {
        try await self.transaction(locking: [user]) { tx in
            _ = try await Self.requireVisible(id, user, tx)
            guard try await tx.count("""
                DELETE FROM challenge_entries WHERE id = \(entry) AND challenge_id = \(id) AND user_id = \(user.rawValue) RETURNING 1
                """) == 1 else { throw ChallengeError.noSuchEntry }
            // Summed in id order, as SQLite's sum() reads them off `challenge_entries_by_member`: the same double.
            try await tx.run("""
                UPDATE challenge_members m SET progress = e.total, reached_at = e.last, shown_progress = e.total, shown_reached_at = e.last
                FROM (SELECT coalesce(sum(amount ORDER BY id), 0) AS total, coalesce(max(at), 0) AS last
                      FROM challenge_entries WHERE challenge_id = \(id) AND user_id = \(user.rawValue)) e
                WHERE m.challenge_id = \(id) AND m.user_id = \(user.rawValue)
                """)
            guard let move = try await Self.moves([(id, user.rawValue)], tx).first else { throw ChallengeError.noSuchEntry }
            return move
        }
    }

    public func gallery(_ id: Int64, viewer: UserID, limit: Int, before: Int64?) async throws -> [ChallengeEntry]? {
        try await self.read { tx in
            guard let head = try await Self.head(id, viewer, tx), head.isVisible else { return nil }
            return try await tx.rows("""
                SELECT e.id, e.challenge_id, u.id, u.username, u.display_name, e.amount, e.note, e.photo_id, e.at
                FROM challenge_entries e JOIN users u ON u.id = e.user_id
                WHERE e.challenge_id = \(id) AND e.photo_id IS NOT NULL AND e.id < \(before ?? Int64.max)
                ORDER BY e.id DESC LIMIT \(max(0, limit))
                """).map(Self.entry)
        }
    }

    public func challenges(of user: UserID, list: ChallengeList, limit: Int, before: Int64?) async throws -> [ChallengeView] {
        let now = self.now()
        let t = now.timeIntervalSince1970
        let limit = max(0, limit)
        let before = before ?? Int64.max
        // Constant text by list; the values are bound ($1 user, $2 before, $3 now, $4 limit).
        let (state, condition) = switch list {
        case .ongoing: ("member", "c.start_at <= $3 AND $3 < c.end_at")
        case .upcoming: ("member", "$3 < c.start_at")
        case .completed: ("member", "c.end_at <= $3")
        case .won: ("member", "m.won")
        case .invited: ("invited", "c.end_at > $3")
        }
        var bindings = PostgresBindings()
        bindings.append(user.rawValue)
        bindings.append(before)
        bindings.append(t)
        bindings.append(limit)
        let page = PostgresQuery(unsafeSQL: """
            SELECT c.id FROM challenge_members m JOIN challenges c ON c.id = m.challenge_id
            WHERE m.user_id = $1 AND m.state = '\(state)' AND m.challenge_id < $2 AND \(condition)
            ORDER BY m.challenge_id DESC LIMIT $4
            """, binds: bindings)
        // The user's challenges due for their winners, at most a page of them, newest first: those
        // a page of any list may show (a completed challenge, or one the user won) are fixed first.
        let due: PostgresQuery? = list == .invited ? nil : PostgresQuery(unsafeSQL: """
            SELECT c.id FROM challenge_members m JOIN challenges c ON c.id = m.challenge_id
            WHERE m.user_id = $1 AND m.state = 'member' AND m.challenge_id < $2 AND c.finalized_at IS NULL AND c.final_at <= $3
            ORDER BY m.challenge_id DESC LIMIT $4
            """, binds: bindings)
        return try await self.finalizingRead(now: now) { tx, checkDue in
            if checkDue, let due {
                let ids = try await tx.rows(due).map { try $0.decode(Int64.self) }
                if !ids.isEmpty { return .due(ids) }
            }
            let ids = try await tx.rows(page).map { try $0.decode(Int64.self) }
            return .done(try await Self.views(ids, viewer: user, now: now, tx).map(\.view))
        }
    }

    public func searchChallenges(_ query: String?, park: ParkID?, viewer: UserID, limit: Int, offset: Int) async throws -> [ChallengeView] {
        let now = self.now()
        let words = ChallengeRules.searchWords(query ?? "")
        // Words are runs of letters and digits, so they need no quoting; each is matched as a prefix.
        let match: String? = words.isEmpty ? nil : words.map { $0 + ":*" }.joined(separator: " & ")
        return try await self.read { tx in
            let ids = try await tx.rows("""
                SELECT c.id FROM challenges c
                WHERE c.visibility = 'public' AND c.finalized_at IS NULL
                    AND (\(match)::text IS NULL OR c.search @@ to_tsquery('simple', \(match)))
                    AND (\(park?.rawValue)::text IS NULL
                         OR EXISTS (SELECT 1 FROM challenge_parks p WHERE p.challenge_id = c.id AND p.park_id = \(park?.rawValue)))
                ORDER BY c.participants DESC, c.id DESC LIMIT \(max(0, limit)) OFFSET \(max(0, offset))
                """).map { try $0.decode(Int64.self) }
            return try await Self.views(ids, viewer: viewer, now: now, tx).map(\.view)
        }
    }

    public func trendingChallenges(since: Date, viewer: UserID, limit: Int) async throws -> [ChallengeView] {
        let now = self.now()
        let since = since.timeIntervalSince1970
        return try await self.read { tx in
            // Each part a range of its time index (`challenge_joins`, `challenge_likes_by_time`), grouped by challenge.
            let ids = try await tx.rows("""
                WITH recent (challenge_id, n) AS (
                    SELECT challenge_id, count(*) FROM challenge_members WHERE state = 'member' AND joined_at >= \(since) GROUP BY challenge_id
                    UNION ALL
                    SELECT challenge_id, count(*) FROM challenge_likes WHERE at >= \(since) GROUP BY challenge_id
                )
                SELECT c.id FROM recent r JOIN challenges c ON c.id = r.challenge_id
                WHERE c.visibility = 'public' AND c.finalized_at IS NULL
                GROUP BY c.id HAVING sum(r.n) > 0
                ORDER BY sum(r.n) DESC, c.participants DESC, c.id DESC LIMIT \(max(0, limit))
                """).map { try $0.decode(Int64.self) }
            return try await Self.views(ids, viewer: viewer, now: now, tx).map(\.view)
        }
    }

    public func setChallengeLike(_ id: Int64, user: UserID, liked: Bool) async throws -> ChallengeView {
        let now = self.now()
        let t = now.timeIntervalSince1970
        let answer = try await self.transaction(locking: [user]) { tx in
            // A key share: the challenge is not deleted under the like, and other likes go on.
            _ = try await Self.requireVisible(id, user, lock: .keyShare, tx)
            if liked {
                try await tx.run("""
                    WITH liked AS (
                        INSERT INTO challenge_likes (challenge_id, user_id, at) VALUES (\(id), \(user.rawValue), \(t))
                        ON CONFLICT (challenge_id, user_id) DO NOTHING RETURNING 1
                    )
                    UPDATE challenges SET likes = likes + 1 WHERE id = \(id) AND EXISTS (SELECT 1 FROM liked)
                    """)
            } else {
                try await tx.run("""
                    WITH unliked AS (DELETE FROM challenge_likes WHERE challenge_id = \(id) AND user_id = \(user.rawValue) RETURNING 1)
                    UPDATE challenges SET likes = likes - 1 WHERE id = \(id) AND EXISTS (SELECT 1 FROM unliked)
                    """)
            }
            return try await Self.requireView(id, viewer: user, now: now, tx)
        }
        return try await self.finishing(answer, viewer: user, now: now)
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
        let cutoff = cutoff.timeIntervalSince1970
        return try await self.transaction { tx in
            try await tx.lock(.settling)
            let credits = try await tx.one("""
                WITH picked AS (
                    SELECT c.id, c.challenge_id, c.user_id FROM challenge_credits c
                    WHERE NOT c.shown AND c.at <= \(cutoff) AND \(unescaped: Self.visitOver("c", before: "\(cutoff)"))
                    ORDER BY c.at, c.id LIMIT \(max(0, limit))
                ), locked AS (
                    SELECT m.challenge_id FROM challenge_members m
                    WHERE (m.challenge_id, m.user_id) IN (SELECT challenge_id, user_id FROM picked)
                    ORDER BY m.challenge_id, m.user_id FOR NO KEY UPDATE OF m
                )
                SELECT ARRAY(SELECT id FROM picked), (SELECT count(*) FROM locked)
                """).decode(([Int64], Int).self).0
            return try await Self.moves(try await Self.show(credits, tx), tx)
        }
    }

    @discardableResult
    public func finalizeChallenges(limit: Int) async throws -> [Int64] {
        let now = self.now()
        return try await self.transaction { tx in
            try await tx.lock(.settling)
            let due = try await tx.rows("""
                SELECT id FROM challenges WHERE finalized_at IS NULL AND final_at <= \(now.timeIntervalSince1970)
                ORDER BY final_at, id LIMIT \(max(0, limit)) FOR NO KEY UPDATE
                """).map { try $0.decode(Int64.self) }
            try await Self.finalize(due, now: now, tx)
            return due
        }
    }

    public func challengeMoves(of user: UserID, source: String, id: Int64) async throws -> [ChallengeMove] {
        try await self.read { tx in
            let challenges = try await tx.rows("""
                SELECT DISTINCT challenge_id FROM challenge_credits
                WHERE user_id = \(user.rawValue) AND source = \(source) AND source_id = \(id) ORDER BY challenge_id
                """).map { try $0.decode(Int64.self) }
            return try await Self.moves(challenges.map { ($0, user.rawValue) }, tx)
        }
    }

    public func challengeMembers(_ id: Int64, among users: [UserID]) async throws -> [UserID] {
        guard !users.isEmpty else { return [] }
        return try await self.single { tx in
            try await tx.rows("""
                SELECT user_id FROM challenge_members
                WHERE challenge_id = \(id) AND state = 'member' AND user_id = ANY(\(users.map(\.rawValue))::bigint[]) ORDER BY user_id
                """).map { UserID(try $0.decode(Int64.self)) }
        }
    }
}

// MARK: - Counting: the ride-log and visit hooks

extension PostgresStore {
    /// Credits `evidence` (a ride log or a visit just written) to every active challenge of the
    /// user that counts it (``ChallengeRules/credit(_:challenge:joinedAt:)`` decides), in the
    /// transaction that wrote it: one statement reads the user's active memberships by
    /// `challenge_members_active` (locking them by challenge), one more writes the credits and the
    /// progress, and only when something counts. Each credit is a unique row, so nothing counts
    /// twice; the member's own progress moves at once, what others see when the credit is settled.
    /// - Parameter at: the evidence's time as its row holds it (seconds since 1970), the credit's time.
    static func creditChallenges(user: UserID, evidence: ChallengeEvidence, at: Double, now: Date, _ tx: PostgresTransaction) async throws {
        let units: [String]
        let ride: RideID?
        let level: RideEvidence?
        switch evidence {
        case .rideLog(_, let logged, _, _, let loggedLevel, _):
            units = ["rides", "credits", ChallengeUnit.ride(logged).name]
            ride = logged
            level = loggedLevel
        case .visit:
            units = ["parks", "visits"]
            ride = nil
            level = nil
        }
        let t = now.timeIntervalSince1970
        let rows = try await tx.rows("""
            SELECT c.id, c.unit, c.unit_label, c.start_at, c.end_at, c.evidence, m.joined_at,
                   ARRAY(SELECT p.park_id FROM challenge_parks p WHERE p.challenge_id = c.id ORDER BY p.position),
                   (SELECT min(ridden_at) FROM ride_logs WHERE user_id = \(user.rawValue) AND ride_id = \(ride?.rawValue))
            FROM challenge_members m JOIN challenges c ON c.id = m.challenge_id
            WHERE m.user_id = \(user.rawValue) AND m.state = 'member' AND m.ends_at > \(t) AND c.start_at <= \(t) AND c.unit = ANY(\(units)::text[])
            ORDER BY c.id
            FOR NO KEY UPDATE OF m
            """)
        guard !rows.isEmpty else { return }
        let rules = ChallengeRules()
        let nobody = UserSummary(id: UserID(0), username: "", displayName: "")
        var credits: [(challenge: Int64, credit: ChallengeCredit)] = []
        for row in rows {
            let (id, unit, label, start, end, least, joinedAt, parks, firstLog) =
                try row.decode((Int64, String, String?, Double, Double, String, Double?, [String], Double?).self)
            let challenge = Challenge(id: id, author: nobody, name: "", description: "", unit: Self.unit(unit, label), target: nil,
                                      start: Date(timeIntervalSince1970: start), end: Date(timeIntervalSince1970: end), visibility: .private,
                                      parks: parks.map(ParkID.init(rawValue:)), evidence: RideEvidence(rawValue: least) ?? .inPark,
                                      createdAt: Date(timeIntervalSince1970: 0), finalizedAt: nil, participants: 0, likes: 0)
            guard let credit = rules.credit(evidence, challenge: challenge, joinedAt: Date(timeIntervalSince1970: joinedAt ?? 0)) else { continue }
            // A coaster logged before the window began is no new credit (the log just written is not before it).
            if let first = credit.firstSince, let firstLog, firstLog < first.since.timeIntervalSince1970 { continue }
            credits.append((id, credit))
        }
        guard !credits.isEmpty else { return }
        try await tx.run("""
            WITH credited AS (
                INSERT INTO challenge_credits (challenge_id, user_id, source, source_id, distinct_key, amount, at, park_id, ride_id, evidence)
                SELECT u.challenge_id, \(user.rawValue), \(evidence.source), \(evidence.sourceID), u.distinct_key, u.amount, \(at),
                       \(evidence.park.rawValue), \(ride?.rawValue), \(level?.rawValue)
                FROM unnest(\(credits.map(\.challenge))::bigint[], \(NullableArray(credits.map(\.credit.distinctKey)))::text[],
                            \(credits.map(\.credit.amount))::float8[]) WITH ORDINALITY AS u(challenge_id, distinct_key, amount, n)
                ORDER BY u.n
                ON CONFLICT DO NOTHING
                RETURNING challenge_id, amount
            )
            UPDATE challenge_members m SET progress = m.progress + c.amount, reached_at = \(at)
            FROM credited c WHERE m.challenge_id = c.challenge_id AND m.user_id = \(user.rawValue)
            """)
    }
}

// MARK: - Settling and winners

extension PostgresStore {
    /// Fixes the winners of those of `ids` still due, under the settler's lock (taken first, and
    /// no user's lock after it): for a read or a write that found them due.
    private func finalizeDue(_ ids: [Int64], now: Date) async throws {
        try await self.transaction { tx in
            try await tx.lock(.settling)
            let due = try await tx.rows("""
                SELECT id FROM challenges WHERE id = ANY(\(ids)::bigint[]) AND finalized_at IS NULL AND final_at <= \(now.timeIntervalSince1970)
                ORDER BY final_at, id FOR NO KEY UPDATE
                """).map { try $0.decode(Int64.self) }
            try await Self.finalize(due, now: now, tx)
        }
    }

    /// Fixes the winners of challenges due for them (their rows locked, under the settler's
    /// lock): every credit still hidden is shown (the final time is past every window's privacy
    /// delay), then in each, the members level with the first line win, if it has any progress,
    /// and get their badges.
    private static func finalize(_ ids: [Int64], now: Date, _ tx: PostgresTransaction) async throws {
        guard !ids.isEmpty else { return }
        let credits = try await tx.one("""
            WITH picked AS (
                SELECT id, challenge_id, user_id FROM challenge_credits WHERE challenge_id = ANY(\(ids)::bigint[]) AND NOT shown
            ), locked AS (
                SELECT m.challenge_id FROM challenge_members m
                WHERE (m.challenge_id, m.user_id) IN (SELECT challenge_id, user_id FROM picked)
                ORDER BY m.challenge_id, m.user_id FOR NO KEY UPDATE OF m
            )
            SELECT ARRAY(SELECT id FROM picked), (SELECT count(*) FROM locked)
            """).decode(([Int64], Int).self).0
        _ = try await Self.show(credits, tx)
        let winners = try await tx.rows("""
            UPDATE challenge_members m SET won = true
            FROM unnest(\(ids)::bigint[]) AS f(id)
                CROSS JOIN LATERAL (SELECT t.shown_progress, t.shown_reached_at FROM challenge_members t
                                    WHERE t.challenge_id = f.id AND t.state = 'member'
                                    ORDER BY t.shown_progress DESC, t.shown_reached_at LIMIT 1) top
            WHERE m.challenge_id = f.id AND m.state = 'member' AND top.shown_progress > 0
                AND m.shown_progress = top.shown_progress AND m.shown_reached_at = top.shown_reached_at
            RETURNING m.user_id
            """).map { try $0.decode(Int64.self) }
        try await tx.run("UPDATE challenges SET finalized_at = \(now.timeIntervalSince1970) WHERE id = ANY(\(ids)::bigint[])")
        for winner in Set(winners).sorted() { try await Self.awardBadges(UserID(winner), at: now, tx) }
    }

    /// Shows credits to everyone (their members' rows already locked): each member's shown line
    /// takes its credits. Returns the members moved, by challenge and user.
    ///
    /// A member's credits are summed before they are added, where SQLite adds them one by one:
    /// the same double, since every credit counts a whole one (a ride, a visit, a park).
    private static func show(_ credits: [Int64], _ tx: PostgresTransaction) async throws -> [(Int64, Int64)] {
        guard !credits.isEmpty else { return [] }
        return try await tx.rows("""
            WITH shown AS (
                UPDATE challenge_credits SET shown = true WHERE id = ANY(\(credits)::bigint[]) AND NOT shown
                RETURNING challenge_id, user_id, amount, at
            ), sums AS (
                SELECT challenge_id, user_id, sum(amount) AS amount, max(at) AS at FROM shown GROUP BY challenge_id, user_id
            )
            UPDATE challenge_members m SET shown_progress = m.shown_progress + s.amount, shown_reached_at = greatest(m.shown_reached_at, s.at)
            FROM sums s WHERE m.challenge_id = s.challenge_id AND m.user_id = s.user_id
            RETURNING m.challenge_id, m.user_id
            """).map { try $0.decode((Int64, Int64).self) }.sorted { ($0.0, $0.1) < ($1.0, $1.1) }
    }
}

// MARK: - Reading challenges

/// What a read that may find challenges due for their winners did: its answer, or the challenges
/// to fix first (a write) before it is answered again.
private enum FinalizingAnswer<T: Sendable>: Sendable {
    case done(T)
    case due([Int64])
}

/// The lock a use case takes on a challenge's row as it reads it.
private enum ChallengeRowLock: String {
    case none = ""
    /// Other likes and entries go on; a delete waits.
    case keyShare = "FOR KEY SHARE OF c"
    /// The end stays where it is; joins and likes wait.
    case share = "FOR SHARE OF c"
    /// One at a time: joins, leaves, the end.
    case noKeyUpdate = "FOR NO KEY UPDATE OF c"
}

/// A challenge as the operations check it, with one user's place in it.
private struct ChallengeHead: Sendable {
    var author: Int64
    var isPublic: Bool
    var unit: ChallengeUnit
    var start: Double
    var end: Double
    var membership: ChallengeMembership?
    var joinedAt: Double?

    /// Whether the user may see it: public, or they are a member or invited.
    var isVisible: Bool { self.isPublic || self.membership == .member || self.membership == .invited }
}

extension PostgresStore {
    /// Answers `body` from a read, or, when it names challenges due for their winners, fixes them
    /// (a write) and answers from a read again, which no longer asks: a read never shows a
    /// completed challenge without its winners, and most reads write nothing.
    private func finalizingRead<T: Sendable>(
        now: Date, _ body: @escaping @Sendable (PostgresTransaction, _ checkDue: Bool) async throws -> FinalizingAnswer<T>
    ) async throws -> T {
        let first = try await self.read { tx in try await body(tx, true) }
        switch first {
        case .done(let answer):
            return answer
        case .due(let ids):
            try await self.finalizeDue(ids, now: now)
            guard case .done(let answer) = try await self.read({ tx in try await body(tx, false) }) else {
                throw PostgresStoreFault("a read asked again for challenges to finalize")
            }
            return answer
        }
    }

    /// A write's answer, read in its transaction; a challenge it left due for its winners (an
    /// end, a like after the final time) is fixed after the commit, outside the user's lock, and
    /// read again.
    private func finishing(_ answer: (view: ChallengeView, due: Bool), viewer: UserID, now: Date) async throws -> ChallengeView {
        guard answer.due else { return answer.view }
        let id = answer.view.challenge.id
        try await self.finalizeDue([id], now: now)
        return try await self.read { tx in try await Self.requireView(id, viewer: viewer, now: now, tx).view }
    }

    private static func head(_ id: Int64, _ user: UserID, lock: ChallengeRowLock = .none, _ tx: PostgresTransaction) async throws -> ChallengeHead? {
        guard let row = try await tx.first("""
            SELECT c.author_id, c.visibility, c.unit, c.unit_label, c.start_at, c.end_at, m.state, m.joined_at
            FROM challenges c LEFT JOIN challenge_members m ON m.challenge_id = c.id AND m.user_id = \(user.rawValue)
            WHERE c.id = \(id) \(unescaped: lock.rawValue)
            """) else { return nil }
        let (author, visibility, unit, label, start, end, state, joinedAt) =
            try row.decode((Int64, String, String, String?, Double, Double, String?, Double?).self)
        return ChallengeHead(author: author, isPublic: visibility == ChallengeVisibility.public.rawValue, unit: Self.unit(unit, label),
                             start: start, end: end, membership: state.flatMap(ChallengeMembership.init(rawValue:)), joinedAt: joinedAt)
    }

    /// The challenge and the user's place in it, if they may see it (``ChallengeError/noSuchChallenge`` if not).
    private static func requireVisible(_ id: Int64, _ user: UserID, lock: ChallengeRowLock = .none,
                                       _ tx: PostgresTransaction) async throws -> ChallengeHead {
        guard let head = try await Self.head(id, user, lock: lock, tx), head.isVisible else { throw ChallengeError.noSuchChallenge }
        return head
    }

    /// The challenge, for an author-only operation.
    private static func authored(_ id: Int64, _ author: UserID, lock: ChallengeRowLock = .none,
                                 _ tx: PostgresTransaction) async throws -> ChallengeHead {
        let head = try await Self.requireVisible(id, author, lock: lock, tx)
        guard head.author == author.rawValue else { throw ChallengeError.notAuthor }
        return head
    }

    /// Refuses a membership beyond the user's limit of challenges that have not ended.
    private static func checkMembershipLimit(_ user: UserID, rules: ChallengeRules, now: Double, _ tx: PostgresTransaction) async throws {
        let active = try await tx.one("""
            SELECT count(*) FROM challenge_members WHERE user_id = \(user.rawValue) AND state = 'member' AND ends_at > \(now)
            """).decode(Int.self)
        guard active < rules.maximumActiveMemberships else { throw ChallengeError.tooManyMemberships(limit: rules.maximumActiveMemberships) }
    }

    /// The views of challenges `viewer` may see among `ids`, in that order, in one statement, each
    /// with whether it is due for its winners at `now`.
    private static func views(_ ids: [Int64], viewer: UserID, now: Date, _ tx: PostgresTransaction) async throws -> [(view: ChallengeView, due: Bool)] {
        try await Self.viewRows(ids, viewer: viewer, now: now, tx).filter(\.visible).map { ($0.view, $0.due) }
    }

    /// The views of the challenges among `ids`, in that order, each with whether `viewer` may see
    /// it and whether it is due for its winners at `now`.
    private static func viewRows(_ ids: [Int64], viewer: UserID, now: Date,
                                 _ tx: PostgresTransaction) async throws -> [(view: ChallengeView, visible: Bool, due: Bool)] {
        guard !ids.isEmpty else { return [] }
        var found: [Int64: (view: ChallengeView, visible: Bool, due: Bool)] = [:]
        for row in try await tx.rows("""
            SELECT c.id, c.author_id, a.username, a.display_name, c.name, c.description, c.unit, c.unit_label, c.target,
                   c.start_at, c.end_at, c.visibility, c.evidence, c.created_at, c.finalized_at, c.participants, c.likes,
                   ARRAY(SELECT p.park_id FROM challenge_parks p WHERE p.challenge_id = c.id ORDER BY p.position),
                   (SELECT m.state FROM challenge_members m WHERE m.challenge_id = c.id AND m.user_id = \(viewer.rawValue)),
                   EXISTS (SELECT 1 FROM challenge_likes l WHERE l.challenge_id = c.id AND l.user_id = \(viewer.rawValue)),
                   coalesce(w.ids, '{}'), coalesce(w.usernames, '{}'), coalesce(w.names, '{}'),
                   c.finalized_at IS NULL AND c.final_at <= \(now.timeIntervalSince1970)
            FROM challenges c JOIN users a ON a.id = c.author_id
            LEFT JOIN LATERAL (
                SELECT array_agg(u.id ORDER BY u.id) AS ids, array_agg(u.username ORDER BY u.id) AS usernames,
                       array_agg(u.display_name ORDER BY u.id) AS names
                FROM (SELECT user_id FROM challenge_members WHERE challenge_id = c.id AND won AND c.finalized_at IS NOT NULL
                      ORDER BY user_id LIMIT 10) winner
                JOIN users u ON u.id = winner.user_id
            ) w ON true
            WHERE c.id = ANY(\(ids)::bigint[])
            """) {
            let (id, authorID, authorName, authorDisplay, name, description, unit, label, target, start, end, visibility, evidence, createdAt,
                 finalizedAt, participants, likes, parks, state, liked, winnerIDs, winnerNames, winnerDisplays, due) =
                try row.decode((Int64, Int64, String, String, String, String, String, String?, Double?, Double, Double, String, String, Double,
                                Double?, Int, Int, [String], String?, Bool, [Int64], [String], [String], Bool).self)
            let membership = state.flatMap(ChallengeMembership.init(rawValue:))
            let visible = visibility == ChallengeVisibility.public.rawValue || membership == .member || membership == .invited
            let challenge = Challenge(
                id: id, author: UserSummary(id: UserID(authorID), username: authorName, displayName: authorDisplay), name: name,
                description: description, unit: Self.unit(unit, label), target: target, start: Date(timeIntervalSince1970: start),
                end: Date(timeIntervalSince1970: end), visibility: ChallengeVisibility(rawValue: visibility) ?? .private,
                parks: parks.map(ParkID.init(rawValue:)), evidence: RideEvidence(rawValue: evidence) ?? .inPark,
                createdAt: Date(timeIntervalSince1970: createdAt), finalizedAt: finalizedAt.map(Date.init(timeIntervalSince1970:)),
                participants: participants, likes: likes)
            let winners = zip(winnerIDs, zip(winnerNames, winnerDisplays)).map {
                UserSummary(id: UserID($0.0), username: $0.1.0, displayName: $0.1.1)
            }
            found[id] = (ChallengeView(challenge: challenge, membership: membership, liked: liked, winners: winners), visible, due)
        }
        return ids.compactMap { found[$0] }
    }

    private static func requireView(_ id: Int64, viewer: UserID, now: Date, _ tx: PostgresTransaction) async throws -> (view: ChallengeView, due: Bool) {
        guard let view = try await Self.views([id], viewer: viewer, now: now, tx).first else { throw ChallengeError.noSuchChallenge }
        return view
    }

    static func unit(_ name: String, _ label: String?) -> ChallengeUnit {
        ChallengeUnit(name: name, label: label) ?? .custom(label: label ?? "")
    }

    /// A user's id, username and display name, the first three columns of `row`.
    private static func summary(_ row: PostgresRow) throws -> UserSummary {
        let (id, username, displayName) = try row.decode((Int64, String, String).self)
        return UserSummary(id: UserID(id), username: username, displayName: displayName)
    }

    private static func entry(_ row: PostgresRow) throws -> ChallengeEntry {
        let (id, challenge, user, username, displayName, amount, note, photo, at) =
            try row.decode((Int64, Int64, Int64, String, String, Double, String?, Int64?, Double).self)
        return ChallengeEntry(id: id, challenge: challenge, user: UserSummary(id: UserID(user), username: username, displayName: displayName),
                              amount: amount, note: note, photo: photo, at: Date(timeIntervalSince1970: at))
    }
}

// MARK: - Rankings and moves

extension PostgresStore {
    /// Members' progress and ranks as everyone else sees them and as they do, in one statement,
    /// by challenge and user; those no longer members are left out. Each rank counts the others
    /// strictly ahead on two ranges of `challenge_ranking` (more progress; as much, reached earlier).
    static func moves(_ members: [(Int64, Int64)], _ tx: PostgresTransaction) async throws -> [ChallengeMove] {
        guard !members.isEmpty else { return [] }
        return try await tx.rows("""
            SELECT m.challenge_id, c.name, u.id, u.username, u.display_name, m.shown_progress, m.progress,
                   (SELECT count(*) FROM challenge_members o
                    WHERE o.challenge_id = m.challenge_id AND o.state = 'member' AND o.shown_progress > m.shown_progress AND o.user_id <> m.user_id)
                 + (SELECT count(*) FROM challenge_members o
                    WHERE o.challenge_id = m.challenge_id AND o.state = 'member' AND o.shown_progress = m.shown_progress
                        AND o.shown_reached_at < m.shown_reached_at AND o.user_id <> m.user_id),
                   (SELECT count(*) FROM challenge_members o
                    WHERE o.challenge_id = m.challenge_id AND o.state = 'member' AND o.shown_progress > m.progress AND o.user_id <> m.user_id)
                 + (SELECT count(*) FROM challenge_members o
                    WHERE o.challenge_id = m.challenge_id AND o.state = 'member' AND o.shown_progress = m.progress
                        AND o.shown_reached_at < m.reached_at AND o.user_id <> m.user_id)
            FROM unnest(\(members.map(\.0))::bigint[], \(members.map(\.1))::bigint[]) AS p(challenge_id, user_id)
            JOIN challenge_members m ON m.challenge_id = p.challenge_id AND m.user_id = p.user_id AND m.state = 'member'
            JOIN challenges c ON c.id = m.challenge_id
            JOIN users u ON u.id = m.user_id
            ORDER BY m.challenge_id, m.user_id
            """).map { row in
            let (challenge, name, user, username, displayName, shownProgress, progress, shownAhead, ahead) =
                try row.decode((Int64, String, Int64, String, String, Double, Double, Int, Int).self)
            return ChallengeMove(challenge: challenge, name: name, user: UserSummary(id: UserID(user), username: username, displayName: displayName),
                                 shownProgress: shownProgress, shownRank: shownAhead + 1, progress: progress, rank: ahead + 1)
        }
    }

    /// A ranking page: the others' shown lines, a range of `challenge_ranking`, with the viewer's
    /// own line in its place among them when they take part.
    private static func ranking(_ view: ChallengeView, viewer: UserID, limit: Int, offset: Int, _ tx: PostgresTransaction) async throws
        -> ChallengeRanking
    {
        let id = view.challenge.id
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
        if view.membership == .member, let row = try await tx.first("""
            SELECT u.id, u.username, u.display_name, m.progress, m.reached_at, m.shown_progress,
                   (SELECT count(*) FROM challenge_members o
                    WHERE o.challenge_id = m.challenge_id AND o.state = 'member' AND o.shown_progress > m.progress AND o.user_id <> m.user_id)
                 + (SELECT count(*) FROM challenge_members o
                    WHERE o.challenge_id = m.challenge_id AND o.state = 'member' AND o.shown_progress = m.progress
                        AND o.shown_reached_at < m.reached_at AND o.user_id <> m.user_id),
                   (SELECT count(*) FROM challenge_members o
                    WHERE o.challenge_id = m.challenge_id AND o.state = 'member' AND o.shown_progress = m.progress
                        AND o.shown_reached_at = m.reached_at AND o.user_id < m.user_id)
            FROM challenge_members m JOIN users u ON u.id = m.user_id WHERE m.challenge_id = \(id) AND m.user_id = \(viewer.rawValue)
            """) {
            let (user, username, displayName, progress, reachedAt, shown, ahead, level) =
                try row.decode((Int64, String, String, Double, Double, Double, Int, Int).self)
            let line = Line(user: UserSummary(id: UserID(user), username: username, displayName: displayName), progress: progress,
                            reachedAt: reachedAt, isViewer: true)
            mine = (line, ahead, ahead + level, shown)
        }
        // The viewer's line sits at `place` of the whole order: a page past it reads the others one
        // earlier, and a page holding it reads one fewer.
        let onPage = mine.map { $0.place >= offset && $0.place < offset + limit } ?? false
        let skip = mine.map { $0.place < offset } == true ? offset - 1 : offset
        let take = onPage ? limit - 1 : limit
        var lines: [Line] = take <= 0 ? [] : try await tx.rows("""
            SELECT u.id, u.username, u.display_name, m.shown_progress, m.shown_reached_at
            FROM challenge_members m JOIN users u ON u.id = m.user_id
            WHERE m.challenge_id = \(id) AND m.state = 'member' AND m.user_id <> \(viewer.rawValue)
            ORDER BY m.shown_progress DESC, m.shown_reached_at, m.user_id LIMIT \(take) OFFSET \(skip)
            """).map { row in
            let (user, username, displayName, progress, reachedAt) = try row.decode((Int64, String, String, Double, Double).self)
            return Line(user: UserSummary(id: UserID(user), username: username, displayName: displayName), progress: progress,
                        reachedAt: reachedAt, isViewer: false)
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
                let others = try await tx.one("""
                    SELECT (SELECT count(*) FROM challenge_members
                            WHERE challenge_id = \(id) AND state = 'member' AND shown_progress > \(line.progress) AND user_id <> \(viewer.rawValue))
                         + (SELECT count(*) FROM challenge_members
                            WHERE challenge_id = \(id) AND state = 'member' AND shown_progress = \(line.progress)
                                AND shown_reached_at < \(line.reachedAt) AND user_id <> \(viewer.rawValue))
                    """).decode(Int.self)
                rank = others + 1 + (mine.map { $0.line.isAhead(of: line) } == true ? 1 : 0)
            }
            entries.append(ChallengeRankingEntry(rank: rank, user: line.user, progress: line.progress,
                                                 lastActivity: line.reachedAt > 0 ? Date(timeIntervalSince1970: line.reachedAt) : nil))
        }
        let counted: [ChallengeCountedItem] = mine == nil ? [] : try await tx.rows("""
            SELECT source, id, amount, at, park_id, ride_id, evidence FROM (
                SELECT source, source_id AS id, amount, at, park_id, ride_id, evidence
                FROM challenge_credits WHERE challenge_id = \(id) AND user_id = \(viewer.rawValue)
                UNION ALL
                SELECT 'entry', id, amount, at, NULL, NULL, NULL FROM challenge_entries WHERE challenge_id = \(id) AND user_id = \(viewer.rawValue)
            ) counted
            ORDER BY at DESC, id DESC LIMIT 50
            """).map { row in
            let (source, itemID, amount, at, park, ride, evidence) = try row.decode((String, Int64, Double, Double, String?, String?, String?).self)
            return ChallengeCountedItem(source: source, id: itemID, amount: amount, at: Date(timeIntervalSince1970: at),
                                        park: park.map(ParkID.init(rawValue:)), ride: ride.map(RideID.init(rawValue:)),
                                        evidence: evidence.flatMap(RideEvidence.init(rawValue:)))
        }
        let own = mine.map {
            ChallengeRankingEntry(rank: $0.ahead + 1, user: $0.line.user, progress: $0.line.progress,
                                  lastActivity: $0.line.reachedAt > 0 ? Date(timeIntervalSince1970: $0.line.reachedAt) : nil)
        }
        return ChallengeRanking(view: view, entries: entries, mine: own, pending: mine.map { $0.line.progress - $0.shown } ?? 0, counted: counted)
    }
}
