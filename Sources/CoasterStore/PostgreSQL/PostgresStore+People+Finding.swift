import CoasterCore
import Foundation
import PostgresNIO

// Profile cards, people search, "riders like you" and follows (docs: People), answering as the
// SpatiaLite store does: the same samples (each an ORDER BY … LIMIT), the same rules ranking them.
extension PostgresStore: FollowStore {
    // MARK: Cards

    /// What a user's own profile and their page add to the account's columns.
    struct PeopleColumns {
        var card: ProfileCard
        var findable: Bool
        var follows: FollowCounts
    }

    /// The card, opt-in and counts of `user`, or `nil` if there is no such user.
    static func peopleColumns(_ user: UserID, _ tx: PostgresTransaction) async throws -> PeopleColumns? {
        guard let row = try await tx.first("""
            SELECT u.status_emoji, u.status_text, u.home_park, p.name, p.fenced, u.findable, u.followers, u.following
            FROM users u LEFT JOIN catalog_parks p ON p.id = u.home_park WHERE u.id = \(user.rawValue)
            """) else { return nil }
        let (emoji, text, park, parkName, parkFenced, findable, followers, following) = try row.decode(
            (String?, String?, String?, String?, Bool?, Bool, Int, Int).self)
        let rides = try await tx.rows("""
            SELECT \(unescaped: Self.catalogRideColumns)
            FROM favourite_rides f JOIN catalog_rides r ON r.id = f.ride_id JOIN catalog_parks p ON p.id = r.park_id
            WHERE f.user_id = \(user.rawValue) ORDER BY f.position
            """).map { try Self.catalogRide($0) }
        return PeopleColumns(
            card: ProfileCard(status: Self.status(emoji, text), homePark: Self.park(park, parkName, parkFenced), favouriteRides: rides),
            findable: findable, follows: FollowCounts(followers: followers, following: following))
    }

    static func status(_ emoji: String?, _ text: String?) -> ProfileStatus? {
        emoji.map { ProfileStatus(emoji: $0, text: text ?? "") }
    }

    static func park(_ id: String?, _ name: String?, _ fenced: Bool?) -> CatalogPark? {
        guard let id, let name else { return nil }
        return CatalogPark(id: ParkID(rawValue: id), name: name, fenced: fenced ?? false)
    }

    /// Writes the people members of `changes` in the profile write's transaction (which holds the
    /// user's lock), after its display name, as ``SpatiaLiteStore`` writes them.
    static func applyPeopleChanges(_ id: UserID, _ changes: ProfileChanges, _ tx: PostgresTransaction) async throws {
        let user = id.rawValue
        if let status = changes.status {
            try await tx.run("UPDATE users SET status_emoji = \(status?.emoji), status_text = \(status?.text) WHERE id = \(user)")
        }
        if let park = changes.homePark {
            if let park, try await tx.first("SELECT 1 FROM catalog_parks WHERE id = \(park.rawValue)") == nil { throw PeopleError.unknownPark }
            try await tx.run("UPDATE users SET home_park = \(park?.rawValue) WHERE id = \(user)")
        }
        if let rides = changes.favouriteRides {
            let asked = Array(rides.prefix(PeopleRules.maximumFavouriteRides))
            // Each id as list items take them: a catalogue id, or a fenced ride's id for its entry.
            let found = try await tx.rows("""
                SELECT a.n, coalesce(byID.id, byRide.id)
                FROM unnest(\(asked.map(\.rawValue))::text[]) WITH ORDINALITY AS a(id, n)
                LEFT JOIN catalog_rides byID ON byID.id = a.id
                LEFT JOIN catalog_rides byRide ON byRide.ride_id = a.id
                ORDER BY a.n
                """).map { try $0.decode((Int, String?).self) }
            var entries: [String] = []
            for (n, entry) in found {
                guard let entry else { throw PeopleError.unknownRide(index: n - 1) }
                guard !entries.contains(entry) else { throw PeopleError.duplicateRide(index: n - 1) }
                entries.append(entry)
            }
            try await tx.run("DELETE FROM favourite_rides WHERE user_id = \(user)")
            if !entries.isEmpty {
                try await tx.run("""
                    INSERT INTO favourite_rides (user_id, position, ride_id)
                    SELECT \(user), e.n - 1, e.id FROM unnest(\(entries)::text[]) WITH ORDINALITY AS e(id, n)
                    """)
            }
        }
        if let findable = changes.findable {
            try await tx.run("UPDATE users SET findable = \(findable) WHERE id = \(user)")
            try await tx.run("UPDATE ride_counts SET findable = \(findable) WHERE user_id = \(user) AND findable <> \(findable)")
        }
        if changes.displayName != nil || changes.findable != nil {
            try await tx.run("DELETE FROM people_names WHERE user_id = \(user)")
            let (username, displayName, findable) = try await tx.one("SELECT username, display_name, findable FROM users WHERE id = \(user)")
                .decode((String, String, Bool).self)
            let keys = PeopleRules.nameKeys(displayName: displayName, username: username)
            if findable, !keys.isEmpty {
                try await tx.run("INSERT INTO people_names (key, user_id) SELECT k, \(user) FROM unnest(\(keys)::text[]) AS k")
            }
        }
    }

