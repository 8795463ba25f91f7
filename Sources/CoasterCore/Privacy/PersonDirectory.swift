import CMemory

/// People by id, for the lookups on the nearby path.
///
/// User ids are small and dense (SQLite hands them out in order), so a person is one array index
/// away instead of a hash and a probe into a table of a million entries. Ids far beyond the
/// population (an imported id, a test's arbitrary one) go to a side table, so a stray large id
/// cannot make the array huge.
///
/// The directory also knows which friendships it holds one way only: a person listing a friend
/// who is absent or does not list them back. The store keeps friendships symmetric, so the set is
/// empty unless the directory has been refreshed for one side of a change and not yet the other;
/// keeping it exact on every change lets ``friends(of:)`` hand out mutual friends without looking
/// into each friend's own list (a cache miss per friend with a million people).
public struct PersonDirectory: Sendable {
    private var slots: ContiguousArray<PersonState?> = []
    /// Each slot's ``NearbyCard`` (``NearbyCard/empty`` for an empty slot), what the nearby rules
    /// read first: half a cache line per friend instead of the slot and three or four of the record.
    private var cards: ContiguousArray<NearbyCard> = []
    /// Each slot's first friend ids, where the record keeps them (``FriendListHint``): with a
    /// million people the slot, the record and its friend list are three waits on memory one after
    /// another before the first card can be asked for; through this, two (see `friendsInPlace`).
    private var lists: ContiguousArray<FriendListHint> = []
    private var sparse: [UserID: PersonState] = [:]
    /// Person → friends they list who are absent or do not list them back. No empty entries.
    private var oneWay: [UserID: UserIDSet] = [:]
    public private(set) var count = 0

    public init() {}

    /// Everyone at once: the one-way friendships are worked out once, after everyone is in, rather
    /// than on the way (where every friend not yet loaded would be one way for a while).
    ///
    /// Loaded from one snapshot of the store every friendship is held both ways, and looking up
    /// every tie in the friend's own list (50 million at a million users) would take seconds of
    /// cache misses. So one pass in id order first adds a hash of each tie, signed by its
    /// direction: the two directions of a friendship cancel out, and only if something is left over
    /// (a friendship held one way, or a friend who is not here) is every tie looked up.
    public init(_ people: some Sequence<PersonState>) {
        for person in people { self.place(person, at: person.id) }
        var balance: UInt64 = 0
        for case let person? in self.slots { balance &+= Self.balance(of: person) }
        for person in self.sparse.values { balance &+= Self.balance(of: person) }
        guard balance != 0 else { return }
        for case let person? in self.slots { self.findOneWay(person) }
        for person in self.sparse.values { self.findOneWay(person) }
    }

    /// The sum of ``tieHash(_:_:)`` over a person's ties, plus for ties to a larger id, minus for
    /// ties to a smaller one.
    private static func balance(of person: PersonState) -> UInt64 {
        var sum: UInt64 = 0
        let id = person.id
        for friend in person.friends where friend != id {
            sum = id < friend ? sum &+ Self.tieHash(id, friend) : sum &- Self.tieHash(friend, id)
        }
        return sum
    }

    /// A well-mixed, nonzero 64-bit hash of an ordered pair.
    static func tieHash(_ a: UserID, _ b: UserID) -> UInt64 {
        SeededGenerator.mix(UInt64(bitPattern: a.rawValue) &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(bitPattern: b.rawValue)) | 1
    }

    private mutating func findOneWay(_ person: PersonState) {
        for friend in person.friends where !self.lists(friend, person.id) {
            self.oneWay[person.id, default: []].insert(friend)
        }
    }

    /// Ids up to this stay in the array: a million, or four times the population.
    private var denseLimit: Int { max(1 << 20, 4 * self.count) }

    public subscript(id: UserID) -> PersonState? {
        get {
            let i = Int(id.rawValue)
            if i >= 0, i < self.slots.count, let person = self.slots[i] { return person }
            return self.sparse.isEmpty ? nil : self.sparse[id]
        }
        set {
            let before = self[id]?.friends ?? []
            self.place(newValue, at: id)
            let after = newValue?.friends ?? []
            // A fix moves a person without touching their friends: nothing to recheck. Otherwise
            // the ties that appeared or went (all of them when the person arrives or leaves).
            if before == after { return }
            for other in Set(before).symmetricDifference(after) where other != id { self.recheckTie(id, other) }
        }
    }

