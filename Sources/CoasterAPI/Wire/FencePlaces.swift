import CoasterCore
import CoasterService
import Synchronization

/// The fence index in force with its places' names as answers write them (``PlaceFragments``),
/// rendered again when an import swaps the index: the pair always describes the same parks.
final class FencePlaces: Sendable {
    let fences: Fences
    private let rendered: Mutex<(index: FenceIndex, places: PlaceFragments)>

    init(_ fences: Fences) {
        self.fences = fences
        let index = fences.index
        self.rendered = Mutex((index, PlaceFragments(index)))
    }

    /// The index in force now, with its places.
    var indexAndPlaces: (index: FenceIndex, places: PlaceFragments) {
        let index = self.fences.index
        return self.rendered.withLock { rendered in
            if rendered.index !== index { rendered = (index, PlaceFragments(index)) }
            return rendered
        }
    }
}
