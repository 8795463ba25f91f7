import CoasterCore
import Foundation
import GRDB

/// Evidence the geofences validated, which checks the rider's list items that hold what it proves.
enum ListEvidence {
    /// A ride log of a fenced ride, at the time it was logged.
    case rideLog(RideID, at: Date)
    /// A visit to a park, at the time it began.
    case visit(ParkID, at: Date)
}

extension SpatiaLiteStore: ListStore {
    public func createList(_ draft: ListDraft, owner: UserID, rules: ListRules, privacy: LocationPrivacy) async throws -> RideListView {
        let now = self.now()
        return try await self.pool.write { db in
            guard try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM users WHERE id = ?)"), arguments: [owner.rawValue]) == true
            else { throw ListError.noSuchUser }
            try Self.checkListLimit(owner, rules: rules, db)
            if let cover = draft.cover { try Self.checkCover(cover, owner: owner, db) }
            let t = now.timeIntervalSince1970
            try db.execute(sql: """
                INSERT INTO lists (owner_id, title, description, visibility, share_token, cover_photo_id, created_at, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [owner.rawValue, draft.title, draft.description, draft.visibility.rawValue,
                                 draft.visibility == .link ? ListRules.newShareToken() : nil, draft.cover, t, t])
            return try Self.requireListView(db.lastInsertedRowID, viewer: owner, now: now, privacy: privacy, db)
        }
    }

    public func list(_ id: Int64, viewer: UserID, privacy: LocationPrivacy) async throws -> RideListView? {
        let now = self.now()
        return try await self.pool.read { db in try Self.listView(id, viewer: viewer, now: now, privacy: privacy, db) }
    }

    public func sharedList(token: String, sort: ListSort, privacy: LocationPrivacy) async throws -> (list: RideListView, items: [ListItemView])? {
        let now = self.now()
        return try await self.pool.read { db in
            // Read as nobody: the token grants what anyone else sees of the list.
            guard let list = try Self.listViews(where: "l.share_token = :token AND l.visibility = 'link'", ["token": token], viewer: Self.nobody,
                                                now: now, privacy: privacy, db).first
            else { return nil }
            let items = try Self.itemViews(where: "i.list_id = :list", order: Self.itemOrder(sort),
                                           ["list": list.id, "limit": ListRules().maximumItems, "offset": 0], owner: false, now: now, privacy: privacy, db)
            return (list, items)
        }
    }

    public func lists(of owner: UserID, viewer: UserID, privacy: LocationPrivacy, limit: Int, before: Int64?) async throws -> [RideListView] {
        let now = self.now()
        return try await self.pool.read { db in
            try Self.listViews(where: "l.owner_id = :owner AND l.id < :before AND \(Self.readable())", order: "ORDER BY l.id DESC LIMIT :limit",
                               ["owner": owner.rawValue, "before": before ?? Int64.max, "limit": max(0, limit)], viewer: viewer, now: now,
                               privacy: privacy, db)
        }
    }

    public func items(of list: Int64, viewer: UserID, sort: ListSort, privacy: LocationPrivacy, limit: Int, offset: Int) async throws -> [ListItemView]? {
        let now = self.now()
        return try await self.pool.read { db in
            guard let owner = try Self.readableOwner(list, viewer: viewer, db) else { return nil }
            return try Self.itemViews(where: "i.list_id = :list", order: Self.itemOrder(sort),
                                      ["list": list, "limit": max(0, limit), "offset": max(0, offset)], owner: owner == viewer, now: now,
                                      privacy: privacy, db)
        }
    }

    public func editList(_ id: Int64, owner: UserID, edit: ListEdit, privacy: LocationPrivacy) async throws -> RideListView {
        let now = self.now()
        return try await self.pool.write { db in
            let row = try Self.ownedList(id, owner, db)
            if let cover = edit.cover, let photo = cover { try Self.checkCover(photo, owner: owner, db) }
            let before = ListVisibility(rawValue: row["visibility"]) ?? .private
            let visibility = edit.visibility ?? before
            var token: String? = row["share_token"]
            if visibility != .link {
                token = nil
            } else if before != .link || edit.newLink || token == nil {
                token = ListRules.newShareToken()
            }
            try db.execute(sql: """
                UPDATE lists SET title = coalesce(:title, title), description = coalesce(:description, description), visibility = :visibility,
                    share_token = :token, cover_photo_id = CASE WHEN :setCover THEN :cover ELSE cover_photo_id END, updated_at = :now
                WHERE id = :id
                """, arguments: ["title": edit.title, "description": edit.description, "visibility": visibility.rawValue, "token": token,
                                 "setCover": edit.cover != nil, "cover": edit.cover ?? nil, "now": now.timeIntervalSince1970, "id": id])
            return try Self.requireListView(id, viewer: owner, now: now, privacy: privacy, db)
        }
    }

    public func deleteList(_ id: Int64, owner: UserID) async throws {
        try await self.pool.write { db in
            _ = try Self.ownedList(id, owner, db)
            // Items, likes, follows and changes go by their foreign keys; the rides' counts by trigger.
            try db.execute(sql: "DELETE FROM lists WHERE id = ?", arguments: [id])
        }
    }

    public func addItem(to list: Int64, owner: UserID, target: ListItemTarget, note: String?, position: Int?, rules: ListRules,
                        privacy: LocationPrivacy) async throws -> ListItemView {
        let now = self.now()
        return try await self.pool.write { db in
            let row = try Self.ownedList(list, owner, db)
            let targetID: String, name: String
            var evidence: ListCheck?
            switch target {
            case .ride(let id):
                guard let entry = try Row.fetchOne(db.cachedStatement(sql: "SELECT id, name, ride_id FROM catalog_rides WHERE id = ?"), arguments: [id.rawValue])
                    ?? Row.fetchOne(db.cachedStatement(sql: "SELECT id, name, ride_id FROM catalog_rides WHERE ride_id = ?"), arguments: [id.rawValue])
                else { throw ListError.unknownTarget(pointer: "/ride") }
                targetID = entry["id"]
                name = entry["name"]
                if let ride = entry["ride_id"] as String?, let at = try Double.fetchOne(db.cachedStatement(sql: Self.newestRideLog),
                                                                                       arguments: [owner.rawValue, ride]) {
                    evidence = ListCheck(at: Date(timeIntervalSince1970: at), source: .rideLog)
                }
            case .park(let id):
                guard let park = try Row.fetchOne(db.cachedStatement(sql: "SELECT id, name FROM catalog_parks WHERE id = ?"), arguments: [id.rawValue])
                else { throw ListError.unknownTarget(pointer: "/park") }
                targetID = park["id"]
                name = park["name"]
                if let at = try Double.fetchOne(db.cachedStatement(sql: Self.newestVisit), arguments: [owner.rawValue, id.rawValue]) {
                    evidence = ListCheck(at: Date(timeIntervalSince1970: at), source: .visit)
                }
            }
            if let existing = try Int64.fetchOne(db.cachedStatement(sql: "SELECT id FROM list_items WHERE list_id = ? AND kind = ? AND target_id = ?"),
                                                 arguments: [list, target.kind, targetID]) {
                throw ListError.duplicateItem(existing: existing)
            }
            let count: Int = row["items"]
            let place = position ?? count
            guard place >= 0, place <= count else { throw ListError.positionOutOfRange(largest: count) }
            guard count < rules.maximumItems else { throw ListError.tooManyItems(limit: rules.maximumItems) }
            let t = now.timeIntervalSince1970
            try db.cachedStatement(sql: "UPDATE list_items SET position = position + 1 WHERE list_id = ? AND position >= ?").execute(arguments: [list, place])
            try db.cachedStatement(sql: """
                INSERT INTO list_items (list_id, owner_id, kind, target_id, note, position, added_at, checked_at, checked_by, shown_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """).execute(arguments: [list, owner.rawValue, target.kind, targetID, note, place, t, evidence?.at.timeIntervalSince1970,
                                         evidence?.source.rawValue, evidence.map { ListRules.shownAt($0, privacy: privacy).timeIntervalSince1970 }])
            let item = db.lastInsertedRowID
            try Self.recordChange(list: list, owner: owner, kind: .itemAdded, item: item, kindOfTarget: target.kind, target: targetID, name: name,
                                  source: nil, at: t, shownAt: t, db)
            try Self.touch(list, now: now, db)
            return try Self.requireItemView(item, owner: true, now: now, privacy: privacy, db)
        }
    }

    public func editItem(_ item: Int64, in list: Int64, owner: UserID, edit: ListItemEdit, privacy: LocationPrivacy) async throws -> ListItemView {
        let now = self.now()
        let t = now.timeIntervalSince1970
        return try await self.pool.write { db in
            let listRow = try Self.ownedList(list, owner, db)
            guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT position, checked_at FROM list_items WHERE id = ? AND list_id = ?"),
                                             arguments: [item, list])
            else { throw ListError.noSuchItem }
            if let to = edit.position {
                let count: Int = listRow["items"], from: Int = row["position"]
                guard to >= 0, to < count else { throw ListError.positionOutOfRange(largest: count - 1) }
                if to != from {
                    // The item takes its place; those between move by one towards where it was.
                    try db.cachedStatement(sql: """
                        UPDATE list_items SET position = CASE WHEN id = :item THEN :to WHEN :to > :from THEN position - 1 ELSE position + 1 END
                        WHERE list_id = :list AND position BETWEEN min(:from, :to) AND max(:from, :to)
                        """).execute(arguments: ["item": item, "to": to, "from": from, "list": list])
                }
            }
            if let note = edit.note {
                try db.cachedStatement(sql: "UPDATE list_items SET note = ? WHERE id = ?").execute(arguments: [note, item])
            }
            var checkedByHand = false
            switch edit.checked {
            case .some(true) where (row["checked_at"] as Double?) == nil:
                let shown = ListRules.shownAt(ListCheck(at: now, source: .hand), privacy: privacy).timeIntervalSince1970
                try db.cachedStatement(sql: """
                    UPDATE list_items SET checked_at = ?, checked_by = 'by hand', shown_at = ?, unchecked_by_hand = 0 WHERE id = ?
                    """).execute(arguments: [t, shown, item])
                checkedByHand = true
            case .some(false):
                try db.cachedStatement(sql: """
                    UPDATE list_items SET checked_at = NULL, checked_by = NULL, shown_at = NULL, unchecked_by_hand = 1 WHERE id = ?
                    """).execute(arguments: [item])
                // A check no one has been shown yet is taken back with it: it would say where the owner was.
                try db.cachedStatement(sql: """
                    DELETE FROM list_changes WHERE list_id = :list AND item_id = :item AND kind = 'item-checked'
                        AND NOT \(Self.shownToOthers("list_changes", at: "at", source: "source"))
                    """).execute(arguments: StatementArguments(Self.shownArguments(now: now, privacy: privacy)) + ["list": list, "item": item])
            default:
                break
            }
            try Self.touch(list, now: now, db)
            let view = try Self.requireItemView(item, owner: true, now: now, privacy: privacy, db)
            if checkedByHand, let check = view.check {
                try Self.recordChange(list: list, owner: owner, kind: .itemChecked, item: item, kindOfTarget: view.target.kind, target: view.target.id,
                                      name: view.name, source: .hand, at: t,
                                      shownAt: ListRules.shownAt(check, privacy: privacy).timeIntervalSince1970, db)
            }
            return view
        }
    }

    public func removeItem(_ item: Int64, from list: Int64, owner: UserID) async throws {
        let now = self.now()
        try await self.pool.write { db in
            _ = try Self.ownedList(list, owner, db)
            guard let position = try Int.fetchOne(db.cachedStatement(sql: "SELECT position FROM list_items WHERE id = ? AND list_id = ?"),
                                                  arguments: [item, list])
            else { throw ListError.noSuchItem }
            try Self.deleteItem(item, list: list, position: position, db)
            try Self.touch(list, now: now, db)
        }
    }

    public func setListLike(_ id: Int64, user: UserID, liked: Bool, privacy: LocationPrivacy) async throws -> RideListView {
        let now = self.now()
        return try await self.pool.write { db in
            guard try Self.readableOwner(id, viewer: user, db) != nil else { throw ListError.noSuchList }
            if liked {
                try db.execute(sql: "INSERT INTO list_likes (list_id, user_id, at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                               arguments: [id, user.rawValue, now.timeIntervalSince1970])
                if db.changesCount == 1 { try db.execute(sql: "UPDATE lists SET likes = likes + 1 WHERE id = ?", arguments: [id]) }
            } else {
                try db.execute(sql: "DELETE FROM list_likes WHERE list_id = ? AND user_id = ?", arguments: [id, user.rawValue])
                if db.changesCount == 1 { try db.execute(sql: "UPDATE lists SET likes = likes - 1 WHERE id = ?", arguments: [id]) }
            }
            return try Self.requireListView(id, viewer: user, now: now, privacy: privacy, db)
        }
    }

    public func setListFollow(_ id: Int64, user: UserID, following: Bool, rules: ListRules, privacy: LocationPrivacy) async throws -> RideListView {
        let now = self.now()
        return try await self.pool.write { db in
            guard let owner = try Self.readableOwner(id, viewer: user, db) else { throw ListError.noSuchList }
            guard owner != user else { throw ListError.ownList }
            if following {
                let follows = try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM list_follows WHERE user_id = ?"), arguments: [user.rawValue]) ?? 0
                try db.execute(sql: "INSERT INTO list_follows (list_id, user_id, at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                               arguments: [id, user.rawValue, now.timeIntervalSince1970])
                if db.changesCount == 1 {
                    guard follows < rules.maximumFollows else { throw ListError.tooManyFollows(limit: rules.maximumFollows) }
                    try db.execute(sql: "UPDATE lists SET followers = followers + 1 WHERE id = ?", arguments: [id])
                }
            } else {
                try db.execute(sql: "DELETE FROM list_follows WHERE list_id = ? AND user_id = ?", arguments: [id, user.rawValue])
                if db.changesCount == 1 { try db.execute(sql: "UPDATE lists SET followers = followers - 1 WHERE id = ?", arguments: [id]) }
            }
            return try Self.requireListView(id, viewer: user, now: now, privacy: privacy, db)
        }
    }

    public func setListsFollow(of owner: UserID, user: UserID, following: Bool, rules: ListRules) async throws {
        let now = self.now()
        try await self.pool.write { db in
            guard owner != user else { throw ListError.ownList }
            // Someone blocked either way is no one to follow, as elsewhere.
            guard try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM users WHERE id = ?)"), arguments: [owner.rawValue]) == true
            else { throw ListError.noSuchUser }
            if following {
                let relationship = try Self.relationship(user, owner, db)
                if relationship == .blocking || relationship == .blockedBy { throw ListError.noSuchUser }
            }
            if following {
                let follows = try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM list_owner_follows WHERE user_id = ?"),
                                               arguments: [user.rawValue]) ?? 0
                try db.execute(sql: "INSERT INTO list_owner_follows (owner_id, user_id, at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                               arguments: [owner.rawValue, user.rawValue, now.timeIntervalSince1970])
                if db.changesCount == 1, follows >= rules.maximumFollows { throw ListError.tooManyFollows(limit: rules.maximumFollows) }
            } else {
                try db.execute(sql: "DELETE FROM list_owner_follows WHERE owner_id = ? AND user_id = ?", arguments: [owner.rawValue, user.rawValue])
            }
        }
    }

    public func copyList(_ id: Int64, user: UserID, rules: ListRules, privacy: LocationPrivacy) async throws -> RideListView {
        let now = self.now()
        return try await self.pool.write { db in
            guard try Self.readableOwner(id, viewer: user, db) != nil,
                  let source = try Row.fetchOne(db.cachedStatement(sql: "SELECT title, description FROM lists WHERE id = ?"), arguments: [id])
            else { throw ListError.noSuchList }
            try Self.checkListLimit(user, rules: rules, db)
            let t = now.timeIntervalSince1970
            try db.execute(sql: """
                INSERT INTO lists (owner_id, title, description, visibility, copied_from, created_at, updated_at) VALUES (?, ?, ?, 'private', ?, ?, ?)
                """, arguments: [user.rawValue, source["title"] as String, source["description"] as String, id, t, t])
            let copy = db.lastInsertedRowID
            // The copier's own evidence only: their newest log of each ride, their newest visit of
            // each park, each check shown to others as ListRules.shownAt shows evidence.
            let insert = try db.cachedStatement(sql: """
                INSERT INTO list_items (list_id, owner_id, kind, target_id, note, position, added_at, checked_at, checked_by, shown_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
            for item in try Row.fetchAll(db.cachedStatement(sql: Self.copiedItems), arguments: ["user": user.rawValue, "source": id]) {
                let kind: String = item["kind"]
                let check = (item["at"] as Double?).map { ListCheck(at: Date(timeIntervalSince1970: $0), source: kind == "ride" ? .rideLog : .visit) }
                try insert.execute(arguments: [copy, user.rawValue, kind, item["target_id"] as String, item["note"] as String?, item["position"] as Int, t,
                                               check?.at.timeIntervalSince1970, check?.source.rawValue,
                                               check.map { ListRules.shownAt($0, privacy: privacy).timeIntervalSince1970 }])
            }
            return try Self.requireListView(copy, viewer: user, now: now, privacy: privacy, db)
        }
    }

    /// The items of list `:source` in order, with `:user`'s newest evidence for each (`at`).
    static let copiedItems = """
        SELECT i.kind, i.target_id, i.note, i.position,
               CASE i.kind
               WHEN 'ride' THEN (SELECT max(l.ridden_at) FROM catalog_rides r JOIN ride_logs l ON l.user_id = :user AND l.ride_id = r.ride_id
                                 WHERE r.id = i.target_id)
               ELSE (SELECT max(v.entered_at) FROM visits v WHERE v.user_id = :user AND v.park_id = i.target_id) END AS at
        FROM list_items i WHERE i.list_id = :source ORDER BY i.position
        """

    public func listChanges(for follower: UserID, privacy: LocationPrivacy, limit: Int, before: Int64?) async throws -> [ListChange] {
        let now = self.now()
        let sql = """
            WITH followed(list_id) AS (
                SELECT list_id FROM list_follows WHERE user_id = :viewer
                UNION
                SELECT l.id FROM list_owner_follows o JOIN lists l ON l.owner_id = o.owner_id WHERE o.user_id = :viewer
            )
            SELECT c.*, l.title, u.username, u.display_name
            FROM followed f JOIN list_changes c ON c.list_id = f.list_id JOIN lists l ON l.id = c.list_id JOIN users u ON u.id = c.owner_id
            WHERE c.id < :before AND \(Self.shownToOthers("c", at: "at", source: "source")) AND \(Self.readable())
            ORDER BY c.id DESC LIMIT :limit
            """
        return try await self.pool.read { db in
            try Row.fetchAll(db.cachedStatement(sql: sql), arguments: StatementArguments(Self.shownArguments(now: now, privacy: privacy)) + [
                "viewer": follower.rawValue, "before": before ?? Int64.max, "limit": max(0, limit),
            ]).map(Self.listChange)
        }
    }

    public func deliverListChanges(now: Date, privacy: LocationPrivacy, limit: Int) async throws -> [ListChangeDelivery] {
        let followers = """
            SELECT f.user_id FROM (SELECT user_id FROM list_follows WHERE list_id = :list
                                   UNION SELECT user_id FROM list_owner_follows WHERE owner_id = :owner) f
            JOIN lists l ON l.id = :list
            WHERE \(Self.readable(viewer: "f.user_id"))
            ORDER BY f.user_id
            """
        return try await self.pool.write { db in
            try Row.fetchAll(db.cachedStatement(sql: Self.dueChanges),
                             arguments: StatementArguments(Self.shownArguments(now: now, privacy: privacy)) + ["limit": max(0, limit)]).map { row in
                let change = Self.listChange(row)
                try db.cachedStatement(sql: "UPDATE list_changes SET delivered = 1 WHERE id = ?").execute(arguments: [change.id])
                let users = try Int64.fetchAll(db.cachedStatement(sql: followers), arguments: ["list": change.list, "owner": change.owner.id.rawValue])
                return ListChangeDelivery(change: change, followers: users.map { UserID($0) })
            }
        }
    }

    /// Changes shown by `:now` and not yet delivered, oldest first: a range of `list_changes_due`.
    static let dueChanges = """
        SELECT c.*, l.title, u.username, u.display_name FROM list_changes c JOIN lists l ON l.id = c.list_id JOIN users u ON u.id = c.owner_id
        WHERE c.delivered = 0 AND \(Self.shownToOthers("c", at: "at", source: "source")) ORDER BY c.shown_at, c.id LIMIT :limit
        """
}

// MARK: Checking off: the ride-log and visit hooks

extension SpatiaLiteStore {
    /// Checks every open item of the rider's lists that holds what `evidence` proves, in the
    /// transaction that wrote it, and records a change for each (ListStore). Items the owner
    /// unchecked by hand stay unchecked. When no list holds it, this is one probe of
    /// `list_items_open` that finds nothing.
    ///
    /// The check is shown to others from ``ListRules/shownAt(_:privacy:)`` with the default
    /// ``LocationPrivacy``: the writes that call this are not handed the service's policy.
    static func checkListItems(user: UserID, evidence: ListEvidence, _ db: Database) throws {
        let (changes, checks, source, at, target): (String, String, ListCheckSource, Date, String) = switch evidence {
        case .rideLog(let ride, let at): (Self.rideChanges, Self.rideChecks, .rideLog, at, ride.rawValue)
        case .visit(let park, let at): (Self.parkChanges, Self.parkChecks, .visit, at, park.rawValue)
        }
        let shown = ListRules.shownAt(ListCheck(at: at, source: source), privacy: LocationPrivacy())
        let arguments: StatementArguments = ["user": user.rawValue, "target": target, "source": source.rawValue, "at": at.timeIntervalSince1970,
                                             "shown": shown.timeIntervalSince1970]
        // The changes first, from the items still open; then the items, only if there were any.
        try db.cachedStatement(sql: changes).execute(arguments: arguments)
        guard db.changesCount > 0 else { return }
        try db.cachedStatement(sql: checks).execute(arguments: arguments)
    }

    /// An `item-checked` change for each open item of the rider's that holds the catalogue entry of a fenced ride.
    static let rideChanges = """
        INSERT INTO list_changes (list_id, owner_id, kind, item_id, target_kind, target_id, item_name, source, at, shown_at)
        SELECT i.list_id, i.owner_id, 'item-checked', i.id, i.kind, i.target_id, r.name, :source, :at, :shown
        FROM catalog_rides r JOIN list_items i ON i.owner_id = :user AND i.kind = 'ride' AND i.target_id = r.id
        WHERE r.ride_id = :target AND i.checked_at IS NULL AND i.unchecked_by_hand = 0
        """
    static let rideChecks = """
        UPDATE list_items SET checked_at = :at, checked_by = :source, shown_at = :shown
        WHERE owner_id = :user AND kind = 'ride' AND target_id IN (SELECT id FROM catalog_rides WHERE ride_id = :target)
          AND checked_at IS NULL AND unchecked_by_hand = 0
        """
    /// An `item-checked` change for each open item of the rider's that holds a park.
    static let parkChanges = """
        INSERT INTO list_changes (list_id, owner_id, kind, item_id, target_kind, target_id, item_name, source, at, shown_at)
        SELECT i.list_id, i.owner_id, 'item-checked', i.id, i.kind, i.target_id, p.name, :source, :at, :shown
        FROM list_items i JOIN catalog_parks p ON p.id = i.target_id
        WHERE i.owner_id = :user AND i.kind = 'park' AND i.target_id = :target AND i.checked_at IS NULL AND i.unchecked_by_hand = 0
        """
    static let parkChecks = """
        UPDATE list_items SET checked_at = :at, checked_by = :source, shown_at = :shown
        WHERE owner_id = :user AND kind = 'park' AND target_id = :target AND checked_at IS NULL AND unchecked_by_hand = 0
        """

    /// The newest ride log of a rider's of a ride: one step of `ride_logs_by_user`.
    static let newestRideLog = "SELECT max(ridden_at) FROM ride_logs WHERE user_id = ? AND ride_id = ?"
    /// When the rider's newest visit of a park began.
    static let newestVisit = "SELECT max(entered_at) FROM visits WHERE user_id = ? AND park_id = ?"
}

// MARK: Reading lists

extension SpatiaLiteStore {
    /// No user (ids start at 1): the viewer of a list read through its share link.
    static let nobody = UserID(0)

    /// Whether `viewer` may read the list `list` (an alias of `lists`): the owner always; anyone
    /// else never when either blocks the other; otherwise a `public` list anyone, a `friends` list
    /// the owner's accepted friends. The one rule for every read, like, follow, copy and change.
    static func readable(_ list: String = "l", viewer: String = ":viewer") -> String {
        """
        (\(list).owner_id = \(viewer) OR (\(list).visibility IN ('public', 'friends')
            AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker = \(list).owner_id AND b.blocked = \(viewer))
            AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker = \(viewer) AND b.blocked = \(list).owner_id)
            AND (\(list).visibility = 'public'
                 OR EXISTS (SELECT 1 FROM friendships f WHERE f.requester = \(list).owner_id AND f.addressee = \(viewer) AND f.status = 'accepted')
                 OR EXISTS (SELECT 1 FROM friendships f WHERE f.requester = \(viewer) AND f.addressee = \(list).owner_id AND f.status = 'accepted'))))
        """
    }

    /// The list's owner if `viewer` may read it, else `nil`.
    static func readableOwner(_ id: Int64, viewer: UserID, _ db: Database) throws -> UserID? {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT l.owner_id FROM lists l WHERE l.id = :id AND \(Self.readable())"),
                           arguments: ["id": id, "viewer": viewer.rawValue]).map { UserID($0) }
    }

    /// The list's row for a change by its owner: no such list for anyone who may not read it, not
    /// the owner for anyone else.
    static func ownedList(_ id: Int64, _ owner: UserID, _ db: Database) throws -> Row {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: """
            SELECT l.owner_id, l.visibility, l.share_token, l.items, \(Self.readable()) AS readable FROM lists l WHERE l.id = :id
            """), arguments: ["id": id, "viewer": owner.rawValue])
        else { throw ListError.noSuchList }
        guard (row["owner_id"] as Int64) == owner.rawValue else { throw (row["readable"] as Bool) ? ListError.notOwner : ListError.noSuchList }
        return row
    }

    /// Whether others may see the check or change `row` (an alias of `list_items` or
    /// `list_changes`; `at` and `source` its columns of the check's time and source) at `:now`:
    /// from its `shown_at` (``ListRules/shownAt(_:privacy:)``), and a check by a visit only once
    /// the visit's last evidence is older than the time-to-live (`:settled`,
    /// ``LocationPrivacy/placesShownBefore(_:)``), as a post's "I was there": a visit's start
    /// says where its rider may still be. The one rule of every read and delivery of others'
    /// checks; the visit is one probe of `visits_by_user` (its rider and start).
    static func shownToOthers(_ row: String, at: String, source: String) -> String {
        """
        (\(row).shown_at <= :now AND (\(row).\(source) IS NOT 'visit' OR NOT EXISTS (
            SELECT 1 FROM visits v WHERE v.user_id = \(row).owner_id AND v.entered_at = \(row).\(at) AND v.park_id = \(row).target_id
            AND coalesce(v.left_at, v.last_evidence_at) > :settled)))
        """
    }

    /// The arguments of ``shownToOthers(_:at:source:)``.
    static func shownArguments(now: Date, privacy: LocationPrivacy) -> [String: (any DatabaseValueConvertible)?] {
        ["now": now.timeIntervalSince1970, "settled": privacy.placesShownBefore(now).timeIntervalSince1970]
    }

    /// Lists as `viewer` sees them, those `condition` (over `lists l`, with `arguments`) selects.
    static func listViews(where condition: String, order: String = "", _ arguments: [String: (any DatabaseValueConvertible)?], viewer: UserID,
                          now: Date, privacy: LocationPrivacy, _ db: Database) throws -> [RideListView] {
        var arguments = arguments.merging(Self.shownArguments(now: now, privacy: privacy)) { $1 }
        arguments["viewer"] = viewer.rawValue
        return try Row.fetchAll(db.cachedStatement(sql: """
            SELECT l.*, u.username, u.display_name,
                   CASE WHEN l.owner_id = :viewer
                        THEN (SELECT count(*) FROM list_items i WHERE i.list_id = l.id AND i.checked_at IS NOT NULL)
                        ELSE (SELECT count(*) FROM list_items i
                              WHERE i.list_id = l.id AND i.checked_at IS NOT NULL AND \(Self.shownToOthers("i", at: "checked_at", source: "checked_by"))) END
                   AS checked,
                   EXISTS (SELECT 1 FROM list_likes k WHERE k.list_id = l.id AND k.user_id = :viewer) AS liked,
                   EXISTS (SELECT 1 FROM list_follows f WHERE f.list_id = l.id AND f.user_id = :viewer) AS following
            FROM lists l JOIN users u ON u.id = l.owner_id
            WHERE \(condition) \(order)
            """), arguments: StatementArguments(arguments)).map { row in
            let owner = UserID(row["owner_id"] as Int64)
            return RideListView(
                id: row["id"], owner: UserSummary(id: owner, username: row["username"], displayName: row["display_name"]), title: row["title"],
                description: row["description"], visibility: ListVisibility(rawValue: row["visibility"]) ?? .private, cover: row["cover_photo_id"],
                shareToken: owner == viewer ? row["share_token"] : nil, items: row["items"], checked: row["checked"], likes: row["likes"],
                followers: row["followers"], liked: row["liked"], following: row["following"], copiedFrom: row["copied_from"],
                createdAt: Date(timeIntervalSince1970: row["created_at"]), updatedAt: Date(timeIntervalSince1970: row["updated_at"]))
        }
    }

    static func listView(_ id: Int64, viewer: UserID, now: Date, privacy: LocationPrivacy, _ db: Database) throws -> RideListView? {
        try Self.listViews(where: "l.id = :id AND \(Self.readable())", ["id": id], viewer: viewer, now: now, privacy: privacy, db).first
    }

    static func requireListView(_ id: Int64, viewer: UserID, now: Date, privacy: LocationPrivacy, _ db: Database) throws -> RideListView {
        guard let view = try Self.listView(id, viewer: viewer, now: now, privacy: privacy, db) else { throw ListError.noSuchList }
        return view
    }

    /// The ORDER BY of a sort of items (positions break ties: they are unique in a list).
    static func itemOrder(_ sort: ListSort) -> String {
        switch sort {
        case .custom: "i.position"
        case .added: "i.added_at DESC, i.id DESC"
        case .name: "coalesce(r.name_key, p.name_key), i.position"
        case .park: "coalesce(rp.name_key, p.name_key), i.position"
        case .height: "r.height_m DESC NULLS LAST, i.position"
        case .speed: "r.speed_kmh DESC NULLS LAST, i.position"
        }
    }

    /// Items with what they hold, those `condition` (over `list_items i`) selects, in `order`, a
    /// page of `:limit` from `:offset`; checks as the owner sees them or as others do
    /// (``shownToOthers(_:at:source:)``).
    static func itemViews(where condition: String, order: String, _ arguments: [String: (any DatabaseValueConvertible)?], owner: Bool, now: Date,
                          privacy: LocationPrivacy, _ db: Database) throws -> [ListItemView] {
        try Row.fetchAll(db.cachedStatement(sql: """
            SELECT i.id, i.kind, i.target_id, i.note, i.position, i.added_at, i.checked_at, i.checked_by,
                   \(Self.shownToOthers("i", at: "checked_at", source: "checked_by")) AS shown,
                   \(Self.catalogRideColumns("r", as: "r_")), rp.name AS r_park_name, rp.fenced AS r_park_fenced,
                   p.id AS p_id, p.name AS p_name, p.fenced AS p_fenced
            FROM list_items i
            LEFT JOIN catalog_rides r ON i.kind = 'ride' AND r.id = i.target_id
            LEFT JOIN catalog_parks rp ON rp.id = r.park_id
            LEFT JOIN catalog_parks p ON i.kind = 'park' AND p.id = i.target_id
            WHERE \(condition) ORDER BY \(order) LIMIT :limit OFFSET :offset
            """), arguments: StatementArguments(arguments.merging(Self.shownArguments(now: now, privacy: privacy)) { $1 })).map { row in
            let kind: String = row["kind"], targetID: String = row["target_id"]
            let checkedAt: Double? = row["checked_at"]
            let shown = owner || (row["shown"] as Bool?) == true
            return ListItemView(
                id: row["id"], target: kind == "park" ? .park(ParkID(rawValue: targetID)) : .ride(RideID(rawValue: targetID)),
                ride: (row["r_id"] as String?) == nil ? nil : Self.catalogRide(from: row, prefix: "r_"),
                park: (row["p_id"] as String?).map { CatalogPark(id: ParkID(rawValue: $0), name: row["p_name"], fenced: row["p_fenced"]) },
                note: row["note"], position: row["position"], addedAt: Date(timeIntervalSince1970: row["added_at"]),
                check: shown ? checkedAt.map {
                    ListCheck(at: Date(timeIntervalSince1970: $0), source: (row["checked_by"] as String?).flatMap(ListCheckSource.init(rawValue:)) ?? .hand)
                } : nil)
        }
    }

    static func requireItemView(_ item: Int64, owner: Bool, now: Date, privacy: LocationPrivacy, _ db: Database) throws -> ListItemView {
        guard let view = try Self.itemViews(where: "i.id = :item", order: "i.id", ["item": item, "limit": 1, "offset": 0], owner: owner, now: now,
                                            privacy: privacy, db).first
        else { throw ListError.noSuchItem }
        return view
    }

    static func listChange(_ row: Row) -> ListChange {
        let targetKind: String = row["target_kind"], targetID: String = row["target_id"]
        return ListChange(
            id: row["id"], kind: ListChange.Kind(rawValue: row["kind"]) ?? .itemAdded, list: row["list_id"], listTitle: row["title"],
            owner: UserSummary(id: UserID(row["owner_id"] as Int64), username: row["username"], displayName: row["display_name"]), item: row["item_id"],
            target: targetKind == "park" ? .park(ParkID(rawValue: targetID)) : .ride(RideID(rawValue: targetID)), itemName: row["item_name"],
            source: (row["source"] as String?).flatMap(ListCheckSource.init(rawValue:)), at: Date(timeIntervalSince1970: row["at"]))
    }
}

