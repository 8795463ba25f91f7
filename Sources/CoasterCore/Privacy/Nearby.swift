import CMemory
import Foundation

/// What the live directory holds of one user: enough to answer location questions without the
/// database. Built from the store, updated as fixes and settings change.
///
/// A value type whose fields live in one shared, copy-on-write box: handing a person to a query
/// (out of the directory, into a closure) costs one reference count, not one per set and string.
public struct PersonState: Hashable, Sendable {
    /// In the order the nearby route reads them: what names a friend found (through the visits),
    /// then what their card is made from (through the sharing settings).
    struct Fields: Hashable, Sendable {
        var id: UserID
        var username: String
        var displayName: String
        var zones: Set<ZoneID>
        /// The most specific of `zones` in a fence index (see ``ZoneMark``), beside them.
        var zoneMark: ZoneMark
        var visits: OpenVisits
        var latest: AcceptedFix?
        var sharing: SharingSettings
        var friends: UserIDSet
        var blocks: Set<UserID>
        var discoverable: Bool
    }

    /// Mutated only while uniquely referenced (see `update`), so sharing it across threads is safe.
    private final class Box: @unchecked Sendable {
        /// Unchecked: `update` is the only writer and holds the only reference while it writes.
        @exclusivity(unchecked) var fields: Fields
        init(_ fields: Fields) { self.fields = fields }
    }

    private var box: Box

    private var fields: Fields { self.box.fields }

    private mutating func update(_ change: (inout Fields) -> Void) {
        self.makeUnique()
        change(&self.box.fields)
    }

