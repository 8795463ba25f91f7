import CoasterCore
import Foundation
import PostgresNIO

/// Ride lists (docs: Lists).
///
/// Who may read a list is one SQL predicate (``readable(_:viewer:)``), used by every statement
/// that shows a list, its items or its changes, or acts on one for someone who does not own it.
/// Locks: an owner's writes take the owner's lock, as do the ride-log and visit hooks (the rider
/// is the owner of the items they check), so a list's items are changed by one transaction at a
/// time; likes, follows and copies take the actor's lock and hold the list's row with a key-share
/// lock while they write beside it, so the list cannot be deleted under them. The counts of items
/// and of lists holding a ride are the schema's triggers'. Checks made by evidence are shown to
/// others by one predicate (``shownToOthers(_:at:source:)``): from ``ListRules/shownAt(_:privacy:)``
/// on, a time stored with the check and its change, and a visit's once the visit is over.
extension PostgresStore: ListStore {
    public func createList(_ draft: ListDraft, owner: UserID, rules: ListRules, privacy: LocationPrivacy) async throws -> RideListView {
        let t = self.now().timeIntervalSince1970
        let token = draft.visibility == .link ? ListRules.newShareToken() : nil
        return try await self.transaction(locking: [owner]) { tx in
            let (exists, lists, coverIsTheirs) = try await tx.one("""
                SELECT EXISTS (SELECT 1 FROM users WHERE id = \(owner.rawValue)), (SELECT count(*) FROM lists WHERE owner_id = \(owner.rawValue)),
                       EXISTS (SELECT 1 FROM photos WHERE id = \(draft.cover) AND user_id = \(owner.rawValue))
                """).decode((Bool, Int, Bool).self)
            guard exists else { throw ListError.noSuchUser }
            guard lists < rules.maximumLists else { throw ListError.tooManyLists(limit: rules.maximumLists) }
            if draft.cover != nil, !coverIsTheirs { throw ListError.noSuchPhoto }
            let id = try await tx.one("""
                INSERT INTO lists (owner_id, title, description, visibility, share_token, cover_photo_id, created_at, updated_at)
                VALUES (\(owner.rawValue), \(draft.title), \(draft.description), \(draft.visibility.rawValue), \(token), \(draft.cover), \(t), \(t))
                RETURNING id
                """).decode(Int64.self)
            return try await Self.requireListView(id, viewer: owner, now: t, privacy: privacy, tx)
        }
    }

    public func list(_ id: Int64, viewer: UserID, privacy: LocationPrivacy) async throws -> RideListView? {
        let t = self.now().timeIntervalSince1970
        return try await self.single { tx in
            try await Self.listViews([id], viewer: viewer, now: t, privacy: privacy, tx).first { $0.readable }?.view
        }
    }

    public func sharedList(token: String, sort: ListSort, privacy: LocationPrivacy) async throws -> (list: RideListView, items: [ListItemView])? {
        let t = self.now().timeIntervalSince1970
        let found = try await self.read { tx -> SharedList? in
            guard let id = try await tx.first("SELECT id FROM lists WHERE share_token = \(token) AND visibility = 'link'")
                .map({ try $0.decode(Int64.self) }),
                let view = try await Self.listViews([id], viewer: nil, now: t, privacy: privacy, tx).first?.view
            else { return nil }
            let items = try await Self.itemViews(list: id, owner: false, now: t, privacy: privacy, sort: sort, limit: Int.max, offset: 0, tx)
            return SharedList(list: view, items: items)
        }
        return found.map { ($0.list, $0.items) }
    }

    public func lists(of owner: UserID, viewer: UserID, privacy: LocationPrivacy, limit: Int, before: Int64?) async throws -> [RideListView] {
        let t = self.now().timeIntervalSince1970
        return try await self.read { tx in
            let ids = try await tx.rows("""
                SELECT l.id FROM lists l, (SELECT \(viewer.rawValue)::bigint AS id) v
                WHERE l.owner_id = \(owner.rawValue) AND l.id < \(before ?? Int64.max) AND \(unescaped: Self.readable("l", viewer: "v.id"))
                ORDER BY l.id DESC LIMIT \(max(0, limit))
                """).map { try $0.decode(Int64.self) }
            return try await Self.listViews(ids, viewer: viewer, now: t, privacy: privacy, tx).map(\.view)
        }
    }

    public func items(of list: Int64, viewer: UserID, sort: ListSort, privacy: LocationPrivacy, limit: Int,
                      offset: Int) async throws -> [ListItemView]? {
        let t = self.now().timeIntervalSince1970
        return try await self.read { tx -> [ListItemView]? in
            guard let head = try await Self.listHead(list, caller: viewer, tx), head.readable else { return nil }
            return try await Self.itemViews(list: list, owner: head.owner == viewer.rawValue, now: t, privacy: privacy, sort: sort, limit: max(0, limit),
                                            offset: max(0, offset), tx)
        }
    }

