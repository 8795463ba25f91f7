import CoasterCore
import Foundation
import GRDB

extension SpatiaLiteStore {
    /// The live directory's view of users: every user, or only `ids`.
    ///
    /// Rows are read through cursors, one at a time: fetching a million users' 50 million friendship
    /// rows as an array of `Row`s first would hold gigabytes at once.
    public func personStates(only ids: [UserID]? = nil) async throws -> [PersonState] {
        try await self.pool.read { db in
            let filter: (String) -> String = { column in
                guard let ids else { return "1" }
                return ids.isEmpty ? "0" : "\(column) IN (\(ids.map { String($0.rawValue) }.joined(separator: ",")))"
            }
            var people: [UserID: PersonState] = [:]
            var zoneSets = ZoneSetsByLine()
            try Row.fetchCursor(db, sql: """
                SELECT u.id, u.username, u.display_name, u.ghost, u.ghost_until, u.precision, u.discoverable,
                       t.lat, t.lon, t.accuracy, t.recorded_at, t.zones
                FROM users u LEFT JOIN track_state t ON t.user_id = u.id WHERE \(filter("u.id"))
                """).forEach { row in
                let id = UserID(row["id"] as Int64)
                let latest: AcceptedFix? = (row["recorded_at"] as Double?).map {
                    AcceptedFix(position: Coordinate(lat: row["lat"], lon: row["lon"]), accuracy: row["accuracy"], recordedAt: Date(timeIntervalSince1970: $0))
                }
                people[id] = PersonState(
                    id: id, username: row["username"], displayName: row["display_name"], latest: latest,
                    zones: zoneSets.set(row["zones"]),
                    sharing: Self.sharing(row),
                    discoverable: row["discoverable"])
            }
            try Row.fetchCursor(db, sql: "SELECT user_id, park_id, last_evidence_at FROM visits WHERE left_at IS NULL AND \(filter("user_id"))").forEach { row in
                people[UserID(row["user_id"] as Int64)]?.visits[ParkID(rawValue: row["park_id"])] = Date(timeIntervalSince1970: row["last_evidence_at"])
            }
            try Row.fetchCursor(db, sql: "SELECT user_id, friend_id, precision, hidden FROM sharing_overrides WHERE \(filter("user_id"))").forEach { row in
                people[UserID(row["user_id"] as Int64)]?.sharing.overrides[UserID(row["friend_id"] as Int64)] = Self.override(row)
            }
            // Everyone changed in place, by index: a loop over `people.keys` held the dictionary's
            // storage, so the first change copied the storage, every record was then shared with the
            // old copy and copied in turn, and the first copies freed at the end left a million
            // holes behind.
            func changeEveryone(_ change: (UserID, inout PersonState) -> Void) {
                var i = people.startIndex
                while i != people.endIndex {
                    let id = people.keys[i]
                    change(id, &people.values[i])
                    i = people.index(after: i)
                }
            }
            // Friend lists are allocated once, at their final size: the ties are read into memory
            // (8 bytes each, in blocks the allocator maps and unmaps whole), counted per person, and
            // each list is then filled. Grown tie by tie, each list left four or five shorter
            // buffers behind, between live records where the allocator cannot give the pages back.
            do {
                var ties = Ties(everyone: ids == nil)
                var degrees = Degrees(people: people.count, largestID: people.keys.lazy.map(\.rawValue).max() ?? 0)
                try Row.fetchCursor(db, sql: """
                    SELECT requester, addressee FROM friendships WHERE status = 'accepted' AND (\(filter("requester")) OR \(filter("addressee")))
                    """).forEach { row in
                    let a = UserID(row[0] as Int64), b = UserID(row[1] as Int64)
                    guard ties.append(a, b) else {
                        // An id outside 0..<2³² (SQLite counts up from 1; only an imported id could be).
                        people[a]?.friends.insert(b)
                        people[b]?.friends.insert(a)
                        return
                    }
                    degrees.add(a)
                    degrees.add(b)
                }
                changeEveryone { id, person in
                    let degree = degrees[id]
                    if degree > 0 { person.friends.reserveCapacity(degree) }
                }
                ties.forEach { a, b in
                    people[a]?.friends.insert(b)
                    people[b]?.friends.insert(a)
                }
            }
            changeEveryone { _, person in person.friends.compact() }
            try Row.fetchCursor(db, sql: "SELECT blocker, blocked FROM blocks WHERE \(filter("blocker")) OR \(filter("blocked"))").forEach { row in
                let a = UserID(row["blocker"] as Int64), b = UserID(row["blocked"] as Int64)
                people[a]?.blocks.insert(b)
                people[b]?.blocks.insert(a)
            }
            return Array(people.values)
        }
    }
}

