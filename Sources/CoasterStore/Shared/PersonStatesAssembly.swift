import CoasterCore
import Foundation

/// The live directory's view of users (``PeopleStore/personStates(only:)``), put together from a
/// store's rows as they stream in: users (with their latest position), then open visits and
/// sharing overrides, then accepted friendships, then blocks.
///
/// Both stores feed it the same rows, so they build the directory the same way; how memory is used
/// matters here (a million users, 24 million friendship ties), hence the shapes below.
struct PersonStatesAssembly {
    private var people: [UserID: PersonState] = [:]
    private var zoneSets = ZoneSetsByLine()
    private var ties: Ties
    private var degrees: Degrees?

    /// - Parameter everyone: whether every user is loaded (the rows come in large numbers) or only a few.
    init(everyone: Bool) {
        self.ties = Ties(everyone: everyone)
    }

    /// A user and their latest position; `zones` is `track_state.zones` (ids one a line).
    mutating func addUser(_ id: UserID, username: String, displayName: String, latest: AcceptedFix?, zones: String?,
                          sharing: SharingSettings, discoverable: Bool) {
        self.people[id] = PersonState(
            id: id, username: username, displayName: displayName, latest: latest, zones: self.zoneSets.set(zones),
            sharing: sharing, discoverable: discoverable)
    }

    /// An open visit of a user already added.
    mutating func addOpenVisit(_ user: UserID, park: ParkID, lastEvidence: Date) {
        self.people[user]?.visits[park] = lastEvidence
    }

    /// A sharing override a user already added set for `friend`.
    mutating func addOverride(_ user: UserID, friend: UserID, _ override: SharingOverride) {
        self.people[user]?.sharing.overrides[friend] = override
    }

    /// An accepted friendship, after every user was added; ``linkFriends()`` follows the last one.
    ///
    /// Friend lists are allocated once, at their final size: the ties are held (8 bytes each, in
    /// blocks the allocator maps and unmaps whole), counted per person, and each list is then
    /// filled. Grown tie by tie, each list left four or five shorter buffers behind, between live
    /// records where the allocator cannot give the pages back.
    mutating func addFriendship(_ a: UserID, _ b: UserID) {
        if self.degrees == nil { self.degrees = self.countingDegrees() }
        guard self.ties.append(a, b) else {
            // An id outside 0..<2³² (ids count up from 1; only an imported id could be).
            self.people[a]?.friends.insert(b)
            self.people[b]?.friends.insert(a)
            return
        }
        self.degrees!.add(a)
        self.degrees!.add(b)
    }

    /// Fills every friend list from the ties held, at its final size, after the last friendship.
    mutating func linkFriends() {
        do {
            let degrees = self.degrees ?? self.countingDegrees()
            let ties = self.ties
            self.degrees = nil
            self.ties = Ties(everyone: false)
            self.changeEveryone { id, person in
                let degree = degrees[id]
                if degree > 0 { person.friends.reserveCapacity(degree) }
            }
            ties.forEach { a, b in
                self.people[a]?.friends.insert(b)
                self.people[b]?.friends.insert(a)
            }
        }
        self.changeEveryone { _, person in person.friends.compact() }
    }

    /// A block, either way.
    mutating func addBlock(blocker: UserID, blocked: UserID) {
        self.people[blocker]?.blocks.insert(blocked)
        self.people[blocked]?.blocks.insert(blocker)
    }

    /// Every user added, in no particular order.
    var states: [PersonState] { Array(self.people.values) }

    private func countingDegrees() -> Degrees {
        Degrees(people: self.people.count, largestID: self.people.keys.lazy.map(\.rawValue).max() ?? 0)
    }

    /// Everyone changed in place, by index: a loop over `people.keys` held the dictionary's
    /// storage, so the first change copied the storage, every record was then shared with the old
    /// copy and copied in turn, and the first copies freed at the end left a million holes behind.
    private mutating func changeEveryone(_ change: (UserID, inout PersonState) -> Void) {
        var i = self.people.startIndex
        while i != self.people.endIndex {
            let id = self.people.keys[i]
            change(id, &self.people.values[i])
            i = self.people.index(after: i)
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

/// Ties per person while friend lists are counted: in an array by id, as ids are handed out (from
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