// MARK: Writing lists

extension SpatiaLiteStore {
    /// Refuses a list beyond the owner's limit.
    static func checkListLimit(_ owner: UserID, rules: ListRules, _ db: Database) throws {
        let lists = try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM lists WHERE owner_id = ?"), arguments: [owner.rawValue]) ?? 0
        guard lists < rules.maximumLists else { throw ListError.tooManyLists(limit: rules.maximumLists) }
    }

    /// Refuses a cover that is not a photo of the owner's.
    static func checkCover(_ photo: Int64, owner: UserID, _ db: Database) throws {
        guard try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM photos WHERE id = ? AND user_id = ?)"),
                                arguments: [photo, owner.rawValue]) == true
        else { throw ListError.noSuchPhoto }
    }

    /// Removes an item; those after it move up by one (its list's count and its ride's by trigger).
    static func deleteItem(_ item: Int64, list: Int64, position: Int, _ db: Database) throws {
        try db.cachedStatement(sql: "DELETE FROM list_items WHERE id = ?").execute(arguments: [item])
        try db.cachedStatement(sql: "UPDATE list_items SET position = position - 1 WHERE list_id = ? AND position > ?").execute(arguments: [list, position])
    }

    static func touch(_ list: Int64, now: Date, _ db: Database) throws {
        try db.cachedStatement(sql: "UPDATE lists SET updated_at = ? WHERE id = ?").execute(arguments: [now.timeIntervalSince1970, list])
    }

    static func recordChange(list: Int64, owner: UserID, kind: ListChange.Kind, item: Int64, kindOfTarget: String, target: String, name: String,
                             source: ListCheckSource?, at: Double, shownAt: Double, _ db: Database) throws {
        try db.cachedStatement(sql: """
            INSERT INTO list_changes (list_id, owner_id, kind, item_id, target_kind, target_id, item_name, source, at, shown_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """).execute(arguments: [list, owner.rawValue, kind.rawValue, item, kindOfTarget, target, name, source?.rawValue, at, shownAt])
    }
}