/// The zone sets of a load, one per distinct line of `track_state.zones` (its ids sorted, one a
/// line), shared by everyone inside those zones (see ``ZoneSets``): made for every row, a million
/// people's sets were a million sets and more zone id strings of their own.
private struct ZoneSetsByLine {
    private var known: [String: Set<ZoneID>] = [:]

    mutating func set(_ lines: String?) -> Set<ZoneID> {
        guard let lines, !lines.isEmpty else { return [] }
        if let zones = self.known[lines] { return zones }
        let zones = Set(lines.split(separator: "\n").map { ZoneID(rawValue: String($0)) })
        self.known[lines] = zones
        return zones
    }
}

/// Friendship ties held while the directory's friend lists are counted and filled: two 32-bit ids
/// in 8 bytes. Loading everyone, in blocks of 4M ties: 32 MB, above glibc's largest mmap threshold,
/// so each block is mapped on its own and unmapped when dropped, leaving no hole in the heap (24M
/// ties at a million users: 6 blocks). Refreshing a few users, in blocks of 1,024.
private struct Ties {
    private let blockSize: Int
    private var blocks: [ContiguousArray<UInt64>] = []

    init(everyone: Bool) {
        self.blockSize = everyone ? 1 << 22 : 1 << 10
    }

    /// Adds the tie if both ids fit in 32 bits; `false` if not.
    mutating func append(_ a: UserID, _ b: UserID) -> Bool {
        guard let a32 = UInt32(exactly: a.rawValue), let b32 = UInt32(exactly: b.rawValue) else { return false }
        if self.blocks.isEmpty || self.blocks[self.blocks.count - 1].count == self.blockSize {
            var block = ContiguousArray<UInt64>()
            block.reserveCapacity(self.blockSize)
            self.blocks.append(block)
        }
        self.blocks[self.blocks.count - 1].append(UInt64(a32) << 32 | UInt64(b32))
        return true
    }

    func forEach(_ body: (UserID, UserID) -> Void) {
        for block in self.blocks {
            for tie in block { body(UserID(Int64(tie >> 32)), UserID(Int64(tie & 0xFFFF_FFFF))) }
        }
    }
}

/// Ties per person while friend lists are counted: in an array by id, as SQLite hands ids out (from
/// 1, densely), and in a dictionary for ids beyond four times the population. A dictionary for all
/// took 48 million hashed updates at a million users: the server started in 43–50 s against 41–44 s
/// with the array (alternating runs on one store). Counts only size the lists; a wrong one would
/// cost memory, not answers.
private struct Degrees {
    private var dense: [Int32]
    private var sparse: [UserID: Int] = [:]

    init(people: Int, largestID: Int64) {
        let limit = Int64(4 * people + 1024)
        self.dense = Array(repeating: 0, count: people == 0 ? 0 : Int(max(0, min(largestID, limit - 1))) + 1)
    }

    mutating func add(_ id: UserID) {
        if id.rawValue >= 0, id.rawValue < Int64(self.dense.count) {
            self.dense[Int(id.rawValue)] += 1
        } else {
            self.sparse[id, default: 0] += 1
        }
    }

    subscript(id: UserID) -> Int {
        id.rawValue >= 0 && id.rawValue < Int64(self.dense.count) ? Int(self.dense[Int(id.rawValue)]) : self.sparse[id] ?? 0
    }
}
