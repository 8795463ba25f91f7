import CoasterCore
import CoasterStore
import Foundation

/// The live directory: every user's latest position, visits, sharing settings and friends, in
/// memory, so that nearby questions cost O(friends) and no database hop.
///
/// The store stays the record. The directory is loaded from it at start; fix batches update their
/// user directly from what the transaction wrote, and the rarer changes (friendships, blocks,
/// sharing settings, check-ins, registrations) reload the users they touched from the store.
public final class People: Sendable {
    private struct Book: Sendable {
        var byID = PersonDirectory()
        /// Who has an open visit to each park, for "people nearby".
        var visitors: [ParkID: Set<UserID>] = [:]
        /// The zone sets people are in, one copy of each: fix batches and reloads make new ones.
        var zoneSets = ZoneSets()

        init() {}

        /// Everyone, their zones the copies kept here (the store shares a load's sets already, so
        /// they become those copies), marked in `index`.
        init(_ everyone: [PersonState], index: FenceIndex) {
            var everyone = everyone
            // In place: each record is the array's alone, so placing it copies nothing.
            for i in everyone.indices { self.zoneSets.place(&everyone[i], in: everyone[i].zones, index: index) }
            self.byID = PersonDirectory(everyone)
            for person in everyone {
                for (park, _) in person.openVisits { self.visitors[park, default: []].insert(person.id) }
            }
        }

        mutating func put(_ person: PersonState) {
            if let old = self.byID[person.id] {
                for (park, _) in old.openVisits { self.visitors[park]?.remove(person.id) }
            }
            self.byID[person.id] = person
            for (park, _) in person.openVisits { self.visitors[park, default: []].insert(person.id) }
        }
    }

    /// Read by every nearby query, on both event loops at once; changed by fix batches and reloads.
    private let book = ReadWriteLock(Book())
    private let store: any Store
    /// Their index in force when people are loaded or move is the one their zones are marked in
    /// (``PersonState/markZones(in:)``). After a park import the marks are stale and nearby answers
    /// walk the zones again, until each person's next fix or reload.
    private let fences: Fences

    public init(store: any Store, fences: Fences) {
        self.store = store
        self.fences = fences
    }

    /// Loads every user from the store.
    public func load() async throws {
        let everyone = try await self.store.personStates()
        let book = Book(everyone, index: self.fences.index)
        self.book.write { $0 = book }
    }

    /// Reloads the given users from the store after a change that touched them.
    public func refresh(_ ids: UserID...) async throws {
        let fresh = try await self.store.personStates(only: ids)
        let index = self.fences.index
        self.book.write { book in
            for var person in fresh {
                book.zoneSets.place(&person, in: person.zones, index: index)
                book.put(person)
            }
        }
    }

    /// Applies what a fix batch wrote for `user`, if the directory holds them.
    public func apply(_ user: UserID, _ batch: FixBatch) {
        let index = self.fences.index
        self.book.write { book in
            guard var person = book.byID[user] else { return }
            person.latest = batch.state.latest
            person.visits = batch.visits
            book.zoneSets.place(&person, in: batch.state.zones, index: index)
            book.put(person)
        }
    }

    public func person(_ id: UserID) -> PersonState? {
        self.book.read { $0.byID[id] }
    }

    /// A user, loaded from the store if the directory has not seen them yet (created by the
    /// command line, or by another process, since the directory was loaded).
    public func person(loading id: UserID) async throws -> PersonState? {
        if let person = self.person(id) { return person }
        try await self.refresh(id)
        return self.person(id)
    }

    /// The viewer and a snapshot of their mutual, unblocked friends, in id order (copy-on-write: no
    /// deep copies under the lock, one reference count per friend).
    public func friends(of id: UserID) async throws -> MutualFriends? {
        guard try await self.person(loading: id) != nil else { return nil }
        return self.book.read { $0.byID.friends(of: id) }
    }

    /// `body`'s answer for the viewer and their mutual, unblocked friends read in place, under
    /// the directory's lock (held for the whole of `body`: a nearby query is a few microseconds,
    /// about 0.1 µs a friend, and a snapshot's reference counts were a fifth of it; nearby is
    /// rate-limited per user, so even a user with thousands of friends holds it for a millisecond
    /// at most a few times a second). `nil` if there is no such user.
    public func withFriends<R: Sendable>(of id: UserID, _ body: (FriendsInPlace) -> R) async throws -> R? {
        guard try await self.person(loading: id) != nil else { return nil }
        return self.withFriendsInPlace(of: id, body)
    }

    /// The same for a person the directory holds now: `nil` if it does not (nothing is loaded).
    public func withFriendsInPlace<R: Sendable>(of id: UserID, _ body: (FriendsInPlace) -> R) -> R? {
        self.book.read { $0.byID.withFriends(of: id, body) }
    }

    /// Whether the directory holds `id` now.
    public func holds(_ id: UserID) -> Bool {
        self.book.read { $0.byID.contains(id) }
    }

    /// Everyone with an open visit to any of `parks`.
    public func visitors(of parks: Set<ParkID>) -> [PersonState] {
        self.book.read { book in
            var ids: Set<UserID> = []
            for park in parks { ids.formUnion(book.visitors[park] ?? []) }
            return ids.compactMap { book.byID[$0] }
        }
    }

    public var count: Int { self.book.read { $0.byID.count } }
}