    private mutating func place(_ person: PersonState?, at id: UserID) {
        let i = Int(id.rawValue)
        let had = self[id] != nil
        if i >= 0, i < max(self.slots.count, self.denseLimit) {
            // An id may have been sparse while the population was small: one home at a time.
            if !self.sparse.isEmpty { self.sparse[id] = nil }
            if i >= self.slots.count, person != nil {
                // Grow geometrically so that loading in id order is amortised O(1).
                let grown = max(i + 1, self.slots.count * 2) - self.slots.count
                self.slots.append(contentsOf: repeatElement(nil, count: grown))
                self.cards.append(contentsOf: repeatElement(.empty, count: grown))
                self.lists.append(contentsOf: repeatElement(.none, count: grown))
            }
            if i < self.slots.count {
                self.slots[i] = person
                self.cards[i] = person.map(NearbyCard.init) ?? .empty
                // The slot keeps the record, which keeps the list: the hint lives as long.
                self.lists[i] = person?.friends.firstNarrow(limit: FriendsInPlace.prefetchDistance) ?? .none
            }
        } else {
            self.sparse[id] = person
        }
        self.count += (person != nil ? 1 : 0) - (had ? 1 : 0)
    }

    /// The friend ids slot `id`'s hint leads to (`nil` outside the array): the first of the
    /// record's ids below 2³², up to ``FriendsInPlace/prefetchDistance``. For tests.
    func hintedFriends(of id: UserID) -> [UserID]? {
        let i = Int(id.rawValue)
        guard i >= 0, i < self.lists.count else { return nil }
        let hint = self.lists[i]
        guard let base = hint.base else { return [] }
        return (0..<hint.count).map { UserID(Int64(base[$0])) }
    }

    /// Whether `a` is here and lists `b` as a friend.
    private func lists(_ a: UserID, _ b: UserID) -> Bool { self[a]?.friends.contains(b) ?? false }

    /// Brings both directions of the tie between `a` and `b` up to date in ``oneWay``.
    private mutating func recheckTie(_ a: UserID, _ b: UserID) {
        let ab = self.lists(a, b), ba = self.lists(b, a)
        self.mark(a, b, oneWay: ab && !ba)
        self.mark(b, a, oneWay: ba && !ab)
    }

    private mutating func mark(_ a: UserID, _ b: UserID, oneWay: Bool) {
        if oneWay {
            self.oneWay[a, default: []].insert(b)
        } else if self.oneWay[a]?.remove(b) != nil, self.oneWay[a]?.isEmpty == true {
            self.oneWay[a] = nil
        }
    }

    /// Friendships held one way only, as (person, friend) pairs: empty in a consistent directory.
    public var oneWayFriendships: [(UserID, UserID)] {
        self.oneWay.sorted { $0.key < $1.key }.flatMap { entry in entry.value.map { (entry.key, $0) } }
    }

    /// The person with `id` and their mutual, unblocked friends in the directory, in id order: a
    /// snapshot for the nearby rules (copy-on-write, one reference count per friend).
    public func friends(of id: UserID) -> MutualFriends? {
        guard let person = self[id] else { return nil }
        self.prefetchFriends(of: person)
        let oneWay = self.oneWay[id]
        var friends: [PersonState] = []
        friends.reserveCapacity(person.friends.count)
        for friend in person.friends where !person.blocks.contains(friend) && !(oneWay?.contains(friend) ?? false) {
            if let state = self[friend] { friends.append(state) }
        }
        return MutualFriends(viewer: person, mutual: friends)
    }

    /// Whether the directory holds `id`: their card says so, without the reference count that
    /// copying their record out (``subscript(_:)``) takes and drops.
    public func contains(_ id: UserID) -> Bool {
        let i = Int(id.rawValue)
        if i >= 0, i < self.cards.count, self.cards[i].isSomeone { return true }
        return !self.sparse.isEmpty && self.sparse[id] != nil
    }

