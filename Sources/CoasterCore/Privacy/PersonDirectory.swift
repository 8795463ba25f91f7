/// People by id, for the lookups on the nearby path.
///
/// User ids are small and dense (SQLite hands them out in order), so a person is one array index
/// away instead of a hash and a probe into a table of a million entries. Ids far beyond the
/// population (an imported id, a test's arbitrary one) go to a side table, so a stray large id
/// cannot make the array huge.
public struct PersonDirectory: Sendable {
    private var slots: ContiguousArray<PersonState?> = []
    private var sparse: [UserID: PersonState] = [:]
    public private(set) var count = 0

    public init() {}

    /// Ids up to this stay in the array: a million, or four times the population.
    private var denseLimit: Int { max(1 << 20, 4 * self.count) }

    public subscript(id: UserID) -> PersonState? {
        get {
            let i = Int(id.rawValue)
            if i >= 0, i < self.slots.count, let person = self.slots[i] { return person }
            return self.sparse.isEmpty ? nil : self.sparse[id]
        }
        set {
            let i = Int(id.rawValue)
            let had = self[id] != nil
            if i >= 0, i < max(self.slots.count, self.denseLimit) {
                // An id may have been sparse while the population was small: one home at a time.
                if !self.sparse.isEmpty { self.sparse[id] = nil }
                if i >= self.slots.count, newValue != nil {
                    // Grow geometrically so that loading in id order is amortised O(1).
                    self.slots.append(contentsOf: repeatElement(nil, count: max(i + 1, self.slots.count * 2) - self.slots.count))
                }
                if i < self.slots.count { self.slots[i] = newValue }
            } else {
                self.sparse[id] = newValue
            }
            self.count += (newValue != nil ? 1 : 0) - (had ? 1 : 0)
        }
    }

    /// The states of `person`'s friends that are in the directory, in id order: a snapshot for the
    /// nearby rules (copy-on-write, one reference count per friend).
    public func friends(of person: PersonState) -> [PersonState] {
        var friends: [PersonState] = []
        friends.reserveCapacity(person.friends.count)
        for id in person.friends {
            if let friend = self[id] { friends.append(friend) }
        }
        return friends
    }
}