    private mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&self.box) { self.box = Box(self.box.fields) }
    }

    // Each field is read in place and changed in place (`_modify`). Through a setter,
    // `person.friends.insert(x)` copied the list out, changed the copy (a new buffer, the old one
    // still referenced by the record) and stored it back: a new list for every friend added.
    public var id: UserID { _read { yield self.box.fields.id } _modify { self.makeUnique(); yield &self.box.fields.id } }
    public var username: String { _read { yield self.box.fields.username } _modify { self.makeUnique(); yield &self.box.fields.username } }
    public var displayName: String { _read { yield self.box.fields.displayName } _modify { self.makeUnique(); yield &self.box.fields.displayName } }
    public var latest: AcceptedFix? { _read { yield self.box.fields.latest } _modify { self.makeUnique(); yield &self.box.fields.latest } }
    /// Zones the latest fix is inside. Changing them drops their mark (``markZones(in:)``).
    public var zones: Set<ZoneID> {
        _read { yield self.box.fields.zones }
        _modify {
            self.makeUnique()
            self.box.fields.zoneMark = .unmarked
            yield &self.box.fields.zones
        }
    }
    /// Open visits: park → time of the last evidence.
    public var visits: [ParkID: Date] {
        get { self.box.fields.visits.dictionary }
        set { self.update { $0.visits = OpenVisits(newValue) } }
    }
    /// The same visits, without building a dictionary.
    public var openVisits: OpenVisits { self.box.fields.visits }
    /// Sharing settings with every per-friend override this user set.
    public var sharing: SharingSettings { _read { yield self.box.fields.sharing } _modify { self.makeUnique(); yield &self.box.fields.sharing } }
    public var friends: UserIDSet { _read { yield self.box.fields.friends } _modify { self.makeUnique(); yield &self.box.fields.friends } }
    /// Users blocked by or blocking this one.
    public var blocks: Set<UserID> { _read { yield self.box.fields.blocks } _modify { self.makeUnique(); yield &self.box.fields.blocks } }
    /// Visible to non-friends in the same park (`GET /v1/people/nearby`).
    public var discoverable: Bool { _read { yield self.box.fields.discoverable } _modify { self.makeUnique(); yield &self.box.fields.discoverable } }

    public init(id: UserID, username: String, displayName: String, latest: AcceptedFix? = nil, zones: Set<ZoneID> = [],
                visits: [ParkID: Date] = [:], sharing: SharingSettings = SharingSettings(), friends: UserIDSet = [],
                blocks: Set<UserID> = [], discoverable: Bool = false) {
        self.box = Box(Fields(id: id, username: username, displayName: displayName, zones: zones, zoneMark: .unmarked, visits: OpenVisits(visits),
                              latest: latest, sharing: sharing, friends: friends, blocks: blocks, discoverable: discoverable))
    }

    /// Works out the most specific of the zones in `index` and keeps it with them, for
    /// ``mostSpecificZone(in:)`` to read while `index` is in force.
    public mutating func markZones(in index: FenceIndex) {
        self.update { $0.zoneMark = ZoneMark($0.zones, in: index) }
    }

    /// Sets the zones with their mark, which must be theirs (``ZoneSets`` keeps them together).
    mutating func setZones(_ zones: Set<ZoneID>, mark: ZoneMark) {
        self.update {
            $0.zones = zones
            $0.zoneMark = mark
        }
    }

    /// The position in `index` of the most specific of the zones (``FenceIndex/mostSpecificZone(among:)``):
    /// read from their mark if it was made with `index`, else worked out.
    @inline(__always)
    public func mostSpecificZone(in index: FenceIndex) -> Int? {
        if let marked = self.box.fields.zoneMark.position(in: index) { return marked }
        return index.mostSpecificZone(among: self.box.fields.zones)
    }

    /// Whether the zones carry a mark made with `index`: what the package's tests check marking by
    /// (an answer is the same either way).
    package func zonesAreMarked(in index: FenceIndex) -> Bool {
        self.box.fields.zoneMark.position(in: index) != nil
    }

    public static func == (a: PersonState, b: PersonState) -> Bool { a.box === b.box || a.fields == b.fields }
    public func hash(into hasher: inout Hasher) { hasher.combine(self.fields) }

    /// Parks with an open visit whose last evidence is within `timeout` seconds of `now`.
    public func visiting(at now: Date, timeout: TimeInterval) -> Set<ParkID> {
        switch self.box.fields.visits {
        case .none: return []
        case .one(let park, let evidence): return now.timeIntervalSince(evidence) <= timeout ? [park] : []
        case .many(let visits): return Set(visits.filter { now.timeIntervalSince($0.value) <= timeout }.keys)
        }
    }

    /// Whether `viewer` may see this user at all: friends both ways and no block either way (the
    /// viewer's blocks list both directions). Sharing settings then decide how much.
    public func isMutualFriend(of viewer: PersonState) -> Bool {
        viewer.friends.contains(self.id) && !viewer.blocks.contains(self.id) && self.friends.contains(viewer.id)
    }

    private init(box: Box) { self.box = box }

    /// Calls `body` with the person whose record is at `address` (see ``address``) without taking
    /// a reference on it (an atomic count up and down per friend on the nearby path): the caller
    /// keeps the record alive.
    @inline(__always)
    static func borrow<R>(at address: UnsafeRawPointer, _ body: (PersonState) -> R) -> R {
        Unmanaged<Box>.fromOpaque(address)._withUnsafeGuaranteedRef { body(PersonState(box: $0)) }
    }

    /// Where the record is, to be read by ``prefetch(at:)`` without taking a reference.
    var address: UnsafeRawPointer { UnsafeRawPointer(Unmanaged.passUnretained(self.box).toOpaque()) }

    /// How much of a record naming a friend found nearby reads: from the object's header (its
    /// reference count) through the visits.
    static let namingExtent = 16 + (MemoryLayout<Fields>.offset(of: \Fields.latest) ?? MemoryLayout<Fields>.size)
    /// How much of a record the nearby rules read when they make its card (a snapshot's): through
    /// the sharing settings.
    static let nearbyExtent = 16 + (MemoryLayout<Fields>.offset(of: \Fields.friends) ?? MemoryLayout<Fields>.size)

    /// Starts loading the first `extent` bytes of the record at `address` (see ``address``),
    /// without taking a reference (see ``PersonDirectory/friends(of:)``).
    @inline(__always)
    static func prefetch(at address: UnsafeRawPointer, extent: Int) {
        var offset = 0
        while offset < extent {
            cmemory_prefetch(address + offset)
            offset += 64
        }
        cmemory_prefetch(address + (extent - 1))
    }

    /// The first (by id) of ``visiting(at:timeout:)``, without building the set.
    public func firstVisited(at now: Date, timeout: TimeInterval) -> ParkID? {
        switch self.box.fields.visits {
        case .none:
            return nil
        case .one(let park, let evidence):
            return now.timeIntervalSince(evidence) <= timeout ? park : nil
        case .many(let visits):
            var first: ParkID?
            for (park, evidence) in visits where now.timeIntervalSince(evidence) <= timeout {
                if let f = first, f <= park { continue }
                first = park
            }
            return first
        }
    }
}

/// The most specific of a person's zones in one fence index (``FenceIndex/mostSpecificZone(among:)``),
/// worked out when the zones are set (``PersonState/markZones(in:)``). Naming a friend in a nearby
/// answer then reads two words of their record instead of walking their set of zones, which took
/// a reference on the set: everyone standing in the same zones shares one set (``ZoneSets``), so
/// both cores counted on the same word: 3.8 % of the samples of nearby answers at a million users.
///
/// Valid only with the index it was made with (by its ``FenceIndex/generation``); with any other
/// (after a park import) the zones are walked again. Not part of who a person is: two people
/// alike but for their marks are equal.
public struct ZoneMark: Hashable, Sendable {
    /// The index's generation (its low 32 bits: four billion imports apart before two could be
    /// taken for each other); 0, which no index has, for no mark.
    private let generation: UInt32
    /// The zone's position in that index; -1 for none of the zones.
    private let position: Int32

    /// No mark.
    static let unmarked = ZoneMark(generation: 0, position: -1)

    private init(generation: UInt32, position: Int32) {
        self.generation = generation
        self.position = position
    }

