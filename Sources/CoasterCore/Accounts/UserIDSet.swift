/// A set of user ids kept as one sorted array: a fifth of a hashed `Set`'s memory for the ~50
/// friends a user has (the live directory holds one per user; at a million users the difference
/// is most of a gigabyte), binary search for `contains`, and iteration in id order.
public struct UserIDSet: Hashable, Sendable, Sequence, ExpressibleByArrayLiteral, CustomStringConvertible {
    private var ids: ContiguousArray<UserID>

    public init() { self.ids = [] }

    public init(_ ids: some Sequence<UserID>) {
        var sorted = ContiguousArray(ids)
        sorted.sort()
        var unique = ContiguousArray<UserID>()
        unique.reserveCapacity(sorted.count)
        for id in sorted where unique.last != id { unique.append(id) }
        self.ids = unique
    }

    public init(arrayLiteral elements: UserID...) { self.init(elements) }

    public var count: Int { self.ids.count }
    public var isEmpty: Bool { self.ids.isEmpty }

    /// Where `id` is or would go.
    private func position(of id: UserID) -> Int {
        var low = 0, high = self.ids.count
        while low < high {
            let mid = (low + high) / 2
            if self.ids[mid] < id { low = mid + 1 } else { high = mid }
        }
        return low
    }

    public func contains(_ id: UserID) -> Bool {
        let i = self.position(of: id)
        return i < self.ids.count && self.ids[i] == id
    }

    @discardableResult
    public mutating func insert(_ id: UserID) -> Bool {
        let i = self.position(of: id)
        guard i == self.ids.count || self.ids[i] != id else { return false }
        self.ids.insert(id, at: i)
        return true
    }

    @discardableResult
    public mutating func remove(_ id: UserID) -> UserID? {
        let i = self.position(of: id)
        guard i < self.ids.count, self.ids[i] == id else { return nil }
        return self.ids.remove(at: i)
    }

    /// Drops spare capacity left by inserts (for long-lived copies such as the live directory's).
    public mutating func compact() {
        if self.ids.capacity > self.ids.count { self.ids = ContiguousArray(self.ids) }
    }

    public func makeIterator() -> ContiguousArray<UserID>.Iterator { self.ids.makeIterator() }
    public var underestimatedCount: Int { self.ids.count }

    public var description: String { "[" + self.ids.map(\.description).joined(separator: ", ") + "]" }
}