    // MARK: Search

    public func findPeople(_ key: String, viewer: UserID, limit: Int) async throws -> [PersonHit] {
        guard !key.isEmpty, limit > 0 else { return [] }
        return try await self.read { tx -> [PersonHit] in
            let me = viewer.rawValue
            let rows = try await tx.rows("""
                SELECT k.user_id FROM people_names k
                WHERE k.key >= \(key) AND k.key < \(PeopleRules.searchEnd(key))
                  AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker = \(me) AND b.blocked = k.user_id)
                  AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker = k.user_id AND b.blocked = \(me))
                ORDER BY k.key, k.user_id LIMIT \(PeopleRules.keysToRead(limit: limit))
                """).map { UserID(try $0.decode(Int64.self)) }
            return try await Self.personHits(PeopleRules.firstSeen(rows, limit: limit), viewer: viewer, tx)
        }
    }

    /// The users `ids` as hits show them to `viewer`, in the order of `ids`, in one statement.
    static func personHits(_ ids: [UserID], viewer: UserID, _ tx: PostgresTransaction) async throws -> [PersonHit] {
        guard !ids.isEmpty else { return [] }
        let me = viewer.rawValue
        var hits: [UserID: PersonHit] = [:]
        for row in try await tx.rows("""
            SELECT u.id, u.username, u.display_name, u.status_emoji, u.status_text, u.home_park, p.name, p.fenced, u.photo_id,
                   EXISTS (SELECT 1 FROM friendships f WHERE f.status = 'accepted'
                           AND ((f.requester = \(me) AND f.addressee = u.id) OR (f.requester = u.id AND f.addressee = \(me)))),
                   EXISTS (SELECT 1 FROM user_follows w WHERE w.follower_id = \(me) AND w.followee_id = u.id)
            FROM users u LEFT JOIN catalog_parks p ON p.id = u.home_park WHERE u.id = ANY(\(ids.map(\.rawValue))::bigint[])
            """) {
            let (id, username, displayName, emoji, text, park, parkName, parkFenced, photo, friend, following) = try row.decode(
                (Int64, String, String, String?, String?, String?, String?, Bool?, Int64?, Bool, Bool).self)
            hits[UserID(id)] = PersonHit(user: UserSummary(id: UserID(id), username: username, displayName: displayName),
                                         status: Self.status(emoji, text), homePark: Self.park(park, parkName, parkFenced), photo: photo,
                                         friend: friend, following: following)
        }
        return ids.compactMap { hits[$0] }
    }

    // MARK: Riders like you

