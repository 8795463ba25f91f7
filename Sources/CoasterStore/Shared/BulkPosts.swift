import CoasterCore
import Foundation

/// What both stores write for a bulk load of posts (``BulkStore/bulkLoadPosts(_:comments:chunk:progress:)``):
/// each post's tag rows, resolved against the catalogue as a draft's are (`park` and `ride` as
/// tagged, `about` the parks and then the rides' parks, `hashtag` the text's), and each row's
/// search document.
enum BulkPosts {
    /// One `post_tags` row of a post.
    struct Tag: Sendable {
        var kind: String
        var value: String
        var position: Int
    }

    /// The catalogue as a draft's tags are resolved against it: its park ids, and each ride by its
    /// catalogue id and by its fenced ride's id (the catalogue id wins, as the stores' lookup
    /// prefers it).
    struct Catalogue: Sendable {
        var parks: Set<String>
        var rides: [String: (id: String, park: String)] = [:]

        /// `rides`: (catalogue id, fenced ride id, park id) of every catalogue ride.
        init(parks: [String], rides: [(id: String, ride: String?, park: String)]) {
            self.parks = Set(parks)
            for r in rides { if let fenced = r.ride { self.rides[fenced] = (r.id, r.park) } }
            for r in rides { self.rides[r.id] = (r.id, r.park) }
        }
    }

    /// Every post's tag rows, and a check that every comment is on a post of the load: before
    /// anything is written, so that a refused load writes nothing.
    static func tags(of posts: [BulkPost], comments: [BulkComment], catalogue: Catalogue) throws -> [[Tag]] {
        guard comments.allSatisfy({ posts.indices.contains($0.post) }) else { throw PostError.noSuchPost }
        return try posts.enumerated().map { index, post in
            var parks: [String] = [], rides: [String] = [], about: [String] = []
            for (k, park) in post.parks.enumerated() {
                guard catalogue.parks.contains(park.rawValue) else { throw PostError.unknownTag(pointer: "/posts/\(index)/parks/\(k)") }
                parks.append(park.rawValue)
                if !about.contains(park.rawValue) { about.append(park.rawValue) }
            }
            for (k, ride) in post.rides.enumerated() {
                guard let entry = catalogue.rides[ride.rawValue] else { throw PostError.unknownTag(pointer: "/posts/\(index)/rides/\(k)") }
                guard !rides.contains(entry.id) else { continue }
                rides.append(entry.id)
                if !about.contains(entry.park) { about.append(entry.park) }
            }
            var tags: [Tag] = []
            for (kind, values) in [("park", parks), ("ride", rides), ("about", about), ("hashtag", PostRules.hashtags(in: post.text))] {
                // A park tagged twice is one row, at its first position, as a draft's insert skips the second.
                for (position, value) in values.enumerated() where !tags.contains(where: { $0.kind == kind && $0.value == value }) {
                    tags.append(Tag(kind: kind, value: value, position: position))
                }
            }
            return tags
        }
    }

    /// The search documents of `texts`, in order, folded on every core: folding is most of the
    /// work of a bulk load outside the database.
    static func searchDocuments(_ texts: [String]) async -> [String] {
        let parts = max(1, min(ProcessInfo.processInfo.activeProcessorCount, texts.count / 1_000))
        let size = (texts.count + parts - 1) / max(parts, 1)
        return await withTaskGroup(of: (Int, [String]).self) { group in
            for part in 0..<parts {
                let slice = Array(texts[min(part * size, texts.count)..<min((part + 1) * size, texts.count)])
                group.addTask { (part, slice.map(PostRules.searchDocument)) }
            }
            var done = [[String]](repeating: [], count: parts)
            for await (part, documents) in group { done[part] = documents }
            return Array(done.joined())
        }
    }
}