    init(_ zones: Set<ZoneID>, in index: FenceIndex) {
        // Positions are below the index's zone count, which an Int32 holds many times over.
        self.init(generation: Self.generation(of: index), position: Int32(index.mostSpecificZone(among: zones) ?? -1))
    }

    private static func generation(of index: FenceIndex) -> UInt32 {
        let low = UInt32(truncatingIfNeeded: index.generation)
        return low == 0 ? 1 : low
    }

    /// The mark of the zone at `position` in `index` (`nil`: none of the zones).
    init(position: Int?, in index: FenceIndex) {
        self.init(generation: Self.generation(of: index), position: Int32(position ?? -1))
    }

    /// Whether this mark was made with `index`.
    func isMade(with index: FenceIndex) -> Bool {
        self.generation == Self.generation(of: index)
    }

    /// The zone's position if this mark was made with `index`: `.some(nil)` for none of the
    /// zones, `nil` for a mark made with another index (or no mark).
    @inline(__always)
    func position(in index: FenceIndex) -> Int?? {
        guard self.generation == Self.generation(of: index) else { return nil }
        return .some(self.position < 0 ? nil : Int(self.position))
    }

    /// The marked zone's position in `index`, if this mark was made with it and marks a zone.
    public func zonePosition(in index: FenceIndex) -> Int? {
        self.position(in: index) ?? nil
    }

    public static func == (a: ZoneMark, b: ZoneMark) -> Bool { true }
    public func hash(into hasher: inout Hasher) {}
}

/// What the nearby rules read of a friend first: the latest fix's position and time, how much of
/// it is shared, and where the record is, in 32 bytes (two to a cache line), kept by
/// ``PersonDirectory`` beside each record. With a million people a friend's record and its slot
/// in the directory are three or four cache lines away in memory; the rules read the record only
/// for the friends they list (for names and zones) or for what a card cannot settle: per-friend
/// overrides, a ghost mode that ends, park-only sharing, or a friend out of reach who may be
/// visiting the viewer's park. Everything else is decided from the card, by the same rules
/// (``NearbyRules/findFriendsNearby(_:radius:now:)``).
public struct NearbyCard: Equatable, Sendable {
    /// The latest accepted fix; all three NaN without one.
    let lat: Double
    let lon: Double
    /// Seconds since the reference date.
    let recordedAt: Double
    /// The record's address (see ``PersonState/address``), 16-byte aligned like every Swift
    /// object, with the flags below in its four low bits; 0 for nobody. Valid while the record
    /// lives: the directory's slot, or a snapshot, keeps it.
    private let word: UInt

    /// Shares its position exactly (else approximately; see ``settledByRecord``).
    static let exact: UInt = 1
    /// Ghost mode with no end: hidden from everyone.
    static let hidden: UInt = 2
    /// Visibility depends on more than the card holds: per-friend overrides, a ghost mode with an
    /// end, park-only sharing (which lists visits).
    static let settledByRecord: UInt = 4
    /// No open visit.
    static let noVisits: UInt = 8
    private static let flagBits: UInt = 15

    /// The card of nobody.
    static let empty = NearbyCard(lat: .nan, lon: .nan, recordedAt: .nan, word: 0)

    private init(lat: Double, lon: Double, recordedAt: Double, word: UInt) {
        self.lat = lat
        self.lon = lon
        self.recordedAt = recordedAt
        self.word = word
    }

    /// The card of `person`, pointing at their record (which must outlive it).
    init(_ person: PersonState) {
        var flags: UInt = 0
        let sharing = person.sharing
        switch sharing.ghost {
        case .off: break
        case .on: flags |= Self.hidden
        case .until: flags |= Self.settledByRecord
        }
        if !sharing.overrides.isEmpty { flags |= Self.settledByRecord }
        switch sharing.precision {
        case .exact: flags |= Self.exact
        case .approximate: break
        case .parkOnly: flags |= Self.settledByRecord
        }
        if person.openVisits.count == 0 { flags |= Self.noVisits }
        let address = UInt(bitPattern: person.address)
        precondition(address & Self.flagBits == 0, "a record not 16-byte aligned")
        let fix = person.latest
        self.init(lat: fix?.position.lat ?? .nan, lon: fix?.position.lon ?? .nan,
                  recordedAt: fix?.recordedAt.timeIntervalSinceReferenceDate ?? .nan, word: address | flags)
    }

    /// The same card: the same bits (a card without a fix holds NaNs, which `==` on doubles
    /// would call unequal to themselves).
    public static func == (a: NearbyCard, b: NearbyCard) -> Bool {
        a.lat.bitPattern == b.lat.bitPattern && a.lon.bitPattern == b.lon.bitPattern
            && a.recordedAt.bitPattern == b.recordedAt.bitPattern && a.word == b.word
    }

    /// Someone's card (not ``empty``).
    var isSomeone: Bool { self.word != 0 }
    var hasFix: Bool { !self.recordedAt.isNaN }
    func has(_ flag: UInt) -> Bool { self.word & flag != 0 }
    /// Where the record is; only for someone's card.
    var record: UnsafeRawPointer { UnsafeRawPointer(bitPattern: self.word & ~Self.flagBits)! }
}

