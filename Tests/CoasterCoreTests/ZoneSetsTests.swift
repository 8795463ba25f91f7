@testable import CoasterCore
import Testing

/// The storage a set's value refers to: equal for two sets that share one copy.
func storage(of zones: Set<ZoneID>) -> UInt {
    withUnsafeBytes(of: zones) { $0.load(as: UInt.self) }
}

@Suite("Zone sets")
struct ZoneSetsTests {
    /// Sets built apart but equal come back as the first one kept; unequal sets, and sets with the
    /// same ids in another order of insertion, stay what they are.
    @Test func sharesEqualSets() {
        var sets = ZoneSets()
        let ride = ZoneID(rawValue: "park-1.ride-1"), land = ZoneID(rawValue: "park-1.land-1")
        let first: Set = [ride, land]
        var second = Set<ZoneID>()
        second.insert(ZoneID(rawValue: String("park-1.land-1".utf8.map { Character(Unicode.Scalar($0)) })))
        second.insert(ZoneID(rawValue: "park-1.ride-" + "1"))
        #expect(storage(of: first) != storage(of: second))
        #expect(sets.shared(first) == first)
        let kept = sets.shared(second)
        #expect(kept == second)
        #expect(storage(of: kept) == storage(of: first))
        let other: Set = [land]
        #expect(storage(of: sets.shared(other)) == storage(of: other))
        #expect(sets.shared([]) == [])
        #expect(sets.count == 2)
    }

    /// Past its limit it starts afresh: every answer still equals what was asked for, and the
    /// table never holds more than the limit.
    @Test func staysBounded() {
        var sets = ZoneSets()
        for i in 0..<(ZoneSets.limit + 10) {
            let zones: Set = [ZoneID(rawValue: "park-\(i % 7).zone-\(i)")]
            #expect(sets.shared(zones) == zones)
            #expect(sets.count <= ZoneSets.limit)
        }
        #expect(sets.count == 10)
        let again: Set = [ZoneID(rawValue: "park-\(ZoneSets.limit % 7).zone-\(ZoneSets.limit)")]
        #expect(sets.shared(again) == again)
        #expect(sets.count == 10)
    }
}
