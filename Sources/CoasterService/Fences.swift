import CoasterCore
import CoasterStore
import Foundation
import Synchronization

/// Owns the current ``FenceIndex`` and swaps in a new one after each import.
///
/// Requests read the index without touching the database; the store stays the source of truth, and
/// an import rebuilds the index from what it committed.
public final class Fences: Sendable {
    private let current: Mutex<FenceIndex>
    private let store: any Store

    public init(store: any Store) {
        self.store = store
        self.current = Mutex(FenceIndex.empty)
    }

    /// The index in force now.
    public var index: FenceIndex { self.current.withLock { $0 } }

    /// Rebuilds the index from the store and swaps it in.
    /// - Returns: the new index.
    @discardableResult
    public func reload() async throws -> FenceIndex {
        let parks = try await self.store.allParks()
        let index = try FenceIndex(parks: parks.map(\.park), zones: parks.flatMap(\.zones))
        self.current.withLock { $0 = index }
        return index
    }
}