    /// Calls `body` with the person with `id` and their mutual, unblocked friends read in place:
    /// no snapshot, and no reference count taken on any friend (a snapshot's counts were a fifth
    /// of a nearby query). `nil` without calling `body` if there is no such person. The directory
    /// must not change while `body` runs, so its owner calls this under its lock.
    public func withFriends<R>(of id: UserID, _ body: (FriendsInPlace) -> R) -> R? {
        self.friendsInPlace(of: id).map(body)
    }

    /// The group ``withFriends(of:_:)`` hands out, made outside that generic function: called
    /// from another module it runs unspecialised, and its buffer reads went through generic
    /// metadata on every query.
    private func friendsInPlace(of id: UserID) -> FriendsInPlace? {
        // The first cards are asked for before anyone reads one (see `prefetchFriends`), the rest
        // as they are read (``FriendsInPlace/forEachCard(_:)``). Their ids are read through the
        // slot's hint, whose wait on memory overlaps the slot's, and the list's the record's: at a
        // million people 11 % more queries a second than through the record (`coasterbench engine
        // --only nearby`, three alternating runs each).
        let i = Int(id.rawValue)
        var hinted = false
        if i >= 0, i < self.lists.count {
            self.slots.withUnsafeBufferPointer { slots in
                if let record = slots[i]?.address { PersonState.prefetch(at: record, extent: PersonState.nearbyExtent) }
            }
            let hint = self.lists[i]
            if let base = hint.base {
                self.cards.withUnsafeBufferPointer { cards in
                    for k in 0..<hint.count { FriendsInPlace.prefetch(UserID(Int64(base[k])), in: cards) }
                }
                hinted = true
            }
        }
        guard let person = self[id] else { return nil }
        if !hinted {
            // In the side table, or no friend id below 2³²: through the record.
            self.cards.withUnsafeBufferPointer { cards in
                for friend in person.friends.prefix(FriendsInPlace.prefetchDistance) { FriendsInPlace.prefetch(friend, in: cards) }
            }
        }
        return FriendsInPlace(viewer: person, slots: self.slots, cards: self.cards, sparse: self.sparse, oneWay: self.oneWay[id])
    }

    /// Asks for each friend's record before anyone reads it: the reference counts, or the rules'
    /// reads, would each wait for its record to arrive from memory (with a million people most are
    /// in no cache), one after the other. Prefetches do not wait: the slots holding the records'
    /// addresses are all asked for at once, then the records, so they arrive together.
    private func prefetchFriends(of person: PersonState) {
        let extent = PersonState.nearbyExtent
        self.slots.withUnsafeBufferPointer { slots in
            guard let base = slots.baseAddress else { return }
            for friend in person.friends {
                let i = Int(friend.rawValue)
                if i >= 0, i < slots.count { cmemory_prefetch(base + i) }
            }
            for friend in person.friends {
                let i = Int(friend.rawValue)
                if i >= 0, i < slots.count, let record = slots[i]?.address { PersonState.prefetch(at: record, extent: extent) }
            }
        }
    }
}

/// A viewer and the friends the location rules may show them: friends both ways, blocked neither
/// way. A snapshot (``MutualFriends``) or a directory read in place (``FriendsInPlace``).
public protocol FriendGroup {
    var viewer: PersonState { get }
    /// At most this many friends: room to reserve for answers.
    var friendCount: Int { get }
    /// Calls `body` with each friend, in id order. Each friend's record must outlive the group:
    /// the rules keep records' addresses past `body` (``PersonState/borrow(at:_:)``).
    func forEachFriend(_ body: (PersonState) -> Void)
    /// Calls `body` with each friend's id and ``NearbyCard``, in id order. The cards' records
    /// must outlive the group, like the records `forEachFriend` lends.
    func forEachCard(_ body: (UserID, NearbyCard) -> Void)
}

/// The viewer's mutual, unblocked friends read straight from a ``PersonDirectory``'s storage.
/// Made only by ``PersonDirectory/withFriends(of:_:)`` and valid only while its `body` runs.
public struct FriendsInPlace: FriendGroup {
    public let viewer: PersonState
    fileprivate let slots: ContiguousArray<PersonState?>
    fileprivate let cards: ContiguousArray<NearbyCard>
    fileprivate let sparse: [UserID: PersonState]
    fileprivate let oneWay: UserIDSet?

    public var friendCount: Int { self.viewer.friends.count }