    public func suggestedPeople(for viewer: UserID, limit: Int, rules: PeopleRules, privacy: LocationPrivacy) async throws -> [SuggestedPerson] {
        guard limit > 0 else { return [] }
        let settled = privacy.placesShownBefore(self.now()).timeIntervalSince1970
        return try await self.read { tx -> [SuggestedPerson] in
            let me = viewer.rawValue
            let friends = try await tx.rows("""
                SELECT addressee FROM friendships WHERE requester = \(me) AND status = 'accepted'
                UNION ALL SELECT requester FROM friendships WHERE addressee = \(me) AND status = 'accepted'
                """).map { try $0.decode(Int64.self) }.sorted()
            let considered = Array(friends.prefix(rules.friendsConsidered))
            let friendsOfFriends = try await tx.rows("""
                SELECT f.id, x.user_id FROM unnest(\(considered)::bigint[]) AS f(id)
                CROSS JOIN LATERAL (
                    (SELECT addressee AS user_id FROM friendships WHERE requester = f.id AND status = 'accepted'
                     ORDER BY addressee LIMIT \(rules.friendsOfEachFriend))
                    UNION ALL
                    (SELECT requester FROM friendships WHERE addressee = f.id AND status = 'accepted'
                     ORDER BY created_at, requester LIMIT \(rules.friendsOfEachFriend))
                ) x
                """).map { row -> (UserID, UserID) in
                let (friend, user) = try row.decode((Int64, Int64).self)
                return (UserID(friend), UserID(user))
            }
            let credits = try await tx.rows("""
                SELECT c.ride_id, x.user_id
                FROM (SELECT c.ride_id FROM ride_counts c JOIN rides r ON r.id = c.ride_id
                      WHERE c.user_id = \(me) AND r.type = 'coaster' ORDER BY c.ride_id LIMIT \(rules.suggestionCredits)) c
                CROSS JOIN LATERAL (SELECT t.user_id FROM ride_counts t WHERE t.ride_id = c.ride_id AND t.findable AND t.user_id <> \(me)
                                        AND (SELECT min(l.ridden_at) FROM ride_logs l WHERE l.user_id = t.user_id AND l.ride_id = t.ride_id) <= \(settled)
                                    ORDER BY t.user_id LIMIT \(rules.ridersPerCredit)) x
                """).map { row -> (String, UserID) in
                let (ride, user) = try row.decode((String, Int64).self)
                return (ride, UserID(user))
            }
            let excluded = Set(friends.map { UserID($0) }).union([viewer])
            let sampled = PeopleRules.ranked(PeopleRules.sampled(credits: credits, friendsOfFriends: friendsOfFriends, excluding: excluded),
                                             limit: Int.max)
            // The first eligible ones in the samples' order, checked a batch at a time.
            let wanted = limit * rules.measuredPerPlace
            var chosen: [UserID] = []
            var start = 0
            while chosen.count < wanted, start < sampled.count {
                let batch = sampled[start..<min(start + 500, sampled.count)].map(\.user.rawValue)
                start += batch.count
                let eligible = Set(try await tx.rows("""
                    SELECT u.id FROM users u
                    WHERE u.id = ANY(\(batch)::bigint[]) AND u.findable
                      AND NOT EXISTS (SELECT 1 FROM friendships f WHERE (f.requester = \(me) AND f.addressee = u.id) OR (f.requester = u.id AND f.addressee = \(me)))
                      AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker = \(me) AND b.blocked = u.id)
                      AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker = u.id AND b.blocked = \(me))
                    """).map { try $0.decode(Int64.self) })
                for id in batch where eligible.contains(id) && chosen.count < wanted { chosen.append(UserID(id)) }
            }
            guard !chosen.isEmpty else { return [] }
            let measured = try await tx.rows("""
                SELECT c.id,
                       (SELECT count(*) FROM ride_counts mine JOIN rides r ON r.id = mine.ride_id AND r.type = 'coaster'
                        JOIN ride_counts theirs ON theirs.user_id = c.id AND theirs.ride_id = mine.ride_id
                        WHERE mine.user_id = \(me)
                          AND (SELECT min(l.ridden_at) FROM ride_logs l WHERE l.user_id = c.id AND l.ride_id = mine.ride_id) <= \(settled)),
                       (SELECT count(*) FROM friendships a WHERE a.requester = c.id AND a.status = 'accepted' AND EXISTS (
                            SELECT 1 FROM friendships b WHERE b.status = 'accepted'
                            AND ((b.requester = \(me) AND b.addressee = a.addressee) OR (b.requester = a.addressee AND b.addressee = \(me)))))
                     + (SELECT count(*) FROM friendships a WHERE a.addressee = c.id AND a.status = 'accepted' AND EXISTS (
                            SELECT 1 FROM friendships b WHERE b.status = 'accepted'
                            AND ((b.requester = \(me) AND b.addressee = a.requester) OR (b.requester = a.requester AND b.addressee = \(me)))))
                FROM unnest(\(chosen.map(\.rawValue))::bigint[]) AS c(id)
                """).map { row -> PeopleRules.Candidate in
                let (id, shared, mutual) = try row.decode((Int64, Int, Int).self)
                return PeopleRules.Candidate(user: UserID(id), sharedCredits: shared, mutualFriends: mutual)
            }
            let ranked = PeopleRules.ranked(measured, limit: limit)
            let hits = Dictionary(uniqueKeysWithValues: try await Self.personHits(ranked.map(\.user), viewer: viewer, tx).map { ($0.user.id, $0) })
            return ranked.compactMap { c in
                hits[c.user].map { SuggestedPerson(person: $0, sharedCredits: c.sharedCredits, mutualFriends: c.mutualFriends) }
            }
        }
    }