    public func editList(_ id: Int64, owner: UserID, edit: ListEdit, privacy: LocationPrivacy) async throws -> RideListView {
        let t = self.now().timeIntervalSince1970
        return try await self.transaction(locking: [owner]) { tx in
            let head = try await Self.ownedList(id, owner: owner, tx)
            if case .some(.some(let cover)) = edit.cover {
                guard try await tx.one("SELECT EXISTS (SELECT 1 FROM photos WHERE id = \(cover) AND user_id = \(owner.rawValue))").decode(Bool.self)
                else { throw ListError.noSuchPhoto }
            }
            let visibility = edit.visibility ?? head.visibility
            // The token lives while the list is `link`: issued on becoming it or on asking anew, kept otherwise.
            let keepToken = visibility == .link && head.visibility == .link && !edit.newLink
            let token = visibility == .link && !keepToken ? ListRules.newShareToken() : nil
            let setCover = edit.cover != nil
            try await tx.run("""
                UPDATE lists SET title = coalesce(\(edit.title), title), description = coalesce(\(edit.description), description),
                    visibility = \(visibility.rawValue), share_token = CASE WHEN \(keepToken) THEN share_token ELSE \(token) END,
                    cover_photo_id = CASE WHEN \(setCover) THEN \(edit.cover.flatMap { $0 }) ELSE cover_photo_id END, updated_at = \(t)
                WHERE id = \(id)
                """)
            return try await Self.requireListView(id, viewer: owner, now: t, privacy: privacy, tx)
        }
    }

    public func deleteList(_ id: Int64, owner: UserID) async throws {
        try await self.transaction(locking: [owner]) { tx in
            _ = try await Self.ownedList(id, owner: owner, tx)
            try await tx.run("DELETE FROM lists WHERE id = \(id)")
        }
    }

    public func addItem(to list: Int64, owner: UserID, target: ListItemTarget, note: String?, position: Int?, rules: ListRules,
                        privacy: LocationPrivacy) async throws -> ListItemView {
        let t = self.now().timeIntervalSince1970
        return try await self.transaction(locking: [owner]) { tx in
            let head = try await Self.ownedList(list, owner: owner, tx)
            // The target (a ride by its entry's id or its fenced ride's), its name, the owner's newest
            // evidence for it, and whether the list holds it.
            let found: PostgresRow? = switch target {
            case .ride(let ride):
                try await tx.first("""
                    SELECT r.id, r.name, (SELECT max(g.ridden_at) FROM ride_logs g WHERE g.user_id = \(owner.rawValue) AND g.ride_id = r.ride_id),
                           (SELECT i.id FROM list_items i WHERE i.list_id = \(list) AND i.kind = 'ride' AND i.target_id = r.id)
                    FROM catalog_rides r WHERE r.id = \(ride.rawValue) OR r.ride_id = \(ride.rawValue)
                    ORDER BY r.id = \(ride.rawValue) DESC LIMIT 1
                    """)
            case .park(let park):
                try await tx.first("""
                    SELECT p.id, p.name, (SELECT max(v.entered_at) FROM visits v WHERE v.user_id = \(owner.rawValue) AND v.park_id = p.id),
                           (SELECT i.id FROM list_items i WHERE i.list_id = \(list) AND i.kind = 'park' AND i.target_id = p.id)
                    FROM catalog_parks p WHERE p.id = \(park.rawValue)
                    """)
            }
            guard let found else { throw ListError.unknownTarget(pointer: "/" + target.kind) }
            let (targetID, name, evidence, existing) = try found.decode((String, String, Double?, Int64?).self)
            if let existing { throw ListError.duplicateItem(existing: existing) }
            let place = position ?? head.items
            guard place >= 0, place <= head.items else { throw ListError.positionOutOfRange(largest: head.items) }
            guard head.items < rules.maximumItems else { throw ListError.tooManyItems(limit: rules.maximumItems) }
            let check = evidence.map { ListCheck(at: Date(timeIntervalSince1970: $0), source: target.kind == "ride" ? .rideLog : .visit) }
            let shownAt = check.map { ListRules.shownAt($0, privacy: privacy).timeIntervalSince1970 }
            let item = try await tx.one("""
                WITH shifted AS (
                    UPDATE list_items SET position = position + 1 WHERE list_id = \(list) AND position >= \(place)
                ), item AS (
                    INSERT INTO list_items (list_id, owner_id, kind, target_id, note, position, added_at, checked_at, checked_by, shown_at)
                    VALUES (\(list), \(owner.rawValue), \(target.kind), \(targetID), \(note), \(place), \(t), \(evidence),
                            \(check?.source.rawValue), \(shownAt))
                    RETURNING id
                ), added AS (
                    INSERT INTO list_changes (list_id, owner_id, kind, item_id, target_kind, target_id, item_name, at, shown_at)
                    SELECT \(list), \(owner.rawValue), 'item-added', id, \(target.kind), \(targetID), \(name), \(t), \(t) FROM item
                ), touched AS (
                    UPDATE lists SET updated_at = \(t) WHERE id = \(list)
                )
                SELECT id FROM item
                """).decode(Int64.self)
            return try await Self.requireItemView(item, list: list, now: t, privacy: privacy, tx)
        }
    }