    /// The same friends as ``PersonDirectory/friends(of:)`` lists, found the same way (a slot,
    /// else the side table), each lent to `body` without a reference count.
    @inline(__always)
    public func forEachFriend(_ body: (PersonState) -> Void) {
        self.slots.withUnsafeBufferPointer { slots in
            self.forEachMutual { friend in
                let i = Int(friend.rawValue)
                if i >= 0, i < slots.count, let record = slots[i]?.address {
                    PersonState.borrow(at: record, body)
                } else if !self.sparse.isEmpty, let person = self.sparse[friend] {
                    body(person)
                }
            }
        }
    }

    /// How many friends ahead of the one read its card is asked for.
    ///
    /// Asked for all at once (48 friends on average in the bench world), the cards ran past what
    /// a core can have on its way from memory, and with a million people, most from memory, the
    /// query waited: nearby by id at 1M 4.5 µs p50, against 3.5–3.7 µs asking 8 or 16 ahead and
    /// 4.3–4.4 µs asking 32 ahead (`coasterbench engine --only nearby`, two rounds each).
    static let prefetchDistance = 16

    /// Asks for the card of `id`, if it is in the array, without waiting for it.
    @inline(__always)
    static func prefetch(_ id: UserID, in cards: UnsafeBufferPointer<NearbyCard>) {
        let i = Int(id.rawValue)
        if i >= 0, i < cards.count, let base = cards.baseAddress { cmemory_prefetch(base + i) }
    }

    /// The same friends, by card: the directory's (no read of the slot or the record), or for one
    /// in the side table, made from the record. Each card is asked for ``prefetchDistance``
    /// friends before it is read (the first ones by ``PersonDirectory/withFriends(of:_:)``).
    @inline(__always)
    public func forEachCard(_ body: (UserID, NearbyCard) -> Void) {
        self.cards.withUnsafeBufferPointer { cards in
            var ahead = self.viewer.friends.makeIterator()
            for _ in 0..<Self.prefetchDistance { _ = ahead.next() }
            self.forEachMutual { friend in
                // A friend skipped (blocked, held one way) takes no step here, so each skip brings
                // the asks one friend closer: rare, and costing at most a late ask.
                if let next = ahead.next() { Self.prefetch(next, in: cards) }
                let i = Int(friend.rawValue)
                if i >= 0, i < cards.count, cards[i].isSomeone {
                    body(friend, cards[i])
                } else if !self.sparse.isEmpty, let person = self.sparse[friend] {
                    body(friend, NearbyCard(person))
                }
            }
        }
    }

    /// Each friend of the viewer's the rules may show: not blocked, not held one way.
    @inline(__always)
    private func forEachMutual(_ body: (UserID) -> Void) {
        for friend in self.viewer.friends where !self.viewer.blocks.contains(friend) && !(self.oneWay?.contains(friend) ?? false) {
            body(friend)
        }
    }
}

/// A viewer and those of their friends whom the location rules may show at all: friends both
/// ways, blocked neither way. Made by checking each candidate (``init(viewer:among:)``) or by a
/// ``PersonDirectory``, which knows its one-way friendships.
public struct MutualFriends: FriendGroup, Sendable {
    public let viewer: PersonState
    public let people: [PersonState]

    /// Keeps the candidates who are mutual, unblocked friends of `viewer`.
    public init(viewer: PersonState, among candidates: [PersonState]) {
        self.viewer = viewer
        self.people = candidates.filter { $0.isMutualFriend(of: viewer) }
    }

    init(viewer: PersonState, mutual people: [PersonState]) {
        self.viewer = viewer
        self.people = people
    }

    public var friendCount: Int { self.people.count }

    /// Calls `body` with each friend's record lent in place: iterating ``people`` would copy each
    /// record (an atomic reference count up and down per friend).
    @inline(__always)
    public func forEachFriend(_ body: (PersonState) -> Void) {
        self.people.withUnsafeBufferPointer { people in
            for i in people.indices { PersonState.borrow(at: people[i].address, body) }
        }
    }

    /// Each friend's card, made from their record.
    public func forEachCard(_ body: (UserID, NearbyCard) -> Void) {
        self.people.withUnsafeBufferPointer { people in
            for i in people.indices { body(people[i].id, NearbyCard(people[i])) }
        }
    }
}
