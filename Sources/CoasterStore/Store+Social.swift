import CoasterCore
import Foundation
import GRDB

/// A stored photo's metadata.
public struct Photo: Hashable, Sendable {
    public var id: Int64
    public var owner: UserID
    public var sha256: String
    public var format: InspectedImage.Format
    public var bytes: Int
    public var width: Int
    public var height: Int
    public var caption: String?
    public var park: ParkID?
    public var ride: RideID?
    public var createdAt: Date
}

public enum PhotoError: Error, Equatable, Sendable {
    case noSuchPhoto
    /// The tagged park or ride is not one the user has visited.
    case tagNotVisited(String)
}

/// Which leaderboard.
public struct LeaderboardQuery: Hashable, Sendable {
    public enum Metric: Hashable, Sendable {
        case rides, credits
        case ride(RideID)
        var key: String {
            switch self {
            case .rides: "rides"
            case .credits: "credits"
            case .ride(let id): "ride:" + id.rawValue
            }
        }
    }

    public enum Scope: Hashable, Sendable {
        case global, friends
        case park(ParkID)
    }

    public enum Window: String, Hashable, Sendable, CaseIterable {
        case allTime = "all-time", year, week
    }

    public var metric: Metric
    public var scope: Scope
    public var window: Window

    public init(metric: Metric, scope: Scope, window: Window) {
        self.metric = metric
        self.scope = scope
        self.window = window
    }
}

public struct LeaderboardEntry: Hashable, Sendable {
    public var rank: Int
    public var user: UserSummary
    public var value: Int
    /// When the rider reached `value` (seconds since 1970): ties go to who got there first.
    public var reachedAt: Double

    /// Where the entry stands in the board's order: what a page after it starts from.
    public var position: LeaderboardPosition { LeaderboardPosition(value: self.value, reachedAt: self.reachedAt, user: self.user.id) }
}

/// A place in a leaderboard's order (higher value first, then who reached it first, then the
/// lower id): where a page continues. Any place will do, one whose rider has since left the
/// board or moved too.
public struct LeaderboardPosition: Hashable, Sendable {
    public var value: Int
    public var reachedAt: Double
    public var user: UserID

    public init(value: Int, reachedAt: Double, user: UserID) {
        self.value = value
        self.reachedAt = reachedAt
        self.user = user
    }

    /// Whether `self` comes before `other` on the board.
    public func precedes(_ other: LeaderboardPosition) -> Bool {
        (other.value, self.reachedAt, self.user.rawValue) < (self.value, other.reachedAt, other.user.rawValue)
    }
}

public struct EarnedBadge: Hashable, Sendable {
    public var badge: Badge
    public var earnedAt: Date
}

public struct Message: Hashable, Sendable {
    public var id: Int64
    public var sender: UserID
    public var recipient: UserID
    public var body: String
    public var sentAt: Date
    public var readAt: Date?
}

public struct Conversation: Hashable, Sendable {
    public var with: UserSummary
    public var last: Message
    public var unread: Int
}

/// Time periods of the leaderboards, in UTC: the calendar year and the ISO week.
enum Periods {
    static func keys(_ date: Date) -> [String] {
        var calendar = Calendar(identifier: .iso8601)
        calendar.timeZone = .gmt
        let c = calendar.dateComponents([.yearForWeekOfYear, .weekOfYear], from: date)
        var gregorian = Calendar(identifier: .gregorian)
        gregorian.timeZone = .gmt
        let year = gregorian.component(.year, from: date)
        return ["all", "y\(year)", String(format: "w%04d-W%02d", c.yearForWeekOfYear ?? year, c.weekOfYear ?? 1)]
    }

    /// Period key and its start, for "first time in this period" questions.
    static func starts(_ date: Date) -> [(key: String, start: Double)] {
        var calendar = Calendar(identifier: .iso8601)
        calendar.timeZone = .gmt
        let keys = Self.keys(date)
        var gregorian = Calendar(identifier: .gregorian)
        gregorian.timeZone = .gmt
        let yearStart = gregorian.dateInterval(of: .year, for: date)?.start ?? .distantPast
        let weekStart = calendar.dateInterval(of: .weekOfYear, for: date)?.start ?? .distantPast
        return [(keys[0], -Double.infinity), (keys[1], yearStart.timeIntervalSince1970), (keys[2], weekStart.timeIntervalSince1970)]
    }

    static func key(_ window: LeaderboardQuery.Window, _ now: Date) -> String {
        let keys = Self.keys(now)
        switch window {
        case .allTime: return keys[0]
        case .year: return keys[1]
        case .week: return keys[2]
        }
    }
}

extension Store {
    /// Where photo files live: `photos/` beside the database file.
    public var photoDirectory: URL {
        URL(fileURLWithPath: self.path).deletingLastPathComponent().appendingPathComponent("photos", isDirectory: true)
    }

