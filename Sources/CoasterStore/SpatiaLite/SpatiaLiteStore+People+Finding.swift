import CoasterCore
import Foundation
import GRDB

// Profile cards, people search and "riders like you" (docs: People).
extension SpatiaLiteStore {
    // MARK: Cards

    /// The card of a `users` row read with its `status_emoji`, `status_text` and `home_park`.
    static func card(_ user: UserID, _ row: Row, _ db: Database) throws -> ProfileCard {
        let park = try (row["home_park"] as String?).flatMap { try Self.catalogParkRow(ParkID(rawValue: $0), db) }
        let rides = try Row.fetchAll(db.cachedStatement(sql: Self.favouriteRides), arguments: [user.rawValue]).map { Self.catalogRide(from: $0) }
        return ProfileCard(status: Self.status(row), homePark: park, favouriteRides: rides)
    }

    /// A user's favourite rides in their order, each with its catalogue entry.
    static let favouriteRides = """
        SELECT r.*, p.name AS park_name, p.fenced AS park_fenced
        FROM favourite_rides f JOIN catalog_rides r ON r.id = f.ride_id JOIN catalog_parks p ON p.id = r.park_id
        WHERE f.user_id = ? ORDER BY f.position
        """

    static func status(_ row: Row) -> ProfileStatus? {
        (row["status_emoji"] as String?).map { ProfileStatus(emoji: $0, text: row["status_text"] ?? "") }
    }

    static func followCounts(_ row: Row) -> FollowCounts {
        FollowCounts(followers: row["followers"], following: row["following"])
    }

