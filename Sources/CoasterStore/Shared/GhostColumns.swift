import CoasterCore
import Foundation

/// How ``GhostMode`` is kept in `users.ghost` (`off`, `on` or `until`) and `users.ghost_until`
/// (seconds since 1970) on both stores.
enum GhostColumns {
    /// The mode the two columns hold; an unknown word reads as `off`.
    static func mode(_ ghost: String, until: Double?) -> GhostMode {
        switch ghost {
        case "on": .on
        case "until": .until(Date(timeIntervalSince1970: until ?? 0))
        default: .off
        }
    }

    /// The two columns' values for `mode`.
    static func columns(_ mode: GhostMode) -> (ghost: String, until: Double?) {
        switch mode {
        case .off: ("off", nil)
        case .on: ("on", nil)
        case .until(let end): ("until", end.timeIntervalSince1970)
        }
    }
}