/// A person's open visits (park → time of the last evidence) without a heap allocation for the
/// usual none or one: a dictionary of one park is an allocation of its own, and on the nearby path
/// a cache miss and an atomic reference count per friend.
public enum OpenVisits: Hashable, Sendable, Sequence {
    case none
    case one(ParkID, Date)
    /// Two or more.
    case many([ParkID: Date])

    public init(_ visits: [ParkID: Date]) {
        switch visits.count {
        case 0: self = .none
        case 1: self = .one(visits.first!.key, visits.first!.value)
        default: self = .many(visits)
        }
    }

    public var dictionary: [ParkID: Date] {
        switch self {
        case .none: [:]
        case .one(let park, let evidence): [park: evidence]
        case .many(let visits): visits
        }
    }

    public var count: Int {
        switch self {
        case .none: 0
        case .one: 1
        case .many(let visits): visits.count
        }
    }

    /// Whether `park` has an open visit, however old its evidence.
    public func includes(_ park: ParkID) -> Bool {
        switch self {
        case .none: false
        case .one(let visited, _): visited == park
        case .many(let visits): visits[park] != nil
        }
    }

    /// Whether any of `parks` has an open visit, however old its evidence.
    public func includesAny(of parks: Set<ParkID>) -> Bool {
        switch self {
        case .none: false
        case .one(let park, _): parks.contains(park)
        case .many(let visits): !parks.isDisjoint(with: visits.keys)
        }
    }

    public struct Iterator: IteratorProtocol {
        fileprivate var single: (park: ParkID, at: Date)?
        fileprivate var rest: Dictionary<ParkID, Date>.Iterator?

        public mutating func next() -> (park: ParkID, at: Date)? {
            if let single = self.single {
                self.single = nil
                return single
            }
            return self.rest?.next().map { (park: $0.key, at: $0.value) }
        }
    }

    public func makeIterator() -> Iterator {
        switch self {
        case .none: Iterator()
        case .one(let park, let evidence): Iterator(single: (park, evidence))
        case .many(let visits): Iterator(rest: visits.makeIterator())
        }
    }

    public var underestimatedCount: Int { self.count }
}

/// Distances as they are shown: rounded *up* to a step that grows with the distance, so that
/// repeated queries cannot pin a position down to the metre (docs: NearbyAndPrivacy).
public enum DistanceBuckets {
    /// 10 m steps under 100 m, 50 m under 1 km, 500 m beyond.
    public static func bucket(_ metres: Double) -> Double {
        let step: Double = metres < 100 ? 10 : metres < 1_000 ? 50 : 500
        return max(step, (metres / step).rounded(.up) * step)
    }

    /// The same for four distances, lane by lane the same bits.
    @inline(__always)
    static func bucket(_ metres: SIMD4<Double>) -> SIMD4<Double> {
        var step = SIMD4<Double>(repeating: 500)
        step.replace(with: 50, where: metres .< 1_000)
        step.replace(with: 10, where: metres .< 100)
        var bucket = (metres / step).rounded(.up) * step
        bucket.replace(with: step, where: bucket .< step)
        return bucket
    }
}

/// A person near the viewer, as the viewer may see them.
public struct NearbyPerson: Hashable, Sendable {
    public var id: UserID
    public var username: String
    public var displayName: String
    /// Bucketed metres from the viewer's latest fix; `nil` for park-only sharing.
    public var distance: Double?
    /// Seconds since the fix, rounded down to whole minutes.
    public var age: TimeInterval
    public var precision: Precision
    public var park: ParkID?
    /// The most specific zone shown (ride, queue or poi before land), exact sharing only.
    public var zone: ZoneID?
    /// Where ``zone`` is in the index that named it, when the rules found it by its place there:
    /// the answer writes the zone's parts without hashing its id again. Not part of the answer's
    /// equality (see ``ZoneMark``).
    public var zoneMark = ZoneMark.unmarked
}

/// A friend found nearby, before names: what the viewer may see of them, by id
/// (``NearbyRules/findFriendsNearby(_:radius:now:)``).
public struct NearbyFind: Hashable, Sendable {
    public var id: UserID
    /// Bucketed metres from the viewer's latest fix; `nil` for park-only sharing.
    public var distance: Double?
    /// Seconds since the fix, rounded down to whole minutes.
    public var age: TimeInterval
    public var precision: Precision
    /// For park-only sharing, the park shared; otherwise `nil`.
    public var park: ParkID?
    /// The friend's record's address (``NearbyCard/record``): valid while the group it was found
    /// in lasts.
    let recordAddress: UInt
    var record: UnsafeRawPointer { UnsafeRawPointer(bitPattern: self.recordAddress)! }
}

public enum NearbyRefusal: String, Error, Sendable {
    /// The viewer has no accepted fix within the time-to-live.
    case noRecentFix = "no_recent_fix"
    /// People nearby: the viewer is not on a visit to a park.
    case notInPark = "not_in_park"
}

