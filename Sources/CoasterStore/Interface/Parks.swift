import CoasterCore
import Foundation

/// Parks, their fences and rides, loaded from park files.
public protocol ParkStore: Sendable {
    /// Writes parks and their zones and rides, replacing earlier imports of the same parks, in one
    /// transaction: all of them or none.
    ///
    /// Zones are replaced. Rides are upserted and those missing from the new file are unlisted,
    /// never deleted, because ride logs refer to them.
    func replaceParks(_ definitions: [ParkDefinition]) async throws -> [ParkReplacement]

    /// Every park, by name.
    func parkSummaries() async throws -> [ParkSummary]

    /// Every park's last load: one short read that says whether a copy of the park list is still
    /// what the store holds (the list itself reads every park's geometry).
    func parkLoads() async throws -> Set<ParkLoad>

    /// One park with its zones and listed rides, or `nil` if there is no such park.
    func park(_ id: ParkID) async throws -> ParkDefinition?

    /// When the park was last loaded (each load of it sets this anew), or `nil` if there is no
    /// such park: what a copy of the park made since then can be checked against.
    func parkLoadedAt(_ id: ParkID) async throws -> Date?

    /// Every park with its zones and listed rides: what the fence index is built from.
    func allParks() async throws -> [ParkDefinition]

    /// The listed rides of a park in file order, with the park's last load (a copy of them stands
    /// while it is the same), or `nil` if there is no such park.
    func rides(in park: ParkID) async throws -> (rides: [Ride], loadedAt: Date)?

    /// The parks whose boundary covers `position`, asked of SpatiaLite itself (R*Tree candidates,
    /// `ST_Covers` decides). The service answers from the in-memory index; this is the cross-check.
    func parkIDs(covering position: Coordinate) async throws -> [ParkID]
}
