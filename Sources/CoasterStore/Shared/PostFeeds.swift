/// What both stores share of reading post feeds.
enum PostFeeds {
    /// How many rows of a tag's index range a feed page looks at, at most: a tag full of posts the
    /// viewer may not read costs a bounded walk (the page comes back short, and the next asks on
    /// from its last post).
    static func scan(_ limit: Int) -> Int { 50 * max(1, limit) + 1_000 }
}