    // MARK: Follows

    public func isFollowing(_ follower: UserID, _ followee: UserID) async throws -> Bool {
        try await self.single { tx in
            try await tx.first("SELECT 1 FROM user_follows WHERE follower_id = \(follower.rawValue) AND followee_id = \(followee.rawValue)") != nil
        }
    }

    public func follow(_ follower: UserID, _ followee: UserID, rules: PeopleRules) async throws {
        let t = self.now().timeIntervalSince1970
        // Both users' locks, as a block takes them: a block cannot slip between the check and the insert.
        try await self.transaction(locking: [follower, followee]) { tx in
            guard follower != followee else { throw PeopleError.cannotFollowSelf }
            // Key-shared: the account is not deleted under the follow.
            guard try await tx.first("SELECT 1 FROM users WHERE id = \(followee.rawValue) FOR KEY SHARE") != nil else { throw FriendshipError.noSuchUser }
            // A block either way answers as no such user does: it says nothing of the block.
            let relationship = try await Self.relationship(follower, followee, tx)
            if relationship == .blocking || relationship == .blockedBy { throw FriendshipError.noSuchUser }
            let (already, following) = try await tx.one("""
                SELECT EXISTS (SELECT 1 FROM user_follows WHERE follower_id = \(follower.rawValue) AND followee_id = \(followee.rawValue)),
                       (SELECT following FROM users WHERE id = \(follower.rawValue))
                """).decode((Bool, Int?).self)
            guard !already else { return }
            guard (following ?? 0) < rules.maximumFollowing else { throw PeopleError.tooManyFollows(limit: rules.maximumFollowing) }
            try await tx.run("INSERT INTO user_follows (follower_id, followee_id, at) VALUES (\(follower.rawValue), \(followee.rawValue), \(t))")
        }
    }

    public func unfollow(_ follower: UserID, _ followee: UserID) async throws {
        try await self.single { tx in
            try await tx.run("DELETE FROM user_follows WHERE follower_id = \(follower.rawValue) AND followee_id = \(followee.rawValue)")
        }
    }
}