    public func editItem(_ item: Int64, in list: Int64, owner: UserID, edit: ListItemEdit, privacy: LocationPrivacy) async throws -> ListItemView {
        let t = self.now().timeIntervalSince1970
        return try await self.transaction(locking: [owner]) { tx in
            let head = try await Self.ownedList(list, owner: owner, tx)
            guard let row = try await tx.first("""
                SELECT i.position, i.checked_at IS NOT NULL, i.kind, i.target_id, coalesce(r.name, p.name, i.target_id)
                FROM list_items i
                LEFT JOIN catalog_rides r ON i.kind = 'ride' AND r.id = i.target_id
                LEFT JOIN catalog_parks p ON i.kind = 'park' AND p.id = i.target_id
                WHERE i.id = \(item) AND i.list_id = \(list)
                """) else { throw ListError.noSuchItem }
            let (from, checked, kind, target, name) = try row.decode((Int, Bool, String, String, String).self)
            if let to = edit.position {
                guard to >= 0, to < head.items else { throw ListError.positionOutOfRange(largest: head.items - 1) }
                if to != from {
                    try await tx.run("""
                        UPDATE list_items SET position = CASE WHEN id = \(item) THEN \(to) WHEN \(to) > \(from) THEN position - 1 ELSE position + 1 END
                        WHERE list_id = \(list) AND position BETWEEN \(min(from, to)) AND \(max(from, to))
                        """)
                }
            }
            // A check by hand says so to the followers; an uncheck by hand sticks, and takes back a
            // change of a check no one has been shown yet (it would say where the owner was).
            let checking = edit.checked == true && !checked
            let unchecking = edit.checked == false
            let shownAt = ListRules.shownAt(ListCheck(at: Date(timeIntervalSince1970: t), source: .hand), privacy: privacy).timeIntervalSince1970
            let setNote = edit.note != nil
            let settled = privacy.placesShownBefore(Date(timeIntervalSince1970: t)).timeIntervalSince1970
            try await tx.run("""
                WITH changed AS (
                    UPDATE list_items SET note = CASE WHEN \(setNote) THEN \(edit.note.flatMap { $0 }) ELSE note END,
                        checked_at = CASE WHEN \(checking) THEN \(t) WHEN \(unchecking) THEN NULL ELSE checked_at END,
                        checked_by = CASE WHEN \(checking) THEN 'by hand' WHEN \(unchecking) THEN NULL ELSE checked_by END,
                        shown_at = CASE WHEN \(checking) THEN \(shownAt) WHEN \(unchecking) THEN NULL ELSE shown_at END,
                        unchecked_by_hand = CASE WHEN \(checking) THEN false WHEN \(unchecking) THEN true ELSE unchecked_by_hand END
                    WHERE id = \(item)
                ), checked AS (
                    INSERT INTO list_changes (list_id, owner_id, kind, item_id, target_kind, target_id, item_name, source, at, shown_at)
                    SELECT \(list), \(owner.rawValue), 'item-checked', \(item), \(kind), \(target), \(name), 'by hand', \(t), \(shownAt)
                    WHERE \(checking)
                ), unsaid AS (
                    DELETE FROM list_changes c USING (SELECT \(t)::float8 AS now, \(settled)::float8 AS settled) k
                    WHERE \(unchecking) AND c.list_id = \(list) AND c.item_id = \(item) AND c.kind = 'item-checked'
                        AND NOT \(unescaped: Self.shownToOthers("c", at: "at", source: "source"))
                )
                UPDATE lists SET updated_at = \(t) WHERE id = \(list)
                """)
            return try await Self.requireItemView(item, list: list, now: t, privacy: privacy, tx)
        }
    }

    public func removeItem(_ item: Int64, from list: Int64, owner: UserID) async throws {
        let t = self.now().timeIntervalSince1970
        try await self.transaction(locking: [owner]) { tx in
            _ = try await Self.ownedList(list, owner: owner, tx)
            let removed = try await tx.one("""
                WITH gone AS (
                    DELETE FROM list_items WHERE id = \(item) AND list_id = \(list) RETURNING position
                ), shifted AS (
                    UPDATE list_items SET position = position - 1 WHERE list_id = \(list) AND position > (SELECT position FROM gone)
                ), touched AS (
                    UPDATE lists SET updated_at = \(t) WHERE id = \(list) AND EXISTS (SELECT 1 FROM gone)
                )
                SELECT count(*) FROM gone
                """).decode(Int.self)
            guard removed == 1 else { throw ListError.noSuchItem }
        }
    }

    public func setListLike(_ id: Int64, user: UserID, liked: Bool, privacy: LocationPrivacy) async throws -> RideListView {
        let t = self.now().timeIntervalSince1970
        return try await self.transaction(locking: [user]) { tx in
            guard let head = try await Self.listHead(id, caller: user, lock: true, tx), head.readable else { throw ListError.noSuchList }
            if liked {
                try await tx.run("""
                    WITH liked AS (
                        INSERT INTO list_likes (list_id, user_id, at) VALUES (\(id), \(user.rawValue), \(t))
                        ON CONFLICT (list_id, user_id) DO NOTHING RETURNING 1
                    )
                    UPDATE lists SET likes = likes + 1 WHERE id = \(id) AND EXISTS (SELECT 1 FROM liked)
                    """)
            } else {
                try await tx.run("""
                    WITH unliked AS (DELETE FROM list_likes WHERE list_id = \(id) AND user_id = \(user.rawValue) RETURNING 1)
                    UPDATE lists SET likes = likes - 1 WHERE id = \(id) AND EXISTS (SELECT 1 FROM unliked)
                    """)
            }
            return try await Self.requireListView(id, viewer: user, now: t, privacy: privacy, tx)
        }
    }

