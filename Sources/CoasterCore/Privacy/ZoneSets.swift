/// One copy of each distinct set of zones, for everyone inside those zones to share.
///
/// People stand in a few thousand combinations of zones (a ride inside a land, a queue beside
/// it), so a million people's sets are mostly equal. Each kept on its own was a set's storage and,
/// read from the store, a string per zone id (longer than a string holds inline): a couple of
/// hundred bytes a person, and on the nearby path one more read from memory for each friend
/// named. Shared, the sets of one park stay in the cache.
///
/// Each set is kept with its ``ZoneMark`` in the last index it was placed in: the mark is worked
/// out once per distinct set and index, not for every fix.
///
/// Bounded: past ``limit`` distinct sets (zones renamed by park reloads leave their old sets
/// behind) it starts afresh, which costs sharing, never answers.
public struct ZoneSets: Sendable {
    private struct Kept: Sendable {
        let zones: Set<ZoneID>
        var mark: ZoneMark
    }

    private var known: [Set<ZoneID>: Kept] = [:]
    /// Distinct sets kept at most.
    public static let limit = 1 << 16

    public init() {}

    /// How many distinct sets are kept.
    public var count: Int { self.known.count }

    /// The copy of `zones` kept here (the first equal set seen), or `zones` itself, now kept.
    public mutating func shared(_ zones: Set<ZoneID>) -> Set<ZoneID> {
        if zones.isEmpty { return zones }
        return self.kept(zones).zones
    }

    /// Gives `person` the copy of `zones` kept here, marked in `index`
    /// (``PersonState/markZones(in:)``, the same mark).
    public mutating func place(_ person: inout PersonState, in zones: Set<ZoneID>, index: FenceIndex) {
        if zones.isEmpty {
            person.setZones(zones, mark: ZoneMark(zones, in: index))
            return
        }
        var kept = self.kept(zones)
        if !kept.mark.isMade(with: index) {
            kept.mark = ZoneMark(kept.zones, in: index)
            self.known[kept.zones] = kept
        }
        person.setZones(kept.zones, mark: kept.mark)
    }

    /// The entry for `zones`, kept now if it was not (its mark none yet).
    private mutating func kept(_ zones: Set<ZoneID>) -> Kept {
        if let kept = self.known[zones] { return kept }
        if self.known.count >= Self.limit { self.known.removeAll() }
        let kept = Kept(zones: zones, mark: .unmarked)
        self.known[zones] = kept
        return kept
    }
}

extension Set<ZoneID> {
    /// Whether the two are one copy, as ``ZoneSets`` hands them out (the same storage, not only
    /// equal): what the package's tests check sharing by.
    package func isSameCopy(as other: Set<ZoneID>) -> Bool {
        // A set is one reference to its storage.
        withUnsafeBytes(of: self) { a in withUnsafeBytes(of: other) { b in a.elementsEqual(b) } }
    }
}
