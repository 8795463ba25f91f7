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

    /// Placing a person gives them the kept copy with the mark ``PersonState/markZones(in:)`` would
    /// make, in the index given: the one kept for the set, or a new one for another index.
    @Test func placesPeopleWithTheKeptCopyMarked() throws {
        var sets = ZoneSets()
        let index = FenceIndexTests.index, replaced = try NearbyRulesTests.replacedIndex()
        let ride: ZoneID = "cedar-point.millennium-force"
        let land = try #require(index.zoneIDs.first { id in index.zone(id)?.kind == .land && index.zone(id)?.park == "cedar-point" })
        let first: Set = [ride, land]
        var ann = PersonState(id: UserID(1), username: "ann", displayName: "Ann")
        var bo = PersonState(id: UserID(2), username: "bo", displayName: "Bo")
        sets.place(&ann, in: first, index: index)
        sets.place(&bo, in: [land, ride], index: index)
        #expect(bo.zones.isSameCopy(as: first))
        for person in [ann, bo] {
            #expect(person.zonesAreMarked(in: index))
            #expect(person.mostSpecificZone(in: index) == index.zonePosition(ride))
        }
        // Placed in an index made since, the same set is marked in that one.
        sets.place(&bo, in: first, index: replaced)
        #expect(bo.zonesAreMarked(in: replaced) && !bo.zonesAreMarked(in: index))
        #expect(bo.mostSpecificZone(in: replaced) == replaced.zonePosition(land))
        var marked = bo
        marked.markZones(in: replaced)
        #expect(bo.mostSpecificZone(in: replaced) == marked.mostSpecificZone(in: replaced))
        // No zones: marked as none.
        sets.place(&ann, in: [], index: index)
        #expect(ann.zones.isEmpty && ann.zonesAreMarked(in: index) && ann.mostSpecificZone(in: index) == nil)
        #expect(sets.count == 1)
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