    public func setListFollow(_ id: Int64, user: UserID, following: Bool, rules: ListRules, privacy: LocationPrivacy) async throws -> RideListView {
        let t = self.now().timeIntervalSince1970
        return try await self.transaction(locking: [user]) { tx in
            guard let head = try await Self.listHead(id, caller: user, lock: true, tx), head.readable else { throw ListError.noSuchList }
            guard head.owner != user.rawValue else { throw ListError.ownList }
            if following {
                let (already, follows) = try await tx.one("""
                    SELECT EXISTS (SELECT 1 FROM list_follows WHERE list_id = \(id) AND user_id = \(user.rawValue)),
                           (SELECT count(*) FROM list_follows WHERE user_id = \(user.rawValue))
                    """).decode((Bool, Int).self)
                if !already {
                    guard follows < rules.maximumFollows else { throw ListError.tooManyFollows(limit: rules.maximumFollows) }
                    try await tx.run("""
                        WITH followed AS (INSERT INTO list_follows (list_id, user_id, at) VALUES (\(id), \(user.rawValue), \(t)))
                        UPDATE lists SET followers = followers + 1 WHERE id = \(id)
                        """)
                }
            } else {
                try await tx.run("""
                    WITH unfollowed AS (DELETE FROM list_follows WHERE list_id = \(id) AND user_id = \(user.rawValue) RETURNING 1)
                    UPDATE lists SET followers = followers - 1 WHERE id = \(id) AND EXISTS (SELECT 1 FROM unfollowed)
                    """)
            }
            return try await Self.requireListView(id, viewer: user, now: t, privacy: privacy, tx)
        }
    }

    public func setListsFollow(of owner: UserID, user: UserID, following: Bool, rules: ListRules) async throws {
        let t = self.now().timeIntervalSince1970
        try await self.transaction(locking: [user]) { tx in
            guard owner != user else { throw ListError.ownList }
            // Key-shared: the owner's account is not deleted under the follow.
            guard try await tx.first("SELECT 1 FROM users WHERE id = \(owner.rawValue) FOR KEY SHARE") != nil else { throw ListError.noSuchUser }
            if following {
                // Someone blocked either way is no one to follow, as elsewhere.
                let relationship = try await Self.relationship(user, owner, tx)
                if relationship == .blocking || relationship == .blockedBy { throw ListError.noSuchUser }
                let (already, follows) = try await tx.one("""
                    SELECT EXISTS (SELECT 1 FROM list_owner_follows WHERE owner_id = \(owner.rawValue) AND user_id = \(user.rawValue)),
                           (SELECT count(*) FROM list_owner_follows WHERE user_id = \(user.rawValue))
                    """).decode((Bool, Int).self)
                guard !already else { return }
                guard follows < rules.maximumFollows else { throw ListError.tooManyFollows(limit: rules.maximumFollows) }
                try await tx.run("INSERT INTO list_owner_follows (owner_id, user_id, at) VALUES (\(owner.rawValue), \(user.rawValue), \(t))")
            } else {
                try await tx.run("DELETE FROM list_owner_follows WHERE owner_id = \(owner.rawValue) AND user_id = \(user.rawValue)")
            }
        }
    }

    public func copyList(_ id: Int64, user: UserID, rules: ListRules, privacy: LocationPrivacy) async throws -> RideListView {
        let t = self.now().timeIntervalSince1970
        return try await self.transaction(locking: [user]) { tx in
            guard let head = try await Self.listHead(id, caller: user, lock: true, tx), head.readable else { throw ListError.noSuchList }
            let lists = try await tx.one("SELECT count(*) FROM lists WHERE owner_id = \(user.rawValue)").decode(Int.self)
            guard lists < rules.maximumLists else { throw ListError.tooManyLists(limit: rules.maximumLists) }
            // The items in order, each with the copier's own newest evidence for it.
            let items = try await tx.rows("""
                SELECT i.kind, i.target_id, i.note,
                       CASE i.kind
                           WHEN 'ride' THEN (SELECT max(g.ridden_at) FROM catalog_rides r JOIN ride_logs g ON g.ride_id = r.ride_id
                                             WHERE r.id = i.target_id AND g.user_id = \(user.rawValue))
                           ELSE (SELECT max(v.entered_at) FROM visits v WHERE v.user_id = \(user.rawValue) AND v.park_id = i.target_id)
                       END
                FROM list_items i WHERE i.list_id = \(id) ORDER BY i.position
                """).map { try $0.decode((String, String, String?, Double?).self) }
            let checks = items.map { item in
                item.3.map { ListCheck(at: Date(timeIntervalSince1970: $0), source: item.0 == "ride" ? .rideLog : .visit) }
            }
            let copy = try await tx.one("""
                INSERT INTO lists (owner_id, title, description, visibility, copied_from, created_at, updated_at)
                SELECT \(user.rawValue), title, description, 'private', id, \(t), \(t) FROM lists WHERE id = \(id)
                RETURNING id
                """).decode(Int64.self)
            if !items.isEmpty {
                try await tx.run("""
                    INSERT INTO list_items (list_id, owner_id, kind, target_id, note, position, added_at, checked_at, checked_by, shown_at)
                    SELECT \(copy), \(user.rawValue), c.kind, c.target_id, c.note, c.n - 1, \(t), c.checked_at, c.checked_by, c.shown_at
                    FROM unnest(\(items.map(\.0))::text[], \(items.map(\.1))::text[], \(NullableArray(items.map(\.2)))::text[],
                                \(NullableArray(items.map(\.3)))::float8[], \(NullableArray(checks.map { $0?.source.rawValue }))::text[],
                                \(NullableArray(checks.map { $0.map { ListRules.shownAt($0, privacy: privacy).timeIntervalSince1970 } }))::float8[])
                         WITH ORDINALITY AS c(kind, target_id, note, checked_at, checked_by, shown_at, n)
                    ORDER BY c.n
                    """)
            }
            return try await Self.requireListView(copy, viewer: user, now: t, privacy: privacy, tx)
        }
    }

