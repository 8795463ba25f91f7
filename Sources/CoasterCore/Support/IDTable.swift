/// String ids → their positions in a list, for lookups on hot paths.
///
/// A `Dictionary` keyed by a string hashes it with SipHash, seeded per process so that nobody can
/// pick keys that collide: about 70 ns a lookup here for an id like `park-47.ride-20`, and the
/// nearby answer looked up two or three zone ids for every friend it lists (a fifth of its rules'
/// work). This table hashes eight bytes at a time with a multiply-and-rotate mix instead, which is
/// safe only for keys the service chose: it is built from ids an admin's park data gave, and a
/// lookup of any other string costs no more than a probe sequence of the table's own keys.
public struct IDTable: Sendable {
    /// Open addressing, linear probing: each slot holds a key's position + 1, or 0 for empty.
    private let slots: [Int32]
    private let keys: [String]
    private let mask: Int

    /// The table of `keys`, each found at its position; of a key listed twice, the first.
    public init(_ keys: [String]) {
        precondition(keys.count < Int(Int32.max) / 2, "too many ids for a table")
        var capacity = 8
        while capacity < 2 * keys.count { capacity *= 2 }
        var slots = [Int32](repeating: 0, count: capacity)
        let mask = capacity - 1
        for (position, key) in keys.enumerated() {
            var slot = Int(truncatingIfNeeded: Self.hash(key)) & mask
            var duplicate = false
            while slots[slot] != 0 {
                if keys[Int(slots[slot]) - 1] == key {
                    duplicate = true
                    break
                }
                slot = (slot + 1) & mask
            }
            if !duplicate { slots[slot] = Int32(position + 1) }
        }
        self.slots = slots
        self.keys = keys
        self.mask = mask
    }

    /// The position of `key` in the list the table was made from, or `nil`.
    public func position(of key: String) -> Int? {
        var slot = Int(truncatingIfNeeded: Self.hash(key)) & self.mask
        return self.slots.withUnsafeBufferPointer { slots in
            while slots[slot] != 0 {
                let position = Int(slots[slot]) - 1
                if self.keys[position] == key { return position }
                slot = (slot + 1) & self.mask
            }
            return nil
        }
    }

    /// A 64-bit hash of the key's UTF-8 bytes, eight at a time (the last word zero-padded, the
    /// length mixed in so that padding cannot make two keys alike).
    static func hash(_ key: String) -> UInt64 {
        var key = key
        return key.withUTF8 { bytes in
            let k: UInt64 = 0x9E37_79B9_7F4A_7C15
            var h = UInt64(bytes.count) &* k
            var i = 0
            while i + 8 <= bytes.count {
                h = ((h ^ UInt64(littleEndian: UnsafeRawBufferPointer(bytes).loadUnaligned(fromByteOffset: i, as: UInt64.self))) &* k)
                h = (h << 29) | (h >> 35)
                i += 8
            }
            if i < bytes.count {
                var tail: UInt64 = 0
                for j in i..<bytes.count { tail |= UInt64(bytes[j]) << (8 * UInt64(j - i)) }
                h = ((h ^ tail) &* k)
                h = (h << 29) | (h >> 35)
            }
            return SeededGenerator.mix(h)
        }
    }
}
