import Foundation

/// A park as listed: its facts without geometry.
public struct ParkSummary: Hashable, Sendable {
    public var id: ParkID
    public var name: String
    public var timeZone: String
    public var attribution: String?
    public var bounds: BoundingBox
    public var rideCount: Int
    public var zoneCount: Int
    public var importedAt: Date

    public init(id: ParkID, name: String, timeZone: String, attribution: String?, bounds: BoundingBox, rideCount: Int, zoneCount: Int, importedAt: Date) {
        self.id = id
        self.name = name
        self.timeZone = timeZone
        self.attribution = attribution
        self.bounds = bounds
        self.rideCount = rideCount
        self.zoneCount = zoneCount
        self.importedAt = importedAt
    }
}

/// When a park was last loaded: each load of it sets a new time, so a copy of what was read
/// from it stands while its load is the same.
public struct ParkLoad: Hashable, Sendable {
    public var park: ParkID
    public var loadedAt: Date

    public init(park: ParkID, loadedAt: Date) {
        self.park = park
        self.loadedAt = loadedAt
    }
}

/// What replacing a park changed.
public struct ParkReplacement: Hashable, Sendable {
    public var park: ParkID
    /// Whether the park existed before.
    public var replaced: Bool
    public var zones: Int
    public var rides: Int
    /// Rides of the previous import that the new file no longer lists (kept for history, unlisted).
    public var unlistedRides: Int

    public init(park: ParkID, replaced: Bool, zones: Int, rides: Int, unlistedRides: Int) {
        self.park = park
        self.replaced = replaced
        self.zones = zones
        self.rides = rides
        self.unlistedRides = unlistedRides
    }
}