    public func listChanges(for follower: UserID, privacy: LocationPrivacy, limit: Int, before: Int64?) async throws -> [ListChange] {
        let now = self.now()
        let (t, settled) = (now.timeIntervalSince1970, privacy.placesShownBefore(now).timeIntervalSince1970)
        return try await self.single { tx in
            try await tx.rows("""
                SELECT \(unescaped: Self.changeColumns)
                FROM list_changes c JOIN lists l ON l.id = c.list_id JOIN users u ON u.id = l.owner_id, (SELECT \(follower.rawValue)::bigint AS id) v,
                     (SELECT \(t)::float8 AS now, \(settled)::float8 AS settled) k
                WHERE (c.list_id IN (SELECT list_id FROM list_follows WHERE user_id = v.id)
                       OR c.owner_id IN (SELECT owner_id FROM list_owner_follows WHERE user_id = v.id))
                    AND \(unescaped: Self.shownToOthers("c", at: "at", source: "source")) AND c.id < \(before ?? Int64.max) AND \(unescaped: Self.readable("l", viewer: "v.id"))
                ORDER BY c.id DESC LIMIT \(max(0, limit))
                """).map { try Self.change($0) }
        }
    }

    public func deliverListChanges(now: Date, privacy: LocationPrivacy, limit: Int) async throws -> [ListChangeDelivery] {
        let (t, settled) = (now.timeIntervalSince1970, privacy.placesShownBefore(now).timeIntervalSince1970)
        return try await self.transaction { tx in
            // Skipping rows another node is delivering: each change goes out once.
            try await tx.rows("""
                WITH due AS (
                    SELECT c.id FROM list_changes c, (SELECT \(t)::float8 AS now, \(settled)::float8 AS settled) k
                    WHERE NOT c.delivered AND \(unescaped: Self.shownToOthers("c", at: "at", source: "source"))
                    ORDER BY c.shown_at, c.id LIMIT \(max(0, limit))
                    FOR UPDATE OF c SKIP LOCKED
                ), c AS (
                    UPDATE list_changes d SET delivered = true FROM due WHERE d.id = due.id RETURNING d.*
                )
                SELECT \(unescaped: Self.changeColumns),
                       ARRAY(SELECT fo.user_id FROM (SELECT user_id FROM list_follows WHERE list_id = l.id
                                                     UNION SELECT user_id FROM list_owner_follows WHERE owner_id = l.owner_id) fo
                             WHERE fo.user_id <> l.owner_id AND \(unescaped: Self.readable("l", viewer: "fo.user_id")) ORDER BY fo.user_id)
                FROM c JOIN lists l ON l.id = c.list_id JOIN users u ON u.id = l.owner_id
                ORDER BY c.shown_at, c.id
                """).map { row in
                let followers = try row.makeRandomAccess()[Self.changeColumnCount].decode([Int64].self)
                return ListChangeDelivery(change: try Self.change(row), followers: followers.map { UserID($0) })
            }
        }
    }
}

// MARK: - Checking off by evidence: the ride-log and visit hooks

extension PostgresStore {
    /// Checks off, in the transaction that logged the ride, every open item of the rider's lists
    /// that holds its catalogue entry (not unchecked by hand), and records a change for each: one
    /// statement, prepared once per connection, that probes `list_items_open` and writes nothing
    /// when no list holds the ride. Others see the check from ``ListRules/shownAt(_:privacy:)``
    /// under the default ``LocationPrivacy``, as on SQLite: the writes that call this are not
    /// handed the service's policy.
    /// - Parameter at: the log's time as its row holds it (seconds since 1970).
    static func checkListItems(user: UserID, ride: RideID, at: Double, _ tx: PostgresTransaction) async throws {
        let check = ListCheck(at: Date(timeIntervalSince1970: at), source: .rideLog)
        try await tx.prepared(CheckListItems(kind: .ride, user: user, target: ride.rawValue, at: at,
                                             shownAt: ListRules.shownAt(check, privacy: LocationPrivacy()).timeIntervalSince1970))
    }

    /// Checks off the items of the rider's lists that hold the park of a visit just opened, as
    /// ``checkListItems(user:ride:at:_:)`` does for a ride.
    /// - Parameter at: when the visit began (seconds since 1970).
    static func checkListItems(user: UserID, park: ParkID, at: Double, _ tx: PostgresTransaction) async throws {
        let check = ListCheck(at: Date(timeIntervalSince1970: at), source: .visit)
        try await tx.prepared(CheckListItems(kind: .park, user: user, target: park.rawValue, at: at,
                                             shownAt: ListRules.shownAt(check, privacy: LocationPrivacy()).timeIntervalSince1970))
    }
}

