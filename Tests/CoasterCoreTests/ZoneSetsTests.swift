@testable import CoasterCore
import Testing

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
        #expect(!first.isSameCopy(as: second))
        #expect(sets.shared(first) == first)
        let kept = sets.shared(second)
        #expect(kept == second)
        #expect(kept.isSameCopy(as: first))
        let other: Set = [land]
        #expect(sets.shared(other).isSameCopy(as: other))
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
