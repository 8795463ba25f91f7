/// A set of user ids kept as sorted arrays: binary search for `contains`, iteration in id order,
/// and little memory for the ~50 friends a user has (the live directory holds one set per user).
///
/// Ids from 0 to 2³² − 1, which is every id SQLite hands out to a service of this size, take 4
/// bytes each; any other id goes to a second array that stays empty (and unallocated) in practice.
/// Against a hashed `Set<UserID>` (~1 KB for 50 ids) that is ~230 bytes, and against one array
/// of 8-byte ids ~420: at a million users, 190 MB less than the latter.
public struct UserIDSet: Hashable, Sendable, Sequence, ExpressibleByArrayLiteral, CustomStringConvertible {
    private var narrow: ContiguousArray<UInt32> = []
    /// Negative ids and ids of 2³² and more, sorted.
    private var wide: ContiguousArray<UserID> = []

    public init() {}

    public init(_ ids: some Sequence<UserID>) {
        for id in ids {
            if let n = UInt32(exactly: id.rawValue) { self.narrow.append(n) } else { self.wide.append(id) }
        }
        Self.sortUnique(&self.narrow)
        Self.sortUnique(&self.wide)
    }

    public init(arrayLiteral elements: UserID...) { self.init(elements) }

    private static func sortUnique<T: Comparable>(_ array: inout ContiguousArray<T>) {
        guard array.count > 1 else { return }
        array.sort()
        var unique = ContiguousArray<T>()
        unique.reserveCapacity(array.count)
        for x in array where unique.last != x { unique.append(x) }
        array = unique
    }

    public var count: Int { self.narrow.count + self.wide.count }
    public var isEmpty: Bool { self.narrow.isEmpty && self.wide.isEmpty }

    /// Where `x` is or would go in a sorted array.
    private static func position<T: Comparable>(of x: T, in array: ContiguousArray<T>) -> Int {
        var low = 0, high = array.count
        while low < high {
            let mid = (low + high) / 2
            if array[mid] < x { low = mid + 1 } else { high = mid }
        }
        return low
    }

    private static func contains<T: Comparable>(_ x: T, in array: ContiguousArray<T>) -> Bool {
        let i = Self.position(of: x, in: array)
        return i < array.count && array[i] == x
    }

    private static func insert<T: Comparable>(_ x: T, into array: inout ContiguousArray<T>) -> Bool {
        let i = Self.position(of: x, in: array)
        guard i == array.count || array[i] != x else { return false }
        array.insert(x, at: i)
        return true
    }

    private static func remove<T: Comparable>(_ x: T, from array: inout ContiguousArray<T>) -> Bool {
        let i = Self.position(of: x, in: array)
        guard i < array.count, array[i] == x else { return false }
        array.remove(at: i)
        return true
    }

    public func contains(_ id: UserID) -> Bool {
        if let n = UInt32(exactly: id.rawValue) { return Self.contains(n, in: self.narrow) }
        return Self.contains(id, in: self.wide)
    }

    @discardableResult
    public mutating func insert(_ id: UserID) -> Bool {
        if let n = UInt32(exactly: id.rawValue) { return Self.insert(n, into: &self.narrow) }
        return Self.insert(id, into: &self.wide)
    }

    @discardableResult
    public mutating func remove(_ id: UserID) -> UserID? {
        let removed = if let n = UInt32(exactly: id.rawValue) { Self.remove(n, from: &self.narrow) } else { Self.remove(id, from: &self.wide) }
        return removed ? id : nil
    }

    /// Room for `count` ids below 2³² without growing (for a set filled to a size known first).
    public mutating func reserveCapacity(_ count: Int) {
        self.narrow.reserveCapacity(count)
    }

    /// Drops spare capacity left by inserts (for long-lived copies such as the live directory's).
    /// A few ids of slack are kept: an array made to measure still has the allocator's rounding
    /// (up to 16 bytes) as capacity, and copying it would only make the same size again.
    public mutating func compact() {
        if self.narrow.capacity > self.narrow.count + 4 { self.narrow = ContiguousArray(self.narrow) }
        if self.wide.capacity > self.wide.count + 2 { self.wide = ContiguousArray(self.wide) }
    }

    /// Where the first ids below 2³² are (in order) and how many of them, at most `limit`: a hint
    /// for asking memory for what the ids lead to, packed in one word (``FriendListHint``). Valid
    /// while this set's storage lives, that is while a record holding the set is kept.
    func firstNarrow(limit: Int) -> FriendListHint {
        self.narrow.withUnsafeBufferPointer { FriendListHint(base: $0.baseAddress, count: Swift.min($0.count, limit)) }
    }

    /// In id order: negative wide ids, the narrow ones, then wide ids past 2³².
    public struct Iterator: IteratorProtocol {
        fileprivate let narrow: ContiguousArray<UInt32>
        fileprivate let wide: ContiguousArray<UserID>
        fileprivate var n = 0
        fileprivate var w = 0

        public mutating func next() -> UserID? {
            if self.w < self.wide.count, self.wide[self.w].rawValue < 0 {
                defer { self.w += 1 }
                return self.wide[self.w]
            }
            if self.n < self.narrow.count {
                defer { self.n += 1 }
                return UserID(Int64(self.narrow[self.n]))
            }
            guard self.w < self.wide.count else { return nil }
            defer { self.w += 1 }
            return self.wide[self.w]
        }
    }

    public func makeIterator() -> Iterator { Iterator(narrow: self.narrow, wide: self.wide) }
    public var underestimatedCount: Int { self.count }

    public var description: String { "[" + self.map(\.description).joined(separator: ", ") + "]" }
}

/// Where a person's first friend ids (below 2³²) are kept, and how many: the address in the low
/// 48 bits (every Linux and macOS user-space address fits) and the count in the top 16, 0 for none. A hint only (see
/// ``PersonDirectory/friendsInPlace(of:)``): what is read through it is asked of memory early,
/// never trusted as the list.
struct FriendListHint: Sendable {
    let word: UInt64

    static let none = FriendListHint(word: 0)

    private init(word: UInt64) { self.word = word }

    init(base: UnsafePointer<UInt32>?, count: Int) {
        guard let base, count > 0, count < 1 << 16 else {
            self = .none
            return
        }
        let address = UInt64(UInt(bitPattern: base))
        // An address of more than 48 bits (no Linux or macOS user-space one) is not packed.
        guard address >> 48 == 0 else {
            self = .none
            return
        }
        self.word = address | UInt64(count) << 48
    }

    var count: Int { Int(self.word >> 48) }
    var base: UnsafePointer<UInt32>? { UnsafePointer(bitPattern: UInt(self.word & (1 << 48 - 1))) }
}