/// The hooks' statement: the rider's open items of a catalogue ride (through the fenced ride's
/// entry) or of a park, checked, and an `item-checked` change for each.
private struct CheckListItems: PostgresPreparedStatement {
    enum Kind { case ride, park }

    static let name = "coasterlife_check_list_items"
    static let sql = """
        WITH checked AS (
            UPDATE list_items i SET checked_at = $4, checked_by = $5, shown_at = $6
            WHERE i.owner_id = $1 AND i.kind = $2 AND i.checked_at IS NULL AND NOT i.unchecked_by_hand
                AND i.target_id = CASE WHEN $2 = 'ride' THEN (SELECT id FROM catalog_rides WHERE ride_id = $3) ELSE $3 END
            RETURNING i.id, i.list_id, i.target_id
        )
        INSERT INTO list_changes (list_id, owner_id, kind, item_id, target_kind, target_id, item_name, source, at, shown_at)
        SELECT c.list_id, $1, 'item-checked', c.id, $2, c.target_id,
               coalesce((SELECT name FROM catalog_rides WHERE id = c.target_id AND $2 = 'ride'),
                        (SELECT name FROM catalog_parks WHERE id = c.target_id AND $2 = 'park'), c.target_id),
               $5, $4, $6
        FROM checked c ORDER BY c.list_id, c.id
        """
    typealias Row = Void

    var kind: Kind
    var user: UserID
    /// The fenced ride's id, or the park's.
    var target: String
    var at: Double
    var shownAt: Double

    func makeBindings() throws -> PostgresBindings {
        var b = PostgresBindings()
        b.append(self.user.rawValue)
        b.append(self.kind == .ride ? "ride" : "park")
        b.append(self.target)
        b.append(self.at)
        b.append(self.kind == .ride ? ListCheckSource.rideLog.rawValue : ListCheckSource.visit.rawValue)
        b.append(self.shownAt)
        return b
    }

    func decodeRow(_ row: PostgresRow) throws {}
}

extension PostgresTransaction {
    /// Runs a prepared statement (parsed and planned once per connection), its rows dropped.
    fileprivate func prepared<Statement: PostgresPreparedStatement>(_ statement: Statement) async throws {
        for try await _ in try await self.connection.execute(statement, logger: self.logger) {}
    }
}

// MARK: - Reading lists

/// A list's owner and visibility, and whether one caller may read it.
private struct ListHead: Sendable {
    var owner: Int64
    var visibility: ListVisibility
    var items: Int
    var readable: Bool
}

/// A shared list and its items, as one Sendable value out of a read.
private struct SharedList: Sendable {
    var list: RideListView
    var items: [ListItemView]
}

extension PostgresStore {
    /// Whether the user whose id is the SQL expression `viewer` may read the list `list` (an
    /// alias): its owner always; anyone else never when either blocks the other; otherwise a
    /// `public` list everyone, a `friends` list the owner's accepted friends, and nobody else
    /// (a `link` list is read by its token).
    static func readable(_ list: String, viewer: String) -> String {
        """
        (\(list).owner_id = \(viewer) OR (
            NOT EXISTS (SELECT 1 FROM blocks rb WHERE rb.blocker = \(list).owner_id AND rb.blocked = \(viewer))
            AND NOT EXISTS (SELECT 1 FROM blocks rb WHERE rb.blocker = \(viewer) AND rb.blocked = \(list).owner_id)
            AND (\(list).visibility = 'public'
                 OR (\(list).visibility = 'friends' AND EXISTS (
                        SELECT 1 FROM friendships rf WHERE rf.status = 'accepted'
                            AND ((rf.requester = \(list).owner_id AND rf.addressee = \(viewer))
                                 OR (rf.requester = \(viewer) AND rf.addressee = \(list).owner_id)))))))
        """
    }

    /// The list as `caller` stands to it, or `nil` if there is none; `lock` holds its row against
    /// deletion until the transaction ends.
    private static func listHead(_ id: Int64, caller: UserID, lock: Bool = false, _ tx: PostgresTransaction) async throws -> ListHead? {
        guard let row = try await tx.first("""
            SELECT l.owner_id, l.visibility, l.items, \(unescaped: Self.readable("l", viewer: "v.id"))
            FROM lists l, (SELECT \(caller.rawValue)::bigint AS id) v WHERE l.id = \(id) \(unescaped: lock ? "FOR KEY SHARE OF l" : "")
            """) else { return nil }
        let (owner, visibility, items, readable) = try row.decode((Int64, String, Int, Bool).self)
        return ListHead(owner: owner, visibility: ListVisibility(rawValue: visibility) ?? .private, items: items, readable: readable)
    }

    /// The list, for an operation of its owner's: ``ListError/noSuchList`` when the caller may not
    /// read it, ``ListError/notOwner`` when they may but it is not theirs.
    private static func ownedList(_ id: Int64, owner: UserID, _ tx: PostgresTransaction) async throws -> ListHead {
        guard let head = try await Self.listHead(id, caller: owner, tx), head.readable else { throw ListError.noSuchList }
        guard head.owner == owner.rawValue else { throw ListError.notOwner }
        return head
    }

