import CoasterCore
@testable import CoasterStore
import CoasterTestSupport
import Foundation
import Synchronization
import Testing

/// Posts and comments loaded in bulk (the benchmarks' world) read back as the single writes
/// write them, on either store: the same rows, tags, counts, feeds and search hits.
@Suite("Posts loaded in bulk")
struct PostBulkTests {
    typealias Fixtures = PostStoreTests

    static let privacy = LocationPrivacy()

    struct Draft {
        var author: Int
        var text: String
        var visibility: PostVisibility
        var parks: [ParkID] = []
        var rides: [RideID] = []
    }

    @Test func bulkLoadedPostsReadBackAsWrittenOnes() async throws {
        let w = try await Fixtures.world()
        defer { w.remove() }
        let people = [try await w.user("ann"), try await w.user("bob"), try await w.user("cat")]
        try await w.befriend(people[0], people[1], named: "bob")
        let drafts = [
            Draft(author: 0, text: "Rode #Maverick twice, then #Coastér_Life!", visibility: .public, rides: [Fixtures.maverick]),
            // A park and a ride named twice are tagged once, at their first position.
            Draft(author: 1, text: "Diamondback day at Kings Island #KI #ki", visibility: .friends, parks: [Fixtures.kingsIsland, Fixtures.cedarPoint, Fixtures.kingsIsland],
                  rides: [Fixtures.diamondback, Fixtures.steelVengeance, Fixtures.diamondback]),
            Draft(author: 2, text: "Just words, no tags: Zeppelin mania", visibility: .public),
            Draft(author: 0, text: "Steel Vengeance airtime at night", visibility: .friends, parks: [Fixtures.cedarPoint], rides: [Fixtures.steelVengeance]),
        ]
        let remarks = [(post: 0, author: 1, text: "So jealous of that launch"), (post: 0, author: 2, text: "Front row?"),
                       (post: 1, author: 0, text: "Diamondback is the best"), (post: 3, author: 1, text: "Zeppelin again")]

        // Written one by one, a second apart, then the same in bulk at the same times.
        var written: [Int64] = [], times: [Date] = []
        for d in drafts {
            w.clock.advance(1)
            times.append(w.now)
            written.append(try await w.store.createPost(PostDraft(text: d.text, parks: d.parks, rides: d.rides, visibility: d.visibility),
                                                        author: people[d.author], now: w.now, privacy: Self.privacy).id)
        }
        var commentTimes: [Date] = []
        for r in remarks {
            w.clock.advance(1)
            commentTimes.append(w.now)
            _ = try await w.store.addComment(to: written[r.post], author: people[r.author], text: r.text, now: w.now)
        }
        let steps = Mutex<[String]>([])
        let loaded = try await w.store.bulkLoadPosts(
            drafts.enumerated().map { n, d in
                BulkPost(author: people[d.author], text: d.text, visibility: d.visibility, createdAt: times[n], parks: d.parks, rides: d.rides)
            },
            comments: remarks.enumerated().map { n, r in BulkComment(post: r.post, author: people[r.author], text: r.text, createdAt: commentTimes[n]) },
            chunk: 3, progress: { line in steps.withLock { $0.append(line) } })
        #expect(steps.withLock { $0 } == ["posts 3/4", "posts 4/4", "comments 3/4", "comments 4/4"])
        #expect(loaded.count == drafts.count && loaded == loaded.sorted() && loaded[0] > written.last!)

        // Each post as each user sees it, its rows, its thread.
        for (one, bulk) in zip(written, loaded) {
            for viewer in people {
                let single = try await Fixtures().read(w, one, by: viewer)
                var other = try await Fixtures().read(w, bulk, by: viewer)
                other?.id = one
                #expect(other == single, "post \(bulk) for \(viewer)")
                let thread = try await w.store.comments(on: one, viewer: viewer, order: .oldest, after: nil, limit: 100)?.map { [$0.author, $0.text, $0.createdAt] as [AnyHashable] }
                let bulkThread = try await w.store.comments(on: bulk, viewer: viewer, order: .oldest, after: nil, limit: 100)?.map { [$0.author, $0.text, $0.createdAt] as [AnyHashable] }
                #expect(bulkThread == thread, "thread of \(bulk) for \(viewer)")
            }
            let rows = "SELECT kind || ':' || value || ':' || position FROM post_tags WHERE post_id = ? ORDER BY kind, value"
            #expect(try await w.t.sql.strings(rows, [bulk]) == (try await w.t.sql.strings(rows, [one])))
            let row = "SELECT search_doc || '|' || visibility || '|' || comments || '|' || ups || '|' || downs FROM posts WHERE id = ?"
            #expect(try await w.t.sql.strings(row, [bulk]) == (try await w.t.sql.strings(row, [one])))
        }
        let tagged = try #require(try await Fixtures().read(w, loaded[1], by: people[1]))
        #expect(tagged.parks.map(\.id) == [Fixtures.kingsIsland, Fixtures.cedarPoint] && tagged.rides.map(\.id) == [Fixtures.diamondback, Fixtures.steelVengeance])
        #expect(tagged.hashtags == ["ki"] && tagged.comments == 1)

        // Feeds and search find both of each pair, or neither.
        for (feed, viewer) in [(Feed.home, people[1]), (.ride(Fixtures.maverick), people[2]), (.park(Fixtures.cedarPoint), people[1]), (.tag("coaster_life"), people[2]),
                               (.user(people[0]), people[1]), (.public, people[2])] {
            let ids = Set(try await Fixtures().feed(w, feed, viewer))
            for (one, bulk) in zip(written, loaded) { #expect(ids.contains(one) == ids.contains(bulk), "\(feed) for \(viewer)") }
        }
        for (text, viewer) in [("maverick", people[2]), ("jealous", people[2]), ("zeppelin", people[1]), ("steel veng", people[1]), ("\"front row\"", people[0])] {
            let hits = try await Fixtures().search(w, text, by: viewer)
            let found = Dictionary(uniqueKeysWithValues: hits.map { ($0.post.id, $0.inComment) })
            #expect(!found.isEmpty, "\(text)")
            for (one, bulk) in zip(written, loaded) { #expect(found[one] == found[bulk], "\(text) for \(viewer)") }
        }
    }

    @Test func aLoadWithAnUnknownTagOrAStrayCommentWritesNothing() async throws {
        let w = try await Fixtures.world()
        defer { w.remove() }
        let ann = try await w.user("ann")
        let good = BulkPost(author: ann, text: "Maverick", visibility: .public, createdAt: w.now, rides: [Fixtures.maverick])
        await #expect(throws: PostError.unknownTag(pointer: "/posts/1/rides/1")) {
            try await w.store.bulkLoadPosts([good, BulkPost(author: ann, text: "x", visibility: .public, createdAt: w.now, rides: [Fixtures.maverick, "cedar-point.nothing"])],
                                            comments: [], chunk: 1, progress: nil)
        }
        await #expect(throws: PostError.unknownTag(pointer: "/posts/0/parks/0")) {
            try await w.store.bulkLoadPosts([BulkPost(author: ann, text: "x", visibility: .public, createdAt: w.now, parks: ["nowhere"]), good],
                                            comments: [], chunk: 1, progress: nil)
        }
        await #expect(throws: PostError.noSuchPost) {
            try await w.store.bulkLoadPosts([good], comments: [BulkComment(post: 1, author: ann, text: "lost", createdAt: w.now)], chunk: 1, progress: nil)
        }
        await #expect(throws: PostError.noSuchPost) {
            try await w.store.bulkLoadPosts([good], comments: [BulkComment(post: -1, author: ann, text: "lost", createdAt: w.now)], chunk: 1, progress: nil)
        }
        #expect(try await w.t.sql.int("SELECT count(*) FROM posts") == 0)
        #expect(try await w.t.sql.int("SELECT count(*) FROM comments") == 0)
        #expect(try await w.store.bulkLoadPosts([], comments: [], chunk: 1, progress: nil) == [])
    }
}