    /// Writes the people members of `changes` (``ProfileChanges/status`` and after), in the
    /// profile write's transaction, after its display name: each catalogue id is checked here,
    /// and the name keys follow the display name and the opt-in.
    static func applyPeopleChanges(_ id: UserID, _ changes: ProfileChanges, _ db: Database) throws {
        if let status = changes.status {
            try db.execute(sql: "UPDATE users SET status_emoji = ?, status_text = ? WHERE id = ?",
                           arguments: [status?.emoji, status?.text, id.rawValue])
        }
        if let park = changes.homePark {
            if let park, try Self.catalogParkRow(park, db) == nil { throw PeopleError.unknownPark }
            try db.execute(sql: "UPDATE users SET home_park = ? WHERE id = ?", arguments: [park?.rawValue, id.rawValue])
        }
        if let rides = changes.favouriteRides {
            var entries: [String] = []
            for (index, ride) in rides.prefix(PeopleRules.maximumFavouriteRides).enumerated() {
                // As list items take them: a catalogue id, or a fenced ride's id for its entry.
                guard let entry = try String.fetchOne(db.cachedStatement(sql: "SELECT id FROM catalog_rides WHERE id = ?"), arguments: [ride.rawValue])
                    ?? String.fetchOne(db.cachedStatement(sql: "SELECT id FROM catalog_rides WHERE ride_id = ?"), arguments: [ride.rawValue])
                else { throw PeopleError.unknownRide(index: index) }
                guard !entries.contains(entry) else { throw PeopleError.duplicateRide(index: index) }
                entries.append(entry)
            }
            try db.execute(sql: "DELETE FROM favourite_rides WHERE user_id = ?", arguments: [id.rawValue])
            let insert = try db.cachedStatement(sql: "INSERT INTO favourite_rides (user_id, position, ride_id) VALUES (?, ?, ?)")
            for (position, entry) in entries.enumerated() { try insert.execute(arguments: [id.rawValue, position, entry]) }
        }
        if let findable = changes.findable {
            try db.execute(sql: "UPDATE users SET findable = ? WHERE id = ?", arguments: [findable, id.rawValue])
            // Bounded by the rides the user has ridden.
            try db.execute(sql: "UPDATE ride_counts SET findable = ? WHERE user_id = ? AND findable <> ?", arguments: [findable, id.rawValue, findable])
        }
        if changes.displayName != nil || changes.findable != nil {
            try db.execute(sql: "DELETE FROM people_names WHERE user_id = ?", arguments: [id.rawValue])
            guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT username, display_name, findable FROM users WHERE id = ?"),
                                             arguments: [id.rawValue]), row["findable"] as Bool
            else { return }
            let insert = try db.cachedStatement(sql: "INSERT INTO people_names (key, user_id) VALUES (?, ?)")
            for key in PeopleRules.nameKeys(displayName: row["display_name"], username: row["username"]) {
                try insert.execute(arguments: [key, id.rawValue])
            }
        }
    }

    // MARK: Search

    public func findPeople(_ key: String, viewer: UserID, limit: Int) async throws -> [PersonHit] {
        guard !key.isEmpty, limit > 0 else { return [] }
        return try await self.pool.read { db -> [PersonHit] in
            let rows = try Int64.fetchAll(db.cachedStatement(sql: Self.nameRange), arguments: [
                "key": key, "end": PeopleRules.searchEnd(key), "viewer": viewer.rawValue, "rows": PeopleRules.keysToRead(limit: limit),
            ])
            return try PeopleRules.firstSeen(rows.map { UserID($0) }, limit: limit).compactMap { try Self.personHit($0, viewer: viewer, db) }
        }
    }

    /// Findable users' name keys that start with `:key`, in key order, none of a user blocked
    /// either way: a range of the primary key (QueryPlanTests), at most `:rows` of it.
    static let nameRange = """
        SELECT k.user_id FROM people_names k
        WHERE k.key >= :key AND k.key < :end
          AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker = :viewer AND b.blocked = k.user_id)
          AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker = k.user_id AND b.blocked = :viewer)
        ORDER BY k.key, k.user_id LIMIT :rows
        """

    /// A user as a hit shows them to `viewer`.
    static func personHit(_ user: UserID, viewer: UserID, _ db: Database) throws -> PersonHit? {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: Self.personHitRow), arguments: ["user": user.rawValue, "viewer": viewer.rawValue])
        else { return nil }
        let park = (row["home_park"] as String?).flatMap { id in
            (row["park_name"] as String?).map { CatalogPark(id: ParkID(rawValue: id), name: $0, fenced: row["park_fenced"]) }
        }
        return PersonHit(user: Self.summary(row), status: Self.status(row), homePark: park, photo: row["photo_id"], friend: row["friend"],
                         following: row["following"])
    }

    static let personHitRow = """
        SELECT u.id, u.username, u.display_name, u.status_emoji, u.status_text, u.home_park, u.photo_id,
               p.name AS park_name, p.fenced AS park_fenced,
               EXISTS (SELECT 1 FROM friendships f WHERE f.status = 'accepted'
                       AND ((f.requester = :viewer AND f.addressee = u.id) OR (f.requester = u.id AND f.addressee = :viewer))) AS friend,
               EXISTS (SELECT 1 FROM user_follows w WHERE w.follower_id = :viewer AND w.followee_id = u.id) AS following
        FROM users u LEFT JOIN catalog_parks p ON p.id = u.home_park WHERE u.id = :user
        """

    // MARK: Riders like you

    public func suggestedPeople(for viewer: UserID, limit: Int, rules: PeopleRules, privacy: LocationPrivacy) async throws -> [SuggestedPerson] {
        guard limit > 0 else { return [] }
        let settled = privacy.placesShownBefore(self.now()).timeIntervalSince1970
        return try await self.pool.read { db -> [SuggestedPerson] in
            let me = viewer.rawValue
            let friends = try Int64.fetchAll(db.cachedStatement(sql: Self.friendIDs), arguments: [me]).sorted()
            var friendsOfFriends: [(UserID, UserID)] = []
            let asked = try db.cachedStatement(sql: Self.friendsAsked), askedBy = try db.cachedStatement(sql: Self.friendsAskedBy)
            for friend in friends.prefix(rules.friendsConsidered) {
                for statement in [asked, askedBy] {
                    for user in try Int64.fetchAll(statement, arguments: [friend, rules.friendsOfEachFriend]) {
                        friendsOfFriends.append((UserID(friend), UserID(user)))
                    }
                }
            }
            var credits: [(String, UserID)] = []
            let riders = try db.cachedStatement(sql: Self.findableRiders)
            for ride in try String.fetchAll(db.cachedStatement(sql: Self.coasterCredits), arguments: [me, rules.suggestionCredits]) {
                for user in try Int64.fetchAll(riders, arguments: [ride, me, settled, rules.ridersPerCredit]) { credits.append((ride, UserID(user))) }
            }
            let excluded = Set(friends.map { UserID($0) }).union([viewer])
            let sampled = PeopleRules.ranked(PeopleRules.sampled(credits: credits, friendsOfFriends: friendsOfFriends, excluding: excluded),
                                             limit: Int.max)
            // Walked in the samples' order until enough eligible ones are found: each costs a few
            // probes, and the samples bound how many there are.
            var measured: [PeopleRules.Candidate] = []
            let eligible = try db.cachedStatement(sql: Self.eligible), exact = try db.cachedStatement(sql: Self.exactCounts)
            for candidate in sampled {
                guard measured.count < limit * rules.measuredPerPlace else { break }
                let arguments: StatementArguments = ["viewer": me, "user": candidate.user.rawValue, "settled": settled]
                guard try Bool.fetchOne(eligible, arguments: arguments) == true, let row = try Row.fetchOne(exact, arguments: arguments) else { continue }
                measured.append(PeopleRules.Candidate(user: candidate.user, sharedCredits: row["shared"], mutualFriends: row["mutual"]))
            }
            return try PeopleRules.ranked(measured, limit: limit).compactMap { candidate in
                try Self.personHit(candidate.user, viewer: viewer, db).map {
                    SuggestedPerson(person: $0, sharedCredits: candidate.sharedCredits, mutualFriends: candidate.mutualFriends)
                }
            }
        }
    }

    /// A user's accepted friends: ranges of the primary key and of the index by addressee.
    static let friendIDs = """
        SELECT addressee FROM friendships WHERE requester = ?1 AND status = 'accepted'
        UNION ALL SELECT requester FROM friendships WHERE addressee = ?1 AND status = 'accepted'
        """
    /// Friends a user asked, the first by id: a range of the primary key.
    static let friendsAsked = "SELECT addressee FROM friendships WHERE requester = ? AND status = 'accepted' ORDER BY addressee LIMIT ?"
    /// Friends who asked a user, the first by when: a range of the index by addressee and time.
    static let friendsAskedBy = """
        SELECT requester FROM friendships WHERE addressee = ? AND status = 'accepted' ORDER BY created_at, requester LIMIT ?
        """
    /// A rider's coaster credits, the first by ride id.
    static let coasterCredits = """
        SELECT c.ride_id FROM ride_counts c JOIN rides r ON r.id = c.ride_id WHERE c.user_id = ? AND r.type = 'coaster' ORDER BY c.ride_id LIMIT ?
        """
    /// Findable riders of a ride but the viewer whose first ride of it is settled (before the
    /// third argument), the first by id: a range of `ride_counts_findable`, and a probe of
    /// `ride_logs_by_user` each.
    static let findableRiders = """
        SELECT c.user_id FROM ride_counts c WHERE c.ride_id = ? AND c.findable = 1 AND c.user_id <> ?
            AND (SELECT min(l.ridden_at) FROM ride_logs l WHERE l.user_id = c.user_id AND l.ride_id = c.ride_id) <= ?
        ORDER BY c.user_id LIMIT ?
        """

    /// Whether `:user` may be suggested to `:viewer`: findable, no friendship or request either
    /// way, no block either way.
    static let eligible = """
        SELECT u.findable = 1
           AND NOT EXISTS (SELECT 1 FROM friendships f WHERE (f.requester = :viewer AND f.addressee = u.id) OR (f.requester = u.id AND f.addressee = :viewer))
           AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker = :viewer AND b.blocked = u.id)
           AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker = u.id AND b.blocked = :viewer)
        FROM users u WHERE u.id = :user
        """

    /// Coasters both have ridden, `:user` first before `:settled` (probes of `:user`'s counts
    /// and first log per ride of the viewer's), and friends of both (a probe of the viewer's
    /// friendships per friend of `:user`'s).
    static let exactCounts = """
        SELECT (SELECT count(*) FROM ride_counts mine JOIN rides r ON r.id = mine.ride_id AND r.type = 'coaster'
                JOIN ride_counts theirs ON theirs.user_id = :user AND theirs.ride_id = mine.ride_id
                WHERE mine.user_id = :viewer
                  AND (SELECT min(l.ridden_at) FROM ride_logs l WHERE l.user_id = :user AND l.ride_id = mine.ride_id) <= :settled) AS shared,
               (SELECT count(*) FROM friendships a WHERE a.requester = :user AND a.status = 'accepted' AND EXISTS (
                    SELECT 1 FROM friendships b WHERE b.status = 'accepted'
                    AND ((b.requester = :viewer AND b.addressee = a.addressee) OR (b.requester = a.addressee AND b.addressee = :viewer))))
             + (SELECT count(*) FROM friendships a WHERE a.addressee = :user AND a.status = 'accepted' AND EXISTS (
                    SELECT 1 FROM friendships b WHERE b.status = 'accepted'
                    AND ((b.requester = :viewer AND b.addressee = a.requester) OR (b.requester = a.requester AND b.addressee = :viewer)))) AS mutual
        """
}