/// Nearby answers, pure: the viewer, the candidates, the rules.
public struct NearbyRules: Sendable {
    public var privacy: LocationPrivacy
    /// Visits without evidence for this long (seconds) do not count.
    public var visitTimeout: TimeInterval
    /// Largest radius a query may ask for, metres.
    public static let maximumRadius = 5_000.0

    public init(privacy: LocationPrivacy = LocationPrivacy(), visitTimeout: TimeInterval = 12 * 3600) {
        self.privacy = privacy
        self.visitTimeout = visitTimeout
    }

    /// Accepted friends within `radius` metres of the viewer's own latest fix, nearest first:
    /// ``findFriendsNearby(_:radius:now:)``, then each friend found named from their record.
    ///
    /// `friends` is the viewer with their mutual, unblocked friends: a snapshot, or the directory
    /// read in place under its lock.
    public func friendsNearby(_ friends: some FriendGroup, radius: Double, now: Date, index: FenceIndex) -> Result<[NearbyPerson], NearbyRefusal> {
        self.find(friends, radius: radius, now: now, naming: true).map { self.named($0, in: friends, now: now, index: index) }
    }

    /// ``friendsNearby(_:radius:now:index:)`` for the directory read in place, the server's case:
    /// compiled for it, where a caller in another module would run the generic code (each friend
    /// through the protocol's witnesses).
    public func friendsNearby(_ friends: FriendsInPlace, radius: Double, now: Date, index: FenceIndex) -> Result<[NearbyPerson], NearbyRefusal> {
        self.find(friends, radius: radius, now: now, naming: true).map { self.named($0, in: friends, now: now, index: index) }
    }

    /// ``findFriendsNearby(_:radius:now:)`` for the directory read in place (see above).
    public func findFriendsNearby(_ friends: FriendsInPlace, radius: Double, now: Date) -> Result<[NearbyFind], NearbyRefusal> {
        self.find(friends, radius: radius, now: now, naming: false)
    }

    /// The friends ``friendsNearby(_:radius:now:index:)`` lists, by id and in no order: what may
    /// be shown of each, without their names, visited park or zone.
    ///
    /// Distances are computed from what the viewer may see (an approximate friend's snapped cell
    /// centre, never the true position) and then bucketed. Park-only friends are listed without a
    /// distance when the viewer is visiting the same park. Cost: O(friends of the viewer), most
    /// decided from their ``NearbyCard`` alone.
    public func findFriendsNearby(_ friends: some FriendGroup, radius: Double, now: Date) -> Result<[NearbyFind], NearbyRefusal> {
        self.find(friends, radius: radius, now: now, naming: false)
    }