    /// Whether others may see the check or change `row` (an alias of `list_items` or
    /// `list_changes`; `at` and `source` its columns of the check's time and source) at the time
    /// `k.now`: from its `shown_at` (``ListRules/shownAt(_:privacy:)``), and a check by a visit
    /// only once the visit's last evidence is older than the time-to-live (`k.settled`,
    /// ``LocationPrivacy/placesShownBefore(_:)``), as a post's "I was there": a visit's start says
    /// where its rider may still be. The one rule of every read and delivery of others' checks;
    /// the statement supplies `k` (``moment(_:privacy:)``), and the visit is one probe of
    /// `visits_by_user` (its rider and start).
    static func shownToOthers(_ row: String, at: String, source: String) -> String {
        """
        (\(row).shown_at <= k.now AND (\(row).\(source) IS DISTINCT FROM 'visit' OR NOT EXISTS (
            SELECT 1 FROM visits sv WHERE sv.user_id = \(row).owner_id AND sv.entered_at = \(row).\(at) AND sv.park_id = \(row).target_id
            AND coalesce(sv.left_at, sv.last_evidence_at) > k.settled)))
        """
    }

    /// The `now` and `settled` of ``shownToOthers(_:at:source:)`` at `now` (seconds since 1970).
    static func moment(_ now: Double, privacy: LocationPrivacy) -> (now: Double, settled: Double) {
        (now, privacy.placesShownBefore(Date(timeIntervalSince1970: now)).timeIntervalSince1970)
    }

    /// The views of the lists among `ids`, in that order, as `viewer` sees them (`nil`: someone
    /// holding the share link), each with whether the viewer may read it. One statement.
    private static func listViews(_ ids: [Int64], viewer: UserID?, now: Double, privacy: LocationPrivacy,
                                  _ tx: PostgresTransaction) async throws -> [(view: RideListView, readable: Bool)] {
        guard !ids.isEmpty else { return [] }
        let k = Self.moment(now, privacy: privacy)
        var found: [Int64: (view: RideListView, readable: Bool)] = [:]
        // No user has id 0: a link holder owns, likes and follows nothing.
        for row in try await tx.rows("""
            SELECT l.id, u.id, u.username, u.display_name, l.title, l.description, l.visibility, l.cover_photo_id,
                   CASE WHEN l.owner_id = v.id THEN l.share_token END, l.items,
                   (SELECT count(*) FROM list_items i
                    WHERE i.list_id = l.id AND i.checked_at IS NOT NULL
                        AND (l.owner_id = v.id OR \(unescaped: Self.shownToOthers("i", at: "checked_at", source: "checked_by")))),
                   l.likes, l.followers,
                   EXISTS (SELECT 1 FROM list_likes k WHERE k.list_id = l.id AND k.user_id = v.id),
                   EXISTS (SELECT 1 FROM list_follows f WHERE f.list_id = l.id AND f.user_id = v.id),
                   l.copied_from, l.created_at, l.updated_at, \(unescaped: Self.readable("l", viewer: "v.id"))
            FROM lists l JOIN users u ON u.id = l.owner_id, (SELECT \(viewer?.rawValue ?? 0)::bigint AS id) v,
                 (SELECT \(k.now)::float8 AS now, \(k.settled)::float8 AS settled) k
            WHERE l.id = ANY(\(ids)::bigint[])
            """) {
            let (id, owner, username, displayName, title, description, visibility, cover, token, items, checked, likes, followers, liked,
                 following, copiedFrom, createdAt, updatedAt, readable) =
                try row.decode((Int64, Int64, String, String, String, String, String, Int64?, String?, Int, Int, Int, Int, Bool, Bool, Int64?,
                                Double, Double, Bool).self)
            let view = RideListView(
                id: id, owner: UserSummary(id: UserID(owner), username: username, displayName: displayName), title: title,
                description: description, visibility: ListVisibility(rawValue: visibility) ?? .private, cover: cover, shareToken: token,
                items: items, checked: checked, likes: likes, followers: followers, liked: liked, following: following, copiedFrom: copiedFrom,
                createdAt: Date(timeIntervalSince1970: createdAt), updatedAt: Date(timeIntervalSince1970: updatedAt))
            found[id] = (view, readable)
        }
        return ids.compactMap { found[$0] }
    }

    private static func requireListView(_ id: Int64, viewer: UserID, now: Double, privacy: LocationPrivacy,
                                        _ tx: PostgresTransaction) async throws -> RideListView {
        guard let view = try await Self.listViews([id], viewer: viewer, now: now, privacy: privacy, tx).first?.view else { throw ListError.noSuchList }
        return view
    }

    /// The columns ``item(_:owner:)`` reads: the item's with whether others see its check, its
    /// catalogue ride's with the ride's park (``catalogRideColumns``, `r` and `p`), and its
    /// catalogue park's (`q`).
    private static let itemColumns = """
        i.id, i.kind, i.target_id, i.note, i.position, i.added_at, i.checked_at, i.checked_by, \
        \(PostgresStore.shownToOthers("i", at: "checked_at", source: "checked_by")), \(PostgresStore.catalogRideColumns), \
        q.id, q.name, q.fenced
        """

