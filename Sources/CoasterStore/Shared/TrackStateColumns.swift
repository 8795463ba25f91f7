import CoasterCore

/// How a ``TrackState``'s parks and zones are kept in `track_state.parks` and `track_state.zones`
/// on both stores: the ids sorted and joined by newlines (an id never holds one).
enum TrackStateColumns {
    /// The column's text for `ids`.
    static func text(_ ids: Set<some StringIdentifier>) -> String {
        ids.map(\.rawValue).sorted().joined(separator: "\n")
    }

    /// The ids a column's text holds.
    static func ids<ID: StringIdentifier>(_ text: String) -> Set<ID> {
        Set(text.split(separator: "\n").map { ID(rawValue: String($0)) })
    }
}