    /// `naming`: the records of the friends kept will be read (for their names), so each is asked
    /// for as soon as the friend is kept, to arrive while the rest are decided.
    private func find(_ friends: some FriendGroup, radius: Double, now: Date, naming: Bool) -> Result<[NearbyFind], NearbyRefusal> {
        let viewer = friends.viewer
        guard let mine = viewer.latest, now.timeIntervalSince(mine.recordedAt) <= self.privacy.timeToLive else {
            return .failure(.noRecentFix)
        }
        // The viewer's visits, a set to build, are needed only for what a card cannot settle.
        var visited: Set<ParkID>?
        func myParks() -> Set<ParkID> {
            if let visited { return visited }
            let parks = viewer.visiting(at: now, timeout: self.visitTimeout)
            visited = parks
            return parks
        }
        // A conservative box around the viewer: anything outside it is farther than the radius,
        // even snapped, so the exact (and costlier) geodesic distance is skipped for it.
        let reach = Geodesy.boundingBox(center: mine.position, radius: radius + ApproximateGrid.cellRadius * 1.5)
        let distances = Geodesy.LocalDistances(from: mine.position)
        // `Date.timeIntervalSince` is this subtraction: the card's times give the same answers.
        let seconds = now.timeIntervalSinceReferenceDate, timeToLive = self.privacy.timeToLive
        var found: [NearbyFind] = []
        found.reserveCapacity(friends.friendCount)
        // Friends shown with a distance, and the point it is measured to: the distances are
        // worked out afterwards in a loop of their own, where one friend's chain of square roots
        // overlaps the next's instead of waiting behind the rules' other work.
        // A friend's age (`recordedAt`, seconds) is worked out only if they are kept.
        var measured: [(id: UserID, record: UnsafeRawPointer, point: Coordinate, exact: Bool, recordedAt: Double, metres: Double, bucket: Double)] = []
        measured.reserveCapacity(friends.friendCount)
        friends.forEachCard { id, card in
            // What the card settles: no fix, ghost mode, a stale fix (as `LocationPrivacy.view`).
            guard card.hasFix, !card.has(NearbyCard.hidden), seconds - card.recordedAt <= timeToLive else { return }
            let recordedAt = card.recordedAt
            let position = Coordinate(lat: card.lat, lon: card.lon)
            let inReach = reach.contains(position)
            guard card.has(NearbyCard.settledByRecord) else {
                // Out of reach, a position shared exactly or approximately is beyond the radius.
                guard inReach else { return }
                if naming { PersonState.prefetch(at: card.record, extent: PersonState.namingExtent) }
                if card.has(NearbyCard.exact) {
                    measured.append((id, card.record, position, true, recordedAt, 0, 0))
                } else {
                    measured.append((id, card.record, ApproximateGrid.snap(position), false, recordedAt, 0, 0))
                }
                return
            }
            // Out of reach, only park-only sharing can list a friend: one visiting the viewer's park.
            if !inReach, card.has(NearbyCard.noVisits) { return }
            PersonState.borrow(at: card.record) { friend in
                guard let fix = friend.latest else { return }
                if !inReach, !friend.openVisits.includesAny(of: myParks()) { return }
                // The set of visited parks is built only for park-only sharing, which lists them.
                guard let shared = self.privacy.view(fix, sharing: friend.sharing, visiting: friend.visiting(at: now, timeout: self.visitTimeout),
                                                     viewerVisiting: myParks(), viewer: viewer.id, relationship: .friends, now: now)
                else { return }
                switch shared {
                case .exact(let c, _):
                    measured.append((id, card.record, c, true, recordedAt, 0, 0))
                case .approximate(let c, _):
                    measured.append((id, card.record, c, false, recordedAt, 0, 0))
                case .parkOnly(let parks):
                    guard let shared = Self.shownPark(parks) else { return }
                    found.append(NearbyFind(id: id, distance: nil, age: Self.age(seconds - recordedAt), precision: .parkOnly, park: shared,
                                           recordAddress: UInt(bitPattern: card.record)))
                }
            }
        }
        measured.withUnsafeMutableBufferPointer { measured in
            // Four at a time where the local plane settles all four (each lane as `measure` would
            // work it out); the rest one by one.
            var i = 0
            while i + 4 <= measured.count {
                let lat = SIMD4(measured[i].point.lat, measured[i + 1].point.lat, measured[i + 2].point.lat, measured[i + 3].point.lat)
                let lon = SIMD4(measured[i].point.lon, measured[i + 1].point.lon, measured[i + 2].point.lon, measured[i + 3].point.lon)
                if let (metres, buckets) = Self.measure(from: distances, lat: lat, lon: lon, radius: radius) {
                    for k in 0..<4 { (measured[i + k].metres, measured[i + k].bucket) = (metres[k], buckets[k]) }
                } else {
                    for k in i..<(i + 4) { (measured[k].metres, measured[k].bucket) = Self.measure(from: distances, to: measured[k].point, radius: radius) }
                }
                i += 4
            }
            for k in i..<measured.count {
                (measured[k].metres, measured[k].bucket) = Self.measure(from: distances, to: measured[k].point, radius: radius)
            }
        }
        for m in measured where m.metres <= radius {
            found.append(NearbyFind(id: m.id, distance: m.bucket, age: Self.age(seconds - m.recordedAt), precision: m.exact ? .exact : .approximate, park: nil,
                                    recordAddress: UInt(bitPattern: m.record)))
        }
        return .success(found)
    }

    /// Seconds since a fix, rounded down to whole minutes: `(seconds / 60).rounded(.down) * 60`,
    /// bit for bit, without a call to libm's `floor` (x86-64's baseline has no instruction for it,
    /// and it was a tenth of the nearby query): truncation toward zero, one down for negatives.
    @inline(__always)
    static func age(_ seconds: Double) -> Double {
        let minutes = seconds / 60
        guard abs(minutes) < 0x1p52 else { return minutes.rounded(.down) * 60 }
        let truncated = Double(Int64(minutes))
        return (truncated > minutes ? truncated - 1 : truncated) * 60
    }

    /// The friends found, named from their records, with the park each is visiting (park-only:
    /// the park shared) and, shared exactly, the most specific zone; nearest first.
    private func named(_ found: [NearbyFind], in friends: some FriendGroup, now: Date, index: FenceIndex) -> [NearbyPerson] {
        var out: [NearbyPerson] = []
        out.reserveCapacity(found.count)
        // Read in place: a copy of each find was a fifth of this step (its park, a string).
        found.withUnsafeBufferPointer { found in
            for i in found.indices {
                PersonState.borrow(at: found[i].record) { friend in
                    let place = self.place(of: friend, precision: found[i].precision, sharedPark: found[i].park, now: now, index: index)
                    out.append(NearbyPerson(id: found[i].id, username: friend.username, displayName: friend.displayName,
                                            distance: found[i].distance, age: found[i].age, precision: found[i].precision,
                                            park: place.park, zone: place.zone.map(index.zoneID(at:)), zoneMark: ZoneMark(position: place.zone, in: index)))
                }
            }
        }
        Self.sortNearestFirst(&out)
        return out
    }