    func photoURL(_ sha256: String, _ format: InspectedImage.Format) -> URL {
        Self.photoFile(sha256, format, under: self.photoDirectory)
    }

    /// Where the file of `sha256` in `format` lives under a photo directory (the store's, or a
    /// backup's): `ab/<sha256>.jpg`, in the directory of its first two hexadecimal digits.
    static func photoFile(_ sha256: String, _ format: InspectedImage.Format, under root: URL) -> URL {
        root.appendingPathComponent(String(sha256.prefix(2)), isDirectory: true).appendingPathComponent(Self.photoFileName(sha256, format))
    }

    /// A photo file's name: its bytes' SHA-256 and its format's extension.
    static func photoFileName(_ sha256: String, _ format: InspectedImage.Format) -> String {
        "\(sha256).\(format.fileExtension)"
    }

    /// Stores a cleaned image: the file first (atomically: temp file, fsync, rename, fsync of the
    /// directory), then the row; a failed row leaves no new file behind.
    ///
    /// Files are content-addressed, so one file can serve several rows, and a file is removed only
    /// by a write that holds the store's writer (``removePhotoFileIfUnused(_:_:_:)``). The file is
    /// written before the writer is taken (its fsync would hold up every other write), so a delete
    /// of the last other row with the same bytes may remove it in between; the insert's
    /// transaction therefore writes it again if it is gone, and a row never commits without its file.
    public func addPhoto(owner: UserID, image: InspectedImage, sha256: String, caption: String?, park: ParkID?, ride: RideID?) async throws -> Photo {
        let url = self.photoURL(sha256, image.format)
        let created = try Self.writeAtomically(image.bytes, to: url)
        let now = self.now()
        do {
            return try await self.pool.write { db in
                var tagPark = park
                if let ride {
                    guard let ridePark = try String.fetchOne(db, sql: "SELECT park_id FROM rides WHERE id = ?", arguments: [ride.rawValue]) else {
                        throw PhotoError.tagNotVisited(ride.rawValue)
                    }
                    tagPark = tagPark ?? ParkID(rawValue: ridePark)
                    guard tagPark?.rawValue == ridePark else { throw PhotoError.tagNotVisited(ride.rawValue) }
                }
                if let tagPark, try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM visits WHERE user_id = ? AND park_id = ?)",
                                                  arguments: [owner.rawValue, tagPark.rawValue]) != true {
                    throw PhotoError.tagNotVisited(tagPark.rawValue)
                }
                try db.execute(sql: """
                    INSERT INTO photos (user_id, sha256, format, bytes, width, height, caption, park_id, ride_id, created_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """, arguments: [owner.rawValue, sha256, image.format.rawValue, image.bytes.count, image.width, image.height, caption,
                                     tagPark?.rawValue, ride?.rawValue, now.timeIntervalSince1970])
                let id = db.lastInsertedRowID
                _ = try Self.writeAtomically(image.bytes, to: url)
                return Photo(id: id, owner: owner, sha256: sha256, format: image.format, bytes: image.bytes.count,
                             width: image.width, height: image.height, caption: caption, park: tagPark, ride: ride, createdAt: now)
            }
        } catch {
            if created {
                try? await self.pool.writeWithoutTransaction { db in try self.removePhotoFileIfUnused(sha256, image.format, db) }
            }
            throw error
        }
    }

    /// Writes `bytes` to `url` unless a file is there already (same content, same name).
    /// - Returns: whether a new file was written.
    static func writeAtomically(_ bytes: [UInt8], to url: URL) throws -> Bool {
        let fm = FileManager.default
        if fm.fileExists(atPath: url.path) { return false }
        let dir = url.deletingLastPathComponent()
        try fm.createDirectory(at: dir, withIntermediateDirectories: true)
        let temp = dir.appendingPathComponent("\(Self.uploadPrefix)\(UUID().uuidString)")
        guard fm.createFile(atPath: temp.path, contents: nil), let handle = FileHandle(forWritingAtPath: temp.path) else {
            throw CocoaError(.fileWriteUnknown)
        }
        do {
            try handle.write(contentsOf: bytes)
            try handle.synchronize()
            try handle.close()
            guard rename(temp.path, url.path) == 0 else { throw CocoaError(.fileWriteUnknown) }
        } catch {
            try? handle.close()
            try? fm.removeItem(at: temp)
            throw error
        }
        // The rename is durable only once the directory entry is.
        if let directory = FileHandle(forReadingAtPath: dir.path) {
            try? directory.synchronize()
            try? directory.close()
        }
        return true
    }

    /// How a photo file being written is named until it is complete.
    static let uploadPrefix = ".upload-"

    /// Removes the file of `sha256` unless a row still uses it. Call it holding the writer, outside
    /// a transaction (after the delete that made it unused has committed): an insert of the same
    /// bytes then either committed before, and its row keeps the file, or commits after, and writes
    /// the file again (``addPhoto(owner:image:sha256:caption:park:ride:)``).
    func removePhotoFileIfUnused(_ sha256: String, _ format: InspectedImage.Format, _ db: Database) throws {
        guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM photos WHERE sha256 = ?)", arguments: [sha256]) == false else { return }
        try? FileManager.default.removeItem(at: self.photoURL(sha256, format))
    }

    /// What ``sweepPhotoFiles()`` removed.
    public struct PhotoSweep: Sendable, Equatable {
        /// Complete files no row uses (a crash between a file and its row's commit).
        public var unused = 0
        /// Files left half-written by a crash during an upload.
        public var partial = 0

        public init(unused: Int = 0, partial: Int = 0) {
            self.unused = unused
            self.partial = partial
        }
    }

    /// Removes the photo files no row uses, and uploads a crash left half-written. For a server
    /// starting on the store, before it takes requests: an upload in flight writes its file
    /// before its row (``addPhoto(owner:image:sha256:caption:park:ride:)``).
    public func sweepPhotoFiles() async throws -> PhotoSweep {
        let fm = FileManager.default
        let root = self.photoDirectory
        guard fm.fileExists(atPath: root.path) else { return PhotoSweep() }
        return try await self.pool.writeWithoutTransaction { db in
            var kept = Set<String>()
            for row in try Row.fetchAll(db, sql: "SELECT DISTINCT sha256, format FROM photos") {
                guard let format = InspectedImage.Format(rawValue: row["format"]) else { continue }
                kept.insert(Self.photoFileName(row["sha256"], format))
            }
            var sweep = PhotoSweep()
            for shard in try fm.contentsOfDirectory(atPath: root.path) {
                let directory = root.appendingPathComponent(shard, isDirectory: true)
                var isDirectory: ObjCBool = false
                guard fm.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue else { continue }
                for name in try fm.contentsOfDirectory(atPath: directory.path) where !kept.contains(name) {
                    if name.hasPrefix(Self.uploadPrefix) {
                        sweep.partial += 1
                    } else if Self.isPhotoFileName(name, shard: shard) {
                        sweep.unused += 1
                    } else {
                        continue  // not ours: left alone
                    }
                    try? fm.removeItem(at: directory.appendingPathComponent(name))
                }
            }
            return sweep
        }
    }

    /// Whether `name` is how this store names a photo file in `shard` (64 hex digits, the first two
    /// the shard's, and a known extension).
    static func isPhotoFileName(_ name: String, shard: String) -> Bool {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 64, parts[0].hasPrefix(shard),
              parts[0].allSatisfy({ $0.isHexDigit && !$0.isUppercase }),
              InspectedImage.Format.allCases.contains(where: { $0.fileExtension == parts[1] }) else { return false }
        return true
    }

    /// A photo `viewer` may see (theirs, or an accepted friend's), or `nil`: no such photo and a
    /// photo they may not see are one answer. One read for the photo and the friendship.
    public func photo(_ id: Int64, viewer: UserID) async throws -> Photo? {
        try await self.pool.read { db in
            guard let photo = try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM photos WHERE id = ?"), arguments: [id]).map(Self.photo),
                  try Self.isSelfOrFriend(photo.owner, of: viewer, db) else { return nil }
            return photo
        }
    }

    /// The bytes of a stored photo.
    public func photoBytes(_ photo: Photo) throws -> Data {
        try Data(contentsOf: self.photoURL(photo.sha256, photo.format))
    }

    /// A user's photos, newest first; `before` pages by photo id. `nil` unless `viewer` is the
    /// user or an accepted friend of theirs (read in the same transaction).
    public func photos(of user: UserID, viewer: UserID, limit: Int, before: Int64?) async throws -> [Photo]? {
        try await self.pool.read { db in
            guard try Self.isSelfOrFriend(user, of: viewer, db) else { return nil }
            return try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM photos WHERE user_id = ? AND id < ? ORDER BY id DESC LIMIT ?"),
                                    arguments: [user.rawValue, before ?? Int64.max, limit]).map(Self.photo)
        }
    }

    /// Deletes a photo the owner owns; its file goes when no other row uses the same bytes.
    public func deletePhoto(_ id: Int64, owner: UserID) async throws {
        try await self.pool.writeWithoutTransaction { db in
            var deleted: Photo?
            try db.inTransaction {
                deleted = try Row.fetchOne(db, sql: "SELECT * FROM photos WHERE id = ? AND user_id = ?", arguments: [id, owner.rawValue])
                    .map(Self.photo)
                guard deleted != nil else { return .rollback }
                try db.execute(sql: "DELETE FROM photos WHERE id = ?", arguments: [id])
                return .commit
            }
            guard let photo = deleted else { throw PhotoError.noSuchPhoto }
            // After the commit (a failed one keeps the row and its file), before the writer is let go.
            try self.removePhotoFileIfUnused(photo.sha256, photo.format, db)
        }
    }

    /// Sets (or clears) the profile picture, which must be the user's own photo.
    public func setProfilePhoto(_ id: Int64?, owner: UserID) async throws {
        try await self.pool.write { db in
            if let id {
                guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM photos WHERE id = ? AND user_id = ?)",
                                        arguments: [id, owner.rawValue]) == true else { throw PhotoError.noSuchPhoto }
            }
            try db.execute(sql: "UPDATE users SET photo_id = ? WHERE id = ?", arguments: [id, owner.rawValue])
        }
    }

    public func profilePhotoID(of user: UserID) async throws -> Int64? {
        try await self.pool.read { db in try Int64.fetchOne(db, sql: "SELECT photo_id FROM users WHERE id = ?", arguments: [user.rawValue]) }
    }

    static func photo(_ row: Row) -> Photo {
        Photo(id: row["id"], owner: UserID(row["user_id"] as Int64), sha256: row["sha256"],
              format: InspectedImage.Format(rawValue: row["format"]) ?? .jpeg, bytes: row["bytes"], width: row["width"], height: row["height"],
              caption: row["caption"], park: (row["park_id"] as String?).map(ParkID.init(rawValue:)),
              ride: (row["ride_id"] as String?).map(RideID.init(rawValue:)), createdAt: Date(timeIntervalSince1970: row["created_at"]))
    }

    // MARK: Tallies and badges (inside ride-log and visit transactions)

    /// Counts on the leaderboards every ride log older than `cutoff` not yet counted, oldest
    /// first, at most `limit` of them in this transaction; returns how many were counted.
    ///
    /// A board never shows a ride younger than the location time-to-live: a tally that moved as
    /// a ride was logged told any reader which ride its rider was on, and when, whatever their
    /// sharing (ghost mode included). Ride logs are written with the server's clock, so their
    /// ids and times rise together and the mark is an id.
    @discardableResult
    public func settleTallies(through cutoff: Date, limit: Int = Self.settleBatch) async throws -> Int {
        try await self.pool.write { db in
            let mark = try Int64.fetchOne(db, sql: "SELECT through_log FROM tally_mark WHERE id = 1") ?? 0
            let rows = try Row.fetchAll(db.cachedStatement(sql: """
                SELECT l.id AS log_id, l.user_id AS log_user, l.ridden_at AS log_at, r.*
                FROM ride_logs l JOIN rides r ON r.id = l.ride_id WHERE l.id > ? ORDER BY l.id LIMIT ?
                """), arguments: [mark, limit])
            var last = mark, counted = 0
            for row in rows {
                let at: Double = row["log_at"]
                // The first log still younger than the cutoff holds back the ones after it.
                guard at <= cutoff.timeIntervalSince1970 else { break }
                let id: Int64 = row["log_id"]
                try Self.tally(user: UserID(row["log_user"] as Int64), ride: RideRecord(row: row).ride, at: Date(timeIntervalSince1970: at),
                               before: id, db)
                last = id
                counted += 1
            }
            if last != mark { try db.execute(sql: "UPDATE tally_mark SET through_log = ? WHERE id = 1", arguments: [last]) }
            return counted
        }
    }

    /// Ride logs counted in one settling transaction: a short hold of the writer.
    public static let settleBatch = 5_000

    /// Marks every ride log written so far as counted (a bulk load counts its own).
    static func markTalliesSettled(_ db: Database) throws {
        try db.execute(sql: "UPDATE tally_mark SET through_log = (SELECT coalesce(max(id), 0) FROM ride_logs) WHERE id = 1")
    }

    /// Adds one ride to the leaderboards: rides, first-time coaster credits, and per-ride counts,
    /// for every period and for the global and park scopes. `before`: the log's own id (logs
    /// with lower ids came before it); `nil` when the log row is not written yet.
    static func tally(user: UserID, ride: Ride, at: Date, before logID: Int64? = nil, _ db: Database) throws {
        let upsert = try db.cachedStatement(sql: """
            INSERT INTO tallies (metric, scope, period, user_id, value, reached_at) VALUES (?, ?, ?, ?, 1, ?)
            ON CONFLICT (metric, scope, period, user_id) DO UPDATE SET value = value + 1, reached_at = excluded.reached_at
            """)
        let t = at.timeIntervalSince1970
        let scopes = ["global", "park:" + ride.park.rawValue]
        for (period, start) in Periods.starts(at) {
            for scope in scopes {
                try upsert.execute(arguments: ["rides", scope, period, user.rawValue, t])
            }
            try upsert.execute(arguments: ["ride:" + ride.id.rawValue, "global", period, user.rawValue, t])
            if ride.type == .coaster {
                let before = try Bool.fetchOne(
                    db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM ride_logs WHERE user_id = ? AND ride_id = ? AND ridden_at >= ? AND id < ?)"),
                    arguments: [user.rawValue, ride.id.rawValue, start.isFinite ? start : -1e18, logID ?? Int64.max]) ?? false
                if !before {
                    for scope in scopes { try upsert.execute(arguments: ["credits", scope, period, user.rawValue, t]) }
                }
            }
        }
    }

    /// A rider's facts, for badge rules.
    static func riderFacts(_ user: UserID, _ db: Database) throws -> RiderFacts {
        let row = try Row.fetchOne(db.cachedStatement(sql: Self.rideFacts), arguments: [user.rawValue])!
        let parks = try Int.fetchOne(db.cachedStatement(sql: Self.parksVisited), arguments: ["user": user.rawValue]) ?? 0
        return RiderFacts(totalRides: row["total"], coasterCredits: row["credits"], parksVisited: parks, mostRidesOfOneRide: row["most"],
                          distinctRides: row["distinct_rides"])
    }

    /// How many parks a rider has visited: each park found after the last on the index of visits
    /// by user and park, one search a park, however many visits there were (a count of the
    /// distinct parks read every visit).
    static let parksVisited = """
        WITH RECURSIVE seen(park) AS (
            SELECT (SELECT min(park_id) FROM visits WHERE user_id = :user)
            UNION ALL
            SELECT (SELECT min(park_id) FROM visits WHERE user_id = :user AND park_id > seen.park) FROM seen WHERE seen.park IS NOT NULL
        )
        SELECT count(park) FROM seen
        """

    /// A rider's ride facts from how often they have ridden each ride (`ride_counts`, kept by
    /// triggers on `ride_logs`): one row a ride they have ridden, not one a ride log.
    static let rideFacts = """
        SELECT coalesce(sum(c.rides), 0) AS total, count(*) AS distinct_rides, count(CASE WHEN r.type = 'coaster' THEN 1 END) AS credits,
               coalesce(max(c.rides), 0) AS most
        FROM ride_counts c JOIN rides r ON r.id = c.ride_id WHERE c.user_id = ?
        """

    /// Awards every badge the rider's facts now earn and they do not have yet.
    static func awardBadges(_ user: UserID, at: Date, _ db: Database) throws {
        let facts = try Self.riderFacts(user, db)
        let earned = Set(try String.fetchAll(db, sql: "SELECT badge_id FROM badges WHERE user_id = ?", arguments: [user.rawValue]))
        for badge in Badge.newlyEarned(facts, earned: earned) {
            try db.execute(sql: "INSERT OR IGNORE INTO badges (user_id, badge_id, earned_at) VALUES (?, ?, ?)",
                           arguments: [user.rawValue, badge.id, at.timeIntervalSince1970])
        }
    }

    /// Badges earned (known rules only, in the order of ``Badge/all``) and the facts behind progress.
    public func badges(of user: UserID) async throws -> (earned: [EarnedBadge], facts: RiderFacts) {
        try await self.pool.read { db in (try Self.earnedBadges(user, db), try Self.riderFacts(user, db)) }
    }

    /// The badges `user` has earned, in ``Badge/all``'s order.
    static func earnedBadges(_ user: UserID, _ db: Database) throws -> [EarnedBadge] {
        var earned: [String: Date] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT badge_id, earned_at FROM badges WHERE user_id = ?", arguments: [user.rawValue]) {
            earned[row["badge_id"]] = Date(timeIntervalSince1970: row["earned_at"])
        }
        return Badge.all.compactMap { b in earned[b.id].map { EarnedBadge(badge: b, earnedAt: $0) } }
    }

    /// One page of a leaderboard, best first; ties go to who got there first, then the lower id.
    /// Users blocked by or blocking `viewer` are left out. The viewer's own entry (if they are on
    /// the board) comes with every page, ranked the same way. A page starts `offset` entries in,
    /// or right after a place on the board (`after`, the last entry's ``LeaderboardEntry/position``
    /// of the page before).
    ///
    /// What each part costs, whatever the board's size: the friends' board is read from the
    /// friend list (one lookup a friend, sorted here); a global or park page is a range of the
    /// rank index (`offset + limit` entries, or `limit` after a place: the way to walk a large
    /// board); the viewer's rank, and the first rank of a page after a place, is a few sums of
    /// `tally_counts` and a count within one minute (``TallyCounts``), less the blocked riders
    /// ranked above, each looked up.
    public func leaderboard(_ query: LeaderboardQuery, viewer: UserID, limit: Int, offset: Int,
                            after: LeaderboardPosition? = nil) async throws -> (entries: [LeaderboardEntry], mine: LeaderboardEntry?) {
        let period = Periods.key(query.window, self.now())
        return try await self.pool.read { db in
            let scope: String
            switch query.scope {
            case .global, .friends: scope = "global"
            case .park(let park): scope = "park:" + park.rawValue
            }
            let arguments: StatementArguments = ["metric": query.metric.key, "scope": scope, "period": period, "me": viewer.rawValue]
            if query.scope == .friends {
                return try Self.friendsLeaderboard(of: viewer, arguments, limit: limit, offset: offset, after: after, db)
            }
            var entries: [LeaderboardEntry]
            if let after {
                let rows = try Row.fetchAll(db.cachedStatement(sql: Self.boardPageAfter), arguments: arguments + [
                    "value": after.value, "reached": after.reachedAt, "rider": after.user.rawValue, "limit": limit,
                ])
                entries = rows.map { Self.entry($0, rank: 0) }
                if let first = entries.first {
                    let ahead = try TallyCounts.ahead(first.position, arguments, db)
                    for i in entries.indices { entries[i].rank = ahead + i + 1 }
                }
            } else {
                let page = try db.cachedStatement(sql: """
                    \(Self.boardRows) WHERE t.metric = :metric AND t.scope = :scope AND t.period = :period
                        AND t.user_id NOT IN (\(Self.blockedEitherWay))
                    ORDER BY t.value DESC, t.reached_at, t.user_id LIMIT :limit OFFSET :offset
                    """)
                let rows = try Row.fetchAll(page, arguments: arguments + ["limit": limit, "offset": offset])
                entries = rows.enumerated().map { i, row in Self.entry(row, rank: offset + i + 1) }
            }
            let mine = try db.cachedStatement(sql: """
                \(Self.boardRows) WHERE t.metric = :metric AND t.scope = :scope AND t.period = :period AND t.user_id = :me
                """)
            guard let row = try Row.fetchOne(mine, arguments: arguments) else { return (entries, nil) }
            var me = Self.entry(row, rank: 0)
            me.rank = try TallyCounts.ahead(me.position, arguments, db) + 1
            return (entries, me)
        }
    }

    static func entry(_ row: Row, rank: Int) -> LeaderboardEntry {
        LeaderboardEntry(rank: rank, user: Self.summary(row), value: row["value"], reachedAt: row["reached_at"])
    }

    /// A page of a global or park board after a place (`:value`, `:reached`, `:rider`): the
    /// riders tied on its value after it, then those of lower values, each a range of the rank
    /// index in its order, merged until the page is full. A page costs its length, however deep.
    static let boardPageAfter = """
        \(boardRows) WHERE t.metric = :metric AND t.scope = :scope AND t.period = :period
            AND t.value = :value AND (t.reached_at, t.user_id) > (:reached, :rider) AND t.user_id NOT IN (\(blockedEitherWay))
        UNION ALL
        \(boardRows) WHERE t.metric = :metric AND t.scope = :scope AND t.period = :period
            AND t.value < :value AND t.user_id NOT IN (\(blockedEitherWay))
        ORDER BY value DESC, reached_at, id LIMIT :limit
        """

    /// A board's columns as pages show them: the tally `t` and its user `u`'s names.
    static let boardColumns = "t.user_id AS id, u.username, u.display_name, t.value, t.reached_at"

    /// A board's rows as pages show them.
    static let boardRows = "SELECT \(boardColumns) FROM tallies t JOIN users u ON u.id = t.user_id"

    /// The users `:me` has blocked and those who blocked them, for `NOT IN (…)`.
    static let blockedEitherWay = "SELECT blocked FROM blocks WHERE blocker = :me UNION SELECT blocker FROM blocks WHERE blocked = :me"

    /// The viewer's and their friends' tallies on the board of `:metric`, `:scope`, `:period`.
    /// CROSS JOIN keeps the friend list outside: SQLite would otherwise walk the board.
    static let friendsBoard = """
        SELECT \(boardColumns)
        FROM (SELECT :me AS id UNION SELECT CASE WHEN requester = :me THEN addressee ELSE requester END FROM friendships
              WHERE (requester = :me OR addressee = :me) AND status = 'accepted') f
        CROSS JOIN tallies t ON t.metric = :metric AND t.scope = :scope AND t.period = :period AND t.user_id = f.id
        JOIN users u ON u.id = t.user_id
        WHERE t.user_id NOT IN (\(Store.blockedEitherWay))
        """

    /// The board of the viewer and their friends: each one's tally looked up by the friend list
    /// (a board filtered by friends would walk every rider ranked above the last friend), sorted
    /// and ranked here.
    private static func friendsLeaderboard(of viewer: UserID, _ arguments: StatementArguments, limit: Int, offset: Int,
                                           after: LeaderboardPosition?, _ db: Database) throws -> (entries: [LeaderboardEntry], mine: LeaderboardEntry?) {
        var entries = try Row.fetchAll(db.cachedStatement(sql: Self.friendsBoard), arguments: arguments).map { Self.entry($0, rank: 0) }
        entries.sort { $0.position.precedes($1.position) }
        for i in entries.indices { entries[i].rank = i + 1 }
        let start = after.map { after in entries.firstIndex { after.precedes($0.position) } ?? entries.endIndex } ?? offset
        return (Array(entries.dropFirst(start).prefix(limit)), entries.first { $0.user.id == viewer })
    }

    // MARK: Messages

    /// Sends a message to a friend (never to anyone else: blocking ends the friendship).
    public func sendMessage(from sender: UserID, to recipient: UserID, body: String) async throws -> Message {
        let now = self.now()
        return try await self.pool.write { db in
            guard try Self.relationship(sender, recipient, db) == .friends else { throw FriendshipError.notFriends }
            try db.execute(sql: "INSERT INTO messages (sender, recipient, body, sent_at) VALUES (?, ?, ?, ?)",
                           arguments: [sender.rawValue, recipient.rawValue, body, now.timeIntervalSince1970])
            return Message(id: db.lastInsertedRowID, sender: sender, recipient: recipient, body: body, sentAt: now, readAt: nil)
        }
    }

    /// The user's conversations with people they have not blocked and who have not blocked them,
    /// newest first, with the last message and the unread count: one row a conversation, kept by
    /// triggers (migration "2026-11-24 conversations kept by triggers"), not the user's history.
    /// `before` pages by the last message's id (each conversation of a user has its own); a page
    /// costs its length, however many conversations there are.
    public func conversations(of me: UserID, limit: Int, before: Int64?) async throws -> [Conversation] {
        let arguments: StatementArguments = ["me": me.rawValue, "before": before ?? Int64.max, "limit": limit]
        return try await self.pool.read { db in
            try Row.fetchAll(try db.cachedStatement(sql: Self.conversationList), arguments: arguments).map { row in
                Conversation(with: UserSummary(id: UserID(row["other_id"] as Int64), username: row["username"], displayName: row["display_name"]),
                             last: Self.message(row), unread: row["unread"])
            }
        }
    }

    /// One conversation, newest first; `before` pages by message id. A page costs its length,
    /// however long the conversation (``conversationPage``). `nil` when `other` has blocked `me`
    /// (read in the same transaction as the page).
    public func messages(of me: UserID, with other: UserID, limit: Int, before: Int64?) async throws -> [Message]? {
        try await self.pool.read { db in
            if try Self.relationship(me, other, db) == .blockedBy { return nil }
            let arguments: StatementArguments = ["me": me.rawValue, "other": other.rawValue, "before": before ?? Int64.max, "limit": limit]
            return try Row.fetchAll(try db.cachedStatement(sql: Self.conversationPage), arguments: arguments).map(Self.message)
        }
    }

    /// Marks every message from `other` to `me` read. Returns how many were unread.
    @discardableResult
    public func markRead(of me: UserID, from other: UserID) async throws -> Int {
        let now = self.now().timeIntervalSince1970
        return try await self.pool.write { db in
            try db.cachedStatement(sql: Self.markRead).execute(arguments: ["now": now, "me": me.rawValue, "other": other.rawValue])
            return db.changesCount
        }
    }

    /// A page of the viewer's conversations (``conversations(of:limit:before:)``), newest first
    /// on the index by last message.
    static let conversationList = """
        SELECT m.*, u.id AS other_id, u.username, u.display_name, c.unread
        FROM conversations c
        JOIN messages m ON m.id = c.last_id
        JOIN users u ON u.id = c.other_id
        WHERE c.user_id = :me AND c.last_id < :before AND c.other_id NOT IN (\(Store.blockedEitherWay))
        ORDER BY c.last_id DESC LIMIT :limit
        """

    /// A page of one conversation (``messages(of:with:limit:before:)``): the two directions, each
    /// newest first on the pair index, merged until the page is full. The second direction is the
    /// first when the two are one person.
    static let conversationPage = """
        SELECT * FROM messages WHERE sender = :me AND recipient = :other AND id < :before
        UNION ALL
        SELECT * FROM messages WHERE sender = :other AND recipient = :me AND id < :before AND :me != :other
        ORDER BY id DESC LIMIT :limit
        """

    /// Every unread message from `:other` to `:me` marked read (``markRead(of:from:)``).
    static let markRead = "UPDATE messages SET read_at = :now WHERE recipient = :me AND read_at IS NULL AND sender = :other"

    static func message(_ row: Row) -> Message {
        Message(id: row["id"], sender: UserID(row["sender"] as Int64), recipient: UserID(row["recipient"] as Int64), body: row["body"],
                sentAt: Date(timeIntervalSince1970: row["sent_at"]), readAt: (row["read_at"] as Double?).map(Date.init(timeIntervalSince1970:)))
    }

    /// The profile page of `user` as `viewer` may see it, read in one transaction (one hop to the
    /// reader pool, one snapshot: a friendship ended meanwhile cannot leave half a page): `nil`
    /// unless `user` is the viewer or an accepted friend of theirs, and exists.
    public func profilePage(of user: UserID, viewer: UserID) async throws -> ProfilePage? {
        try await self.pool.read { db -> ProfilePage? in
            guard try Self.isSelfOrFriend(user, of: viewer, db) else { return nil }
            let statement = try db.cachedStatement(sql: "SELECT id, username, display_name, bio, photo_id FROM users WHERE id = ?")
            guard let row = try Row.fetchOne(statement, arguments: [user.rawValue]) else { return nil }
            let facts = try Self.riderFacts(user, db)
            return ProfilePage(summary: Self.summary(row), bio: row["bio"], photo: row["photo_id"], stats: RiderStats(facts),
                               badges: try Self.earnedBadges(user, db))
        }
    }
}

