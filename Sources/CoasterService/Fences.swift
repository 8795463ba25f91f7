import CoasterCore
import CoasterStore
import Foundation
import Synchronization

/// Owns the current ``FenceIndex`` and the parks' ``ParkPlaces``, and swaps in new ones after each
/// import.
///
/// Requests read them without touching the database; the store stays the source of truth, and
/// an import rebuilds both from what it committed.
public final class Fences: Sendable {
    private let current: Mutex<(index: FenceIndex, places: ParkPlaces)>
    private let store: any Store

    public init(store: any Store) {
        self.store = store
        self.current = Mutex((FenceIndex.empty, ParkPlaces.empty))
    }

    /// The index in force now.
    public var index: FenceIndex { self.current.withLock { $0.index } }

    /// Every park's places, built from the same load as ``index``.
    public var places: ParkPlaces { self.current.withLock { $0.places } }

    /// Rebuilds the index and the places from the store and swaps them in.
    /// - Returns: the new index.
    @discardableResult
    public func reload() async throws -> FenceIndex {
        let parks = try await self.store.allParks()
        let index = try FenceIndex(parks: parks.map(\.park), zones: parks.flatMap(\.zones))
        let places = ParkPlaces(parks)
        self.current.withLock { $0 = (index, places) }
        return index
    }
}