    /// Where a friend is shown to be, given how the viewer may see them (`precision`; for park-only
    /// sharing, `sharedPark`, the park they share with the viewer): the park they are visiting
    /// (park-only: the park shared) and, shared exactly, their most specific zone, as its position
    /// in `index`. The one rule of friends nearby and of the live `location` push.
    @inline(__always)
    public func place(of friend: PersonState, precision: Precision, sharedPark: ParkID?, now: Date, index: FenceIndex) -> (park: ParkID?, zone: Int?) {
        (sharedPark ?? friend.firstVisited(at: now, timeout: self.visitTimeout), precision == .exact ? friend.mostSpecificZone(in: index) : nil)
    }

    /// ``place(of:precision:sharedPark:now:index:)`` for what ``LocationPrivacy/view(_:sharing:discoverable:visiting:viewerVisiting:viewer:relationship:now:)``
    /// let the viewer see of the friend.
    public func place(of friend: PersonState, as shared: SharedLocation, now: Date, index: FenceIndex) -> (park: ParkID?, zone: Int?) {
        switch shared {
        case .exact: self.place(of: friend, precision: .exact, sharedPark: nil, now: now, index: index)
        case .approximate: self.place(of: friend, precision: .approximate, sharedPark: nil, now: now, index: index)
        case .parkOnly(let together): self.place(of: friend, precision: .parkOnly, sharedPark: Self.shownPark(together), now: now, index: index)
        }
    }

    /// Of the parks a park-only friend shares with the viewer, the one an answer names.
    static func shownPark(_ together: Set<ParkID>) -> ParkID? { together.min() }

    /// People who opted in to being discoverable, visiting a park the viewer is visiting, within
    /// `radius`: never friends (they are in the friends list), never blocked either way, never
    /// ghosts; always snapped to the approximate grid, never a zone.
    public func peopleNearby(viewer: PersonState, candidates: [PersonState], radius: Double, now: Date) -> Result<[NearbyPerson], NearbyRefusal> {
        guard let mine = viewer.latest, now.timeIntervalSince(mine.recordedAt) <= self.privacy.timeToLive else {
            return .failure(.noRecentFix)
        }
        let myParks = viewer.visiting(at: now, timeout: self.visitTimeout)
        guard !myParks.isEmpty else { return .failure(.notInPark) }
        var out: [NearbyPerson] = []
        for other in candidates where other.id != viewer.id && !viewer.friends.contains(other.id)
            && !viewer.blocks.contains(other.id) && !other.blocks.contains(viewer.id) {
            guard let fix = other.latest,
                  let shared = self.privacy.view(fix, sharing: other.sharing, discoverable: other.discoverable,
                                                 visiting: other.visiting(at: now, timeout: self.visitTimeout), viewerVisiting: myParks,
                                                 viewer: viewer.id, relationship: .none, now: now)
            else { continue }
            let age = (now.timeIntervalSince(fix.recordedAt) / 60).rounded(.down) * 60
            switch shared {
            case .approximate(let c, _):
                let d = Geodesy.distance(mine.position, c)
                guard d <= radius, let park = other.visiting(at: now, timeout: self.visitTimeout).intersection(myParks).sorted().first
                else { continue }
                out.append(NearbyPerson(id: other.id, username: other.username, displayName: other.displayName,
                                        distance: DistanceBuckets.bucket(d), age: age, precision: .approximate, park: park, zone: nil))
            case .parkOnly(let parks):
                // The park they share with the viewer, and no distance.
                guard let park = parks.sorted().first else { continue }
                out.append(NearbyPerson(id: other.id, username: other.username, displayName: other.displayName,
                                        distance: nil, age: age, precision: .parkOnly, park: park, zone: nil))
            case .exact:
                continue
            }
        }
        Self.sortNearestFirst(&out)
        return .success(out)
    }

    /// Where `person` stands for their own questions about `park` (the places near them): their
    /// latest accepted fix, when it is younger than the time to live and they are on a visit to
    /// `park` whose last evidence is within the visit timeout, as for nearby answers; else `nil`.
    /// Never a point the person names.
    public func ownPosition(of person: PersonState, at park: ParkID, now: Date) -> Coordinate? {
        guard let fix = person.latest, now.timeIntervalSince(fix.recordedAt) <= self.privacy.timeToLive else { return nil }
        for (visited, evidence) in person.openVisits where visited == park {
            return now.timeIntervalSince(evidence) <= self.visitTimeout ? fix.position : nil
        }
        return nil
    }