/// What a user's profile page shows (``Store/profilePage(of:viewer:)``).
public struct ProfilePage: Hashable, Sendable {
    public var summary: UserSummary
    public var bio: String
    public var photo: Int64?
    public var stats: RiderStats
    public var badges: [EarnedBadge]
}

/// How many riders of a leaderboard are ranked ahead of one, from the counts the triggers of
/// migration "2026-11-24 leaderboard ranks from counts" keep in `tally_counts`: by value
/// (level 0), and at each value by the day, hour and minute it was reached (levels 1–3).
///
/// Ahead of a rider at value v reached at r: every rider at a higher value (one sum over the
/// board's distinct values), and at v those who reached it earlier (ties go to who got there
/// first, then the lower id): the days before r's, the hours of r's day before its hour, the
/// minutes of that hour before its minute (sums of at most a few hundred, 24 and 60 rows), and a
/// count of the riders within r's minute. Counting everyone above instead walked the rank index
/// as far as the rank (34–42 requests a second with 222,709 riders on the board).
enum TallyCounts {
    /// The slots of a time, as the triggers compute them: whole minutes since 1970 of
    /// `max(reachedAt, 0)`, truncated (SQLite's `CAST` of a real), and the hour and day of
    /// that minute by integer division, so that the levels nest.
    static func slots(_ reachedAt: Double) -> (day: Int64, hour: Int64, minute: Int64) {
        let minutes = max(reachedAt, 0) / 60
        // SQLite's CAST saturates; no time the server writes comes near it.
        let minute = minutes < 9.0e18 ? Int64(minutes) : Int64.max
        return (minute / 1440, minute / 60, minute)
    }