    private static let itemJoins = """
        FROM list_items i
        LEFT JOIN catalog_rides r ON i.kind = 'ride' AND r.id = i.target_id
        LEFT JOIN catalog_parks p ON p.id = r.park_id
        LEFT JOIN catalog_parks q ON i.kind = 'park' AND q.id = i.target_id
        """

    /// A page of a list's items in `sort` order, each in one row with what it holds; checks the
    /// owner sees all of, others those shown by `now` (``shownToOthers(_:at:source:)``).
    private static func itemViews(list: Int64, owner: Bool, now: Double, privacy: LocationPrivacy, sort: ListSort, limit: Int, offset: Int,
                                  _ tx: PostgresTransaction) async throws -> [ListItemView] {
        let k = Self.moment(now, privacy: privacy)
        // The orders of ``Lists/sorted(_:by:)``, ties by place in the owner's order.
        let order = switch sort {
        case .custom: "i.position"
        case .added: "i.added_at DESC, i.id DESC"
        case .name: "coalesce(r.name_key, q.name_key, i.target_id), i.position"
        case .park: "coalesce(p.name_key, q.name_key, ''), i.position"
        case .height: "r.height_m DESC NULLS LAST, i.position"
        case .speed: "r.speed_kmh DESC NULLS LAST, i.position"
        }
        return try await tx.rows("""
            SELECT \(unescaped: Self.itemColumns) \(unescaped: Self.itemJoins) CROSS JOIN (SELECT \(k.now)::float8 AS now, \(k.settled)::float8 AS settled) k
            WHERE i.list_id = \(list) ORDER BY \(unescaped: order) LIMIT \(limit == Int.max ? nil : limit) OFFSET \(offset)
            """).map { try Self.item($0, owner: owner) }
    }

    /// One item as its owner sees it.
    private static func requireItemView(_ id: Int64, list: Int64, now: Double, privacy: LocationPrivacy,
                                        _ tx: PostgresTransaction) async throws -> ListItemView {
        let k = Self.moment(now, privacy: privacy)
        guard let row = try await tx.first("""
            SELECT \(unescaped: Self.itemColumns) \(unescaped: Self.itemJoins) CROSS JOIN (SELECT \(k.now)::float8 AS now, \(k.settled)::float8 AS settled) k
            WHERE i.id = \(id) AND i.list_id = \(list)
            """) else { throw ListError.noSuchItem }
        return try Self.item(row, owner: true)
    }

    private static func item(_ row: PostgresRow, owner: Bool) throws -> ListItemView {
        let columns = row.makeRandomAccess()
        var c = ColumnReader(columns)
        let id: Int64 = try c.next()
        let kind: String = try c.next()
        let target: String = try c.next()
        let note: String? = try c.next()
        let position: Int = try c.next()
        let addedAt: Double = try c.next()
        let checkedAt: Double? = try c.next()
        let checkedBy: String? = try c.next()
        let shown: Bool? = try c.next()
        let ride = try Self.catalogRide(columns, from: 9)
        var q = ColumnReader(columns, at: 9 + Self.catalogRideColumnCount)
        let park: CatalogPark? = if let parkID = try q.next(String?.self) {
            CatalogPark(id: ParkID(rawValue: parkID), name: try q.next(), fenced: try q.next())
        } else {
            nil
        }
        var check: ListCheck?
        if let checkedAt, owner || shown == true {
            check = ListCheck(at: Date(timeIntervalSince1970: checkedAt), source: checkedBy.flatMap(ListCheckSource.init(rawValue:)) ?? .hand)
        }
        return ListItemView(id: id, target: kind == "park" ? .park(ParkID(rawValue: target)) : .ride(RideID(rawValue: target)), ride: ride,
                            park: park, note: note, position: position, addedAt: Date(timeIntervalSince1970: addedAt), check: check)
    }

    /// The columns ``change(_:)`` reads, of `list_changes c`, its list `l` and the owner `u`.
    private static let changeColumns = """
        c.id, c.kind, c.list_id, l.title, u.id, u.username, u.display_name, c.item_id, c.target_kind, c.target_id, c.item_name, c.source, c.at
        """

    private static let changeColumnCount = 13

    private static func change(_ row: PostgresRow) throws -> ListChange {
        var c = ColumnReader(row.makeRandomAccess())
        let id: Int64 = try c.next()
        let kind = ListChange.Kind(rawValue: try c.next()) ?? .itemAdded
        let list: Int64 = try c.next()
        let title: String = try c.next()
        let owner = UserSummary(id: UserID(try c.next(Int64.self)), username: try c.next(), displayName: try c.next())
        let item: Int64 = try c.next()
        let targetKind: String = try c.next()
        let targetID: String = try c.next()
        let name: String = try c.next()
        let source = try c.next(String?.self).flatMap(ListCheckSource.init(rawValue:))
        let at: Double = try c.next()
        return ListChange(id: id, kind: kind, list: list, listTitle: title, owner: owner, item: item,
                          target: targetKind == "park" ? .park(ParkID(rawValue: targetID)) : .ride(RideID(rawValue: targetID)),
                          itemName: name, source: source, at: Date(timeIntervalSince1970: at))
    }
}