    /// Friends on a visit to `park` now, as their sharing allows, by username.
    public func friendsInPark(_ friends: some FriendGroup, park: ParkID, now: Date, index: FenceIndex) -> [NearbyPerson] {
        let viewer = friends.viewer
        var out: [NearbyPerson] = []
        out.reserveCapacity(friends.friendCount)
        let viewerVisiting = viewer.visiting(at: now, timeout: self.visitTimeout)
        friends.forEachFriend { friend in
            let id = friend.id
            guard let fix = friend.latest else { return }
            let visiting = friend.visiting(at: now, timeout: self.visitTimeout)
            guard visiting.contains(park),
                  let shared = self.privacy.view(fix, sharing: friend.sharing, visiting: visiting, viewerVisiting: viewerVisiting,
                                                 viewer: viewer.id, relationship: .friends, now: now)
            else { return }
            // Park-only: listed only in a park the viewer is visiting too.
            if case .parkOnly(let together) = shared, !together.contains(park) { return }
            let precision: Precision
            switch shared {
            case .exact: precision = .exact
            case .approximate: precision = .approximate
            case .parkOnly: precision = .parkOnly
            }
            let zones = friend.zones.filter { index.zone($0)?.park == park }
            out.append(NearbyPerson(
                id: id, username: friend.username, displayName: friend.displayName, distance: nil,
                age: (now.timeIntervalSince(fix.recordedAt) / 60).rounded(.down) * 60, precision: precision, park: park,
                zone: precision == .exact ? Self.mostSpecific(zones, index: index) : nil))
        }
        return out.sorted { $0.username < $1.username }
    }

    /// The distance as far as the answer can tell: the local plane's (``Geodesy/localDistance(_:_:)``)
    /// when no value within its tolerance would fall in another bucket or on the other side of the
    /// radius, else the geodesic. Answers are the same as with the geodesic everywhere.
    static func distance(_ a: Coordinate, _ b: Coordinate, radius: Double) -> Double {
        Self.measure(from: Geodesy.LocalDistances(from: a), to: b, radius: radius).metres
    }

    /// ``distance(_:_:radius:)`` from the centre of `distances` (made once per query), and its
    /// bucket, found on the way (each bucket is a division).
    @inline(__always)
    static func measure(from distances: Geodesy.LocalDistances, to b: Coordinate, radius: Double) -> (metres: Double, bucket: Double) {
        if let d = distances.to(b) {
            let tolerance = Geodesy.localDistanceTolerance(d)
            let low = max(0, d - tolerance), high = d + tolerance
            // Buckets only grow with the distance, and a bucket's own value is in it: if `high` is
            // no more than `low`'s bucket, both ends (and d) share it. (Past it, the geodesic decides.)
            let bucket = DistanceBuckets.bucket(low)
            if high <= bucket, (low <= radius) == (high <= radius) { return (d, bucket) }
        }
        let d = Geodesy.distance(distances.center, b)
        return (d, DistanceBuckets.bucket(d))
    }

    /// ``measure(from:to:radius:)`` for four points, if the local plane settles all four; `nil`
    /// sends them to the one-by-one path (which may need the geodesic).
    @inline(__always)
    static func measure(from distances: Geodesy.LocalDistances, lat: SIMD4<Double>, lon: SIMD4<Double>,
                        radius: Double) -> (metres: SIMD4<Double>, bucket: SIMD4<Double>)? {
        let (d, valid) = distances.to(lat: lat, lon: lon)
        guard all(valid) else { return nil }
        let tolerance = Geodesy.localDistanceTolerance(d)
        let below = d - tolerance
        let low = below.replacing(with: 0, where: below .< 0), high = d + tolerance
        let bucket = DistanceBuckets.bucket(low)
        let settled = (high .<= bucket) .& ((low .<= radius) .== (high .<= radius))
        guard all(settled) else { return nil }
        return (d, bucket)
    }

    /// The most specific of `zones` (``FenceIndex/mostSpecificZone(among:)``).
    static func mostSpecific(_ zones: Set<ZoneID>, index: FenceIndex) -> ZoneID? {
        index.mostSpecificZone(among: zones).map(index.zoneID(at:))
    }

    /// Nearest first, then by username: sorts positions, then moves each answer once.
    static func sortNearestFirst(_ people: inout [NearbyPerson]) {
        guard people.count > 1 else { return }
        // Sorted by index over the distances alone, usernames read only to break ties: comparing
        // whole answers would copy two of them per comparison.
        let distances = people.map { $0.distance ?? .infinity }
        var order = Array(people.indices)
        distances.withUnsafeBufferPointer { d in
            people.withUnsafeBufferPointer { p in
                order.sort { a, b in d[a] != d[b] ? d[a] < d[b] : p[a].username < p[b].username }
            }
        }
        // Then the answers are moved into that order in place, a cycle of the permutation at a
        // time: a sorted copy took and dropped a reference on each answer's strings.
        people.withUnsafeMutableBufferPointer { answers in
            let base = answers.baseAddress!
            // Position k takes the answer at order[k], then order[k] becomes k (placed); the
            // first answer of each cycle waits in `held` until the cycle closes.
            for start in answers.indices where order[start] != start {
                let held = (base + start).move()
                var k = start
                while order[k] != start {
                    let from = order[k]
                    (base + k).moveInitialize(from: base + from, count: 1)
                    order[k] = k
                    k = from
                }
                (base + k).initialize(to: held)
                order[k] = k
            }
        }
    }
}