    private static let board = "metric = :metric AND scope = :scope AND period = :period"

    /// The riders at higher values, and at the same value in earlier days, hours of the day and
    /// minutes of the hour.
    static let sums = """
        SELECT (SELECT total(riders) FROM tally_counts WHERE \(board) AND level = 0 AND value > :value)
             + (SELECT total(riders) FROM tally_counts WHERE \(board) AND level = 1 AND value = :value AND slot < :day)
             + (SELECT total(riders) FROM tally_counts WHERE \(board) AND level = 2 AND value = :value AND slot >= :day * 24 AND slot < :hour)
             + (SELECT total(riders) FROM tally_counts WHERE \(board) AND level = 3 AND value = :value AND slot >= :hour * 60 AND slot < :minute)
        """

    /// The riders at the same value ahead within the minute: they lie between its first second
    /// (less one, for the rounding of the division) and the rider's own time on the rank index;
    /// the slot's own test decides.
    static let within = """
        SELECT count(*) FROM tallies WHERE \(board) AND value = :value AND reached_at <= :reached AND reached_at >= :from
            AND CAST(max(reached_at, 0) / 60 AS INTEGER) = :minute AND (reached_at < :reached OR user_id < :rider)
        """

    /// The blocked riders ahead: they are few, each one's tally looked up (CROSS JOIN keeps the
    /// blocks outside).
    static let blockedAhead = """
        SELECT count(*) FROM (\(Store.blockedEitherWay)) b CROSS JOIN tallies t
            ON t.metric = :metric AND t.scope = :scope AND t.period = :period AND t.user_id = b.blocked
        WHERE t.value > :value OR (t.value = :value AND (t.reached_at < :reached OR (t.reached_at = :reached AND t.user_id < :rider)))
        """

    /// Riders of the board in `arguments` (`:metric`, `:scope`, `:period`) ranked ahead of a
    /// place on it, less those blocked either way by the viewer `:me`.
    static func ahead(_ place: LeaderboardPosition, _ arguments: StatementArguments, _ db: Database) throws -> Int {
        let (day, hour, minute) = Self.slots(place.reachedAt)
        let sums = try db.cachedStatement(sql: Self.sums)
        let within = try db.cachedStatement(sql: Self.within)
        let blocked = try db.cachedStatement(sql: Self.blockedAhead)
        let all = arguments + [
            "value": place.value, "reached": place.reachedAt, "rider": place.user.rawValue, "day": day, "hour": hour, "minute": minute,
            "from": minute == 0 ? -Double.greatestFiniteMagnitude : Double(minute) * 60 - 1,
        ]
        let counted = try Double.fetchOne(sums, arguments: all) ?? 0
        let tied = try Int.fetchOne(within, arguments: all) ?? 0
        let hidden = try Int.fetchOne(blocked, arguments: all) ?? 0
        return Int(counted) + tied - hidden
    }
}
