import CoasterCore
@testable import CoasterStore
import CoasterTestSupport
import Foundation
import Testing

/// Trip reports through the store interface, on either store (the same expectations, so the
/// same answers): who reads what, the feeds and their pages, thumbs and their counts, comments,
/// "I was there", and search, over the real park files of Cedar Point and Kings Island.
@Suite("Posts in the store")
struct PostStoreTests {
    typealias World = ChallengeStoreTests.World

    static let privacy = LocationPrivacy()
    static let cedarPoint: ParkID = "cedar-point"
    static let kingsIsland: ParkID = "kings-island"
    static let maverick: RideID = "cedar-point.maverick"
    static let steelVengeance: RideID = "cedar-point.steel-vengeance"
    static let diamondback: RideID = "kings-island.diamondback"

    /// A world with data/parks' Cedar Point and Kings Island loaded: the catalogue holds both
    /// parks, fenced, and their rides.
    static func world() async throws -> World {
        let w = try await World()
        _ = try await w.store.replaceParks([try Parks.definition("cedar-point"), try Parks.definition("kings-island")])
        return w
    }

    /// A post a second after the one before.
    @discardableResult
    func post(_ w: World, _ author: UserID, _ text: String, _ visibility: PostVisibility = .public, photos: [Int64] = [], parks: [ParkID] = [],
              rides: [RideID] = [], verifiedAt: ParkID? = nil) async throws -> PostView {
        w.clock.advance(1)
        return try await w.store.createPost(PostDraft(text: text, photos: photos, parks: parks, rides: rides, visibility: visibility, verifiedAt: verifiedAt),
                                            author: author, now: w.now, privacy: Self.privacy)
    }

    func edit(_ w: World, _ id: Int64, _ author: UserID, _ edit: PostEdit) async throws -> PostView {
        try await w.store.editPost(id, author: author, edit: edit, now: w.now, privacy: Self.privacy)
    }

    func read(_ w: World, _ id: Int64, by viewer: UserID) async throws -> PostView? {
        try await w.store.post(id, viewer: viewer, now: w.now, privacy: Self.privacy)
    }

    func views(_ w: World, _ feed: Feed, _ viewer: UserID, after: Int64? = nil, since: Int64? = nil, limit: Int = 100) async throws -> [PostView] {
        try await w.store.feed(feed, viewer: viewer, after: after, since: since, limit: limit, now: w.now, privacy: Self.privacy)
    }

    func feed(_ w: World, _ feed: Feed, _ viewer: UserID, after: Int64? = nil, since: Int64? = nil, limit: Int = 100) async throws -> [Int64] {
        try await self.views(w, feed, viewer, after: after, since: since, limit: limit).map(\.id)
    }

    func react(_ w: World, _ reaction: Reaction?, _ post: Int64, _ user: UserID) async throws -> PostView {
        try await w.store.setReaction(reaction, post: post, user: user, now: w.now, privacy: Self.privacy)
    }

    @discardableResult
    func comment(_ w: World, _ post: Int64, _ author: UserID, _ text: String) async throws -> CommentView {
        w.clock.advance(1)
        return try await w.store.addComment(to: post, author: author, text: text, now: w.now)
    }

    func thread(_ w: World, _ post: Int64, _ viewer: UserID, _ order: CommentOrder = .newest, after: Int64? = nil, limit: Int = 100) async throws -> [Int64]? {
        try await w.store.comments(on: post, viewer: viewer, order: order, after: after, limit: limit)?.map(\.id)
    }

    func search(_ w: World, _ text: String, by viewer: UserID, sort: PostSearchSort = .newest, limit: Int = 100, offset: Int = 0,
                _ adjust: (inout PostQuery) -> Void = { _ in }) async throws -> [PostHit] {
        var query = PostQuery(text: text, sort: sort)
        adjust(&query)
        return try await w.store.searchPosts(query, terms: PostRules.searchTerms(text), viewer: viewer, limit: limit, offset: offset, now: w.now,
                                             privacy: Self.privacy)
    }

    func photo(_ w: World, _ owner: UserID, _ n: Int) async throws -> Int64 {
        let image = try ImageInspector.inspect([UInt8](try Data(contentsOf: BackupTests.images.appendingPathComponent("coaster.png"))))
        return try await w.store.addPhoto(owner: owner, image: image, sha256: String(format: "%02x", n) + String(repeating: "0", count: 62),
                                          caption: nil, park: nil, ride: nil).id
    }

    @Test func createReadEditAndDelete() async throws {
        let w = try await Self.world()
        defer { w.remove() }
        let ann = try await w.user("ann"), bob = try await w.user("bob"), cat = try await w.user("cat")
        let created = try await self.post(w, ann, "Rode #Maverick twice, then #Coastér_Life!", rides: [Self.maverick])
        #expect(created.author == UserSummary(id: ann, username: "ann", displayName: "Ann"))
        #expect(created.text == "Rode #Maverick twice, then #Coastér_Life!" && created.visibility == .public && created.photos == [])
        #expect(created.hashtags == ["maverick", "coaster_life"])
        #expect(created.parks == [CatalogPark(id: Self.cedarPoint, name: "Cedar Point", fenced: true)])
        #expect(created.rides.map(\.id) == [Self.maverick] && created.rides.first?.name == "Maverick" && created.rides.first?.fenced == Self.maverick)
        #expect(created.ups == 0 && created.downs == 0 && created.comments == 0 && created.reaction == nil && created.verified == nil)
        #expect(created.createdAt == w.now && created.editedAt == nil)
        #expect(try await self.read(w, created.id, by: bob) == created)
        #expect(try await self.read(w, created.id + 1_000, by: ann) == nil)

        // An edit changes what it names, marks the post edited, and tags it anew.
        w.clock.advance(60)
        let edited = try await self.edit(w, created.id, ann, PostEdit(text: "Now #SteelVengeance", rides: [Self.steelVengeance, Self.maverick],
                                                                       visibility: .friends))
        #expect(edited.text == "Now #SteelVengeance" && edited.hashtags == ["steelvengeance"] && edited.visibility == .friends)
        #expect(edited.rides.map(\.id) == [Self.steelVengeance, Self.maverick] && edited.parks.map(\.id) == [Self.cedarPoint])
        #expect(edited.editedAt == w.now && edited.createdAt == created.createdAt)
        #expect(try await self.read(w, created.id, by: bob) == nil)
        let tagged = try await self.edit(w, created.id, ann, PostEdit(parks: [Self.kingsIsland]))
        #expect(tagged.parks.map(\.id) == [Self.kingsIsland, Self.cedarPoint] && tagged.hashtags == ["steelvengeance"] && tagged.text == edited.text)
        #expect(tagged.rides.map(\.id) == [Self.steelVengeance, Self.maverick])

        // Refusals, and nothing of a refused edit is kept.
        await #expect(throws: PostError.noSuchPost) { try await self.edit(w, created.id, bob, PostEdit(text: "mine")) }
        await #expect(throws: PostError.noSuchPost) { try await w.store.deletePost(created.id, author: bob) }
        try await w.befriend(ann, bob, named: "bob")
        await #expect(throws: PostError.notAuthor) { try await self.edit(w, created.id, bob, PostEdit(text: "mine")) }
        await #expect(throws: PostError.notAuthor) { try await w.store.deletePost(created.id, author: bob) }
        await #expect(throws: PostError.emptyPost) { try await self.edit(w, created.id, ann, PostEdit(text: " \n ", parks: [])) }
        await #expect(throws: PostError.unknownTag(pointer: "/rides/1")) {
            try await self.edit(w, created.id, ann, PostEdit(text: "gone", rides: [Self.maverick, "cedar-point.nothing"]))
        }
        await #expect(throws: PostError.unknownTag(pointer: "/parks/0")) { try await self.edit(w, created.id, ann, PostEdit(parks: ["nowhere"])) }
        #expect(try await self.read(w, created.id, by: ann) == tagged)
        await #expect(throws: PostError.unknownTag(pointer: "/parks/1")) { try await self.post(w, ann, "x", parks: [Self.cedarPoint, "nowhere"]) }
        await #expect(throws: PostError.unknownTag(pointer: "/rides/0")) { try await self.post(w, ann, "x", rides: ["kings-island.nothing"]) }
        await #expect(throws: PostError.noSuchUser) { try await self.post(w, UserID(999_999), "nobody") }

        // Photos: the author's own, shown to whoever may read the post.
        let annsPhoto = try await self.photo(w, ann, 1), bobsPhoto = try await self.photo(w, bob, 2)
        await #expect(throws: PostError.noSuchPhoto(index: 1)) { try await self.post(w, ann, "two", photos: [annsPhoto, bobsPhoto]) }
        #expect(try await w.store.photo(annsPhoto, viewer: cat) == nil)
        let pictured = try await self.post(w, ann, "", photos: [annsPhoto])
        #expect(pictured.photos == [annsPhoto] && pictured.text == "" && pictured.hashtags == [] && pictured.parks == [])
        #expect(try await w.store.photo(annsPhoto, viewer: cat)?.id == annsPhoto)
        await #expect(throws: PostError.emptyPost) { try await self.edit(w, pictured.id, ann, PostEdit(photos: [])) }
        await #expect(throws: PostError.noSuchPhoto(index: 0)) { try await self.edit(w, pictured.id, ann, PostEdit(photos: [bobsPhoto])) }
        _ = try await self.edit(w, pictured.id, ann, PostEdit(visibility: .friends))
        #expect(try await w.store.photo(annsPhoto, viewer: cat) == nil)
        #expect(try await self.read(w, pictured.id, by: ann)?.photos == [annsPhoto])

        // The author deletes: gone for everyone, and again is no such post.
        try await w.store.deletePost(created.id, author: ann)
        #expect(try await self.read(w, created.id, by: ann) == nil)
        await #expect(throws: PostError.noSuchPost) { try await w.store.deletePost(created.id, author: ann) }
        await #expect(throws: PostError.noSuchPost) { try await self.edit(w, created.id, ann, PostEdit(text: "back")) }
        #expect(try await self.feed(w, .user(ann), ann) == [pictured.id])
        #expect(try await w.t.sql.int("SELECT count(*) FROM post_tags WHERE post_id = ?", [created.id]) == 0)
    }

    @Test func whoMayReadAPostItsCommentsAndThumbs() async throws {
        let w = try await Self.world()
        defer { w.remove() }
        let ann = try await w.user("ann"), bob = try await w.user("bob"), cat = try await w.user("cat"), dan = try await w.user("dan")
        let eve = try await w.user("eve")
        try await w.befriend(ann, bob, named: "bob")
        _ = try await w.store.block(of: ann, dan)
        _ = try await w.store.block(of: eve, ann)
        let open = try await self.post(w, ann, "Maverick at night", rides: [Self.maverick]).id
        let friends = try await self.post(w, ann, "Maverick again, to friends", .friends, rides: [Self.maverick]).id

        /// What `viewer` reads of the two, newest first, after checking every way of reading says so.
        func reads(_ viewer: UserID) async throws -> [Int64] {
            var ids: [Int64] = []
            for id in [friends, open] {
                if try await self.read(w, id, by: viewer) != nil { ids.append(id) }
            }
            #expect(try await self.feed(w, .user(ann), viewer) == ids, "\(viewer)")
            #expect(try await self.feed(w, .ride(Self.maverick), viewer) == ids, "\(viewer)")
            #expect(try await self.feed(w, .park(Self.cedarPoint), viewer) == ids, "\(viewer)")
            #expect(try await self.feed(w, .public, viewer) == ids.filter { $0 == open }, "\(viewer)")
            #expect(try await self.search(w, "maverick", by: viewer).map(\.post.id) == ids, "\(viewer)")
            let thread: [Int64]? = ids.contains(open) ? [] : nil
            #expect(try await self.thread(w, open, viewer) == thread, "\(viewer)")
            return ids
        }
        #expect(try await reads(ann) == [friends, open])
        #expect(try await reads(bob) == [friends, open])
        #expect(try await reads(cat) == [open])
        #expect(try await reads(dan) == [])
        #expect(try await reads(eve) == [])

        // What may not be read does not exist; what may be read is not the reader's to change.
        await #expect(throws: PostError.noSuchPost) { try await self.comment(w, friends, cat, "hi") }
        await #expect(throws: PostError.noSuchPost) { try await self.comment(w, open, eve, "hi") }
        await #expect(throws: PostError.noSuchPost) { try await self.react(w, .up, open, dan) }
        await #expect(throws: PostError.noSuchPost) { try await self.react(w, .down, friends, cat) }
        await #expect(throws: PostError.noSuchPost) { try await w.store.deletePost(open, author: dan) }
        await #expect(throws: PostError.notAuthor) { try await w.store.deletePost(open, author: cat) }
        #expect(try await self.react(w, .up, open, cat).reaction == .up)

        // A friendship ended, a block lifted.
        try await w.store.removeFriend(of: bob, ann)
        #expect(try await reads(bob) == [open])
        try await w.store.unblock(of: ann, dan)
        #expect(try await reads(dan) == [open])
    }

    @Test func theHomeFeedHoldsOwnFriendsAndFollowedPosts() async throws {
        let w = try await Self.world()
        defer { w.remove() }
        let ann = try await w.user("ann"), bob = try await w.user("bob"), cat = try await w.user("cat"), fay = try await w.user("fay")
        let gus = try await w.user("gus"), hal = try await w.user("hal")
        try await w.befriend(ann, bob, named: "bob")
        try await w.befriend(hal, ann, named: "ann")
        for followed in [fay, gus, hal] { try await w.store.follow(ann, followed, rules: PeopleRules()) }
        let mine = try await self.post(w, ann, "mine", .friends).id
        let bobs = try await self.post(w, bob, "a friend's, to friends", .friends).id
        let faysPublic = try await self.post(w, fay, "followed, in public").id
        try await self.post(w, fay, "followed, to friends", .friends)
        let cats = try await self.post(w, cat, "a stranger's").id
        let gusPublic = try await self.post(w, gus, "followed, then blocking").id
        let halsFriends = try await self.post(w, hal, "a friend followed too, to friends", .friends).id
        #expect(try await self.feed(w, .home, ann) == [halsFriends, gusPublic, faysPublic, bobs, mine])
        #expect(try await self.feed(w, .home, bob) == [bobs, mine])
        #expect(try await self.feed(w, .home, cat) == [cats])

        // Blocked either way: nothing of theirs, follow or not.
        _ = try await w.store.block(of: gus, ann)
        #expect(try await self.feed(w, .home, ann) == [halsFriends, faysPublic, bobs, mine])
        _ = try await w.store.block(of: ann, hal)
        #expect(try await self.feed(w, .home, ann) == [faysPublic, bobs, mine])
        try await w.store.unfollow(ann, fay)
        #expect(try await self.feed(w, .home, ann) == [bobs, mine])
    }

    @Test func parkRideTagUserAndPublicFeeds() async throws {
        let w = try await Self.world()
        defer { w.remove() }
        let ann = try await w.user("ann"), bob = try await w.user("bob")
        let rideOnly = try await self.post(w, ann, "Maverick's launch #Launch", rides: [Self.maverick]).id
        let parkOnly = try await self.post(w, ann, "A day at Kings Island", parks: [Self.kingsIsland]).id
        let both = try await self.post(w, bob, "#LAUNCH and airtime", parks: [Self.cedarPoint], rides: [Self.diamondback]).id
        let friendsOnly = try await self.post(w, bob, "#launch, to friends", .friends, rides: [Self.maverick]).id
        #expect(try await self.feed(w, .park(Self.cedarPoint), ann) == [both, rideOnly])
        #expect(try await self.feed(w, .park(Self.kingsIsland), ann) == [both, parkOnly])
        #expect(try await self.feed(w, .ride(Self.maverick), ann) == [rideOnly])
        #expect(try await self.feed(w, .ride(Self.maverick), bob) == [friendsOnly, rideOnly])
        #expect(try await self.feed(w, .ride(Self.diamondback), ann) == [both])
        #expect(try await self.feed(w, .tag("launch"), ann) == [both, rideOnly])
        #expect(try await self.feed(w, .tag(try #require(PostRules.hashtag("#Laúnch"))), bob) == [friendsOnly, both, rideOnly])
        #expect(try await self.feed(w, .public, ann) == [both, parkOnly, rideOnly])
        #expect(try await self.feed(w, .public, bob) == [both, parkOnly, rideOnly])
        #expect(try await self.feed(w, .user(bob), ann) == [both])
        #expect(try await self.feed(w, .user(bob), bob) == [friendsOnly, both])
        #expect(try await self.feed(w, .park("nowhere"), ann) == [])
        #expect(try await self.feed(w, .ride("cedar-point.nothing"), ann) == [])
        #expect(try await self.feed(w, .tag("nothing"), ann) == [])
        let shown = try #require(try await self.views(w, .park(Self.kingsIsland), ann).first)
        #expect(shown.id == both && shown.parks.map(\.id) == [Self.cedarPoint, Self.kingsIsland] && shown.rides.map(\.id) == [Self.diamondback])
        #expect(shown.hashtags == ["launch"] && shown.author.id == bob)
        #expect(try await self.feed(w, .public, ann, limit: 0) == [])
    }

    @Test func pagesDownAndUpLeaveNoGapAndRepeatNothing() async throws {
        let w = try await Self.world()
        defer { w.remove() }
        let ann = try await w.user("ann"), bob = try await w.user("bob"), cat = try await w.user("cat"), fay = try await w.user("fay")
        try await w.befriend(ann, bob, named: "bob")
        try await w.store.follow(ann, fay, rules: PeopleRules())
        // 27 posts ann may read, three authors in turn, between posts she may not read.
        var all: [Int64] = []
        for n in 0..<27 {
            all.append(try await self.post(w, [ann, bob, fay][n % 3], "post \(n) #paged", rides: [Self.maverick]).id)
            try await self.post(w, cat, "hidden \(n) #paged", .friends, rides: [Self.maverick])
        }
        for feed in [Feed.home, .public, .tag("paged"), .ride(Self.maverick), .park(Self.cedarPoint)] {
            var down: [Int64] = []
            var after: Int64?
            var pages = 0
            while pages < 10 {
                let page = try await self.feed(w, feed, ann, after: after, limit: 10)
                pages += 1
                down += page
                guard page.count == 10 else { break }
                after = page.last
            }
            #expect(down == all.reversed() && pages == 3, "\(feed)")

            // Upwards from the oldest: each page the oldest of the newer posts, newest first.
            var up = [all[0]]
            pages = 0
            while pages < 10 {
                let page = try await self.feed(w, feed, ann, since: up.last, limit: 10)
                pages += 1
                #expect(page == page.sorted(by: >), "\(feed)")
                up += page.reversed()
                guard page.count == 10 else { break }
            }
            #expect(up == all && pages == 3, "\(feed)")
            #expect(try await self.feed(w, feed, ann, since: all.last, limit: 10) == [], "\(feed)")
        }
    }

    @Test func thumbsCountExactlyThroughChangesAndDeletedAccounts() async throws {
        let w = try await Self.world()
        defer { w.remove() }
        let ann = try await w.user("ann"), bob = try await w.user("bob"), cat = try await w.user("cat"), dan = try await w.user("dan")
        let id = try await self.post(w, ann, "Rate my trip").id
        func counts(_ view: PostView) -> [Int] { [view.ups, view.downs, view.comments] }

        var view = try await self.react(w, .up, id, bob)
        #expect(counts(view) == [1, 0, 0] && view.reaction == .up)
        view = try await self.react(w, .up, id, bob)
        #expect(counts(view) == [1, 0, 0] && view.reaction == .up)
        view = try await self.react(w, .down, id, bob)
        #expect(counts(view) == [0, 1, 0] && view.reaction == .down)
        view = try await self.react(w, .up, id, cat)
        #expect(counts(view) == [1, 1, 0] && view.reaction == .up)
        view = try await self.react(w, .down, id, dan)
        #expect(counts(view) == [1, 2, 0] && view.reaction == .down)
        view = try await self.react(w, nil, id, bob)
        #expect(counts(view) == [1, 1, 0] && view.reaction == nil)
        view = try await self.react(w, nil, id, bob)
        #expect(counts(view) == [1, 1, 0] && view.reaction == nil)
        view = try await self.react(w, .up, id, ann)
        #expect(counts(view) == [2, 1, 0] && view.reaction == .up)
        #expect(try await self.read(w, id, by: dan)?.reaction == .down)
        #expect(try await self.read(w, id, by: bob)?.reaction == nil)

        try await self.comment(w, id, cat, "one")
        try await self.comment(w, id, cat, "two")
        try await self.comment(w, id, dan, "three")
        #expect(try await self.read(w, id, by: ann).map(counts) == [2, 1, 3])

        // An account deleted takes its thumbs and comments, and the counts follow.
        try await w.t.sql.execute("DELETE FROM users WHERE id = ?", [cat.rawValue])
        #expect(try await self.read(w, id, by: ann).map(counts) == [1, 1, 1])
        try await w.t.sql.execute("DELETE FROM users WHERE id = ?", [dan.rawValue])
        #expect(try await self.read(w, id, by: ann).map(counts) == [1, 0, 0])
        #expect(try await w.t.sql.int("SELECT count(*) FROM post_reactions WHERE post_id = ?", [id]) == 1)
        // The author's account takes the post and all that hangs on it.
        try await self.comment(w, id, bob, "bye")
        try await w.t.sql.execute("DELETE FROM users WHERE id = ?", [ann.rawValue])
        #expect(try await self.read(w, id, by: bob) == nil)
        #expect(try await w.t.sql.int("SELECT (SELECT count(*) FROM post_reactions) + (SELECT count(*) FROM comments) + (SELECT count(*) FROM posts)") == 0)
    }

    @Test func commentsInBothOrdersAndWhoMayDeleteThem() async throws {
        let w = try await Self.world()
        defer { w.remove() }
        let ann = try await w.user("ann"), bob = try await w.user("bob"), cat = try await w.user("cat"), dan = try await w.user("dan")
        let id = try await self.post(w, ann, "Comment away").id
        let c1 = try await self.comment(w, id, bob, "first"), c2 = try await self.comment(w, id, cat, "second")
        let c3 = try await self.comment(w, id, ann, "third"), c4 = try await self.comment(w, id, bob, "fourth")
        #expect(c1.post == id && c1.author == UserSummary(id: bob, username: "bob", displayName: "Bob") && c1.text == "first")
        #expect(c4.createdAt == w.now)
        #expect(try await w.store.comments(on: id, viewer: cat, order: .oldest, after: nil, limit: 1) == [c1])
        #expect(try await self.thread(w, id, ann) == [c4.id, c3.id, c2.id, c1.id])
        #expect(try await self.thread(w, id, ann, .oldest) == [c1.id, c2.id, c3.id, c4.id])
        #expect(try await self.thread(w, id, ann, limit: 2) == [c4.id, c3.id])
        #expect(try await self.thread(w, id, ann, after: c3.id, limit: 2) == [c2.id, c1.id])
        #expect(try await self.thread(w, id, ann, .oldest, after: c1.id, limit: 2) == [c2.id, c3.id])
        #expect(try await self.thread(w, id + 1_000, ann) == nil)
        #expect(try await self.read(w, id, by: ann)?.comments == 4)

        // Blocked either way: out of each other's threads, still in the count.
        _ = try await w.store.block(of: bob, cat)
        #expect(try await self.thread(w, id, bob) == [c4.id, c3.id, c1.id])
        #expect(try await self.thread(w, id, cat) == [c3.id, c2.id])
        #expect(try await self.read(w, id, by: bob)?.comments == 4)

        // The comment's author and the post's may delete it; a reader learns it is not theirs,
        // anyone else that there is no such comment.
        _ = try await w.store.block(of: ann, dan)
        await #expect(throws: PostError.notAuthor) { try await w.store.deleteComment(c4.id, user: cat) }
        await #expect(throws: PostError.noSuchComment) { try await w.store.deleteComment(c4.id, user: dan) }
        await #expect(throws: PostError.noSuchComment) { try await w.store.deleteComment(c4.id + 1_000, user: ann) }
        try await w.store.deleteComment(c1.id, user: bob)
        try await w.store.deleteComment(c2.id, user: ann)
        await #expect(throws: PostError.noSuchComment) { try await w.store.deleteComment(c2.id, user: ann) }
        #expect(try await self.thread(w, id, ann) == [c4.id, c3.id])
        #expect(try await self.read(w, id, by: ann)?.comments == 2)

        // The post's deletion takes its comments.
        try await w.store.deletePost(id, author: ann)
        #expect(try await self.thread(w, id, bob) == nil)
        await #expect(throws: PostError.noSuchComment) { try await w.store.deleteComment(c3.id, user: ann) }
        #expect(try await w.t.sql.int("SELECT count(*) FROM comments") == 0)
    }

    @Test func iWasThereNeedsAVisitAndShowsToOthersAfterThePrivacyWindow() async throws {
        let w = try await Self.world()
        defer { w.remove() }
        let ann = try await w.user("ann"), bob = try await w.user("bob")
        try await w.befriend(ann, bob, named: "bob")
        await #expect(throws: PostError.noVisit(Self.cedarPoint)) { try await self.post(w, ann, "was there", verifiedAt: Self.cedarPoint) }
        _ = try await w.checkIn(ann, Self.cedarPoint)
        let enteredAt = w.now
        let there = try await self.post(w, ann, "Was there", verifiedAt: Self.cedarPoint)
        let visit = VerifiedVisit(park: CatalogPark(id: Self.cedarPoint, name: "Cedar Point", fenced: true), at: enteredAt)
        #expect(there.verified == visit)
        #expect(try await self.read(w, there.id, by: ann)?.verified == visit)
        #expect(try await self.read(w, there.id, by: bob).map { $0.verified == nil } == true)
        w.clock.advance(Self.privacy.timeToLive - 10)
        #expect(try await self.read(w, there.id, by: bob).map { $0.verified == nil } == true)
        #expect(try await self.views(w, .home, bob).first?.verified == nil)
        w.clock.advance(10)
        #expect(try await self.read(w, there.id, by: bob)?.verified == visit)
        #expect(try await self.views(w, .home, bob).first?.verified == visit)
        #expect(try await self.search(w, "was there", by: bob).first?.post.verified == visit)

        // Another park, or a visit whose last evidence is older than the window, backs nothing.
        await #expect(throws: PostError.noVisit(Self.kingsIsland)) { try await self.post(w, ann, "also", verifiedAt: Self.kingsIsland) }
        w.clock.advance(PostRules.verificationWindow)
        await #expect(throws: PostError.noVisit(Self.cedarPoint)) { try await self.post(w, ann, "long ago", verifiedAt: Self.cedarPoint) }
        #expect(try await self.read(w, there.id, by: bob)?.verified == visit)
    }

    @Test func aCatalogueParkMergedIntoALoadedParkTakesItsPostsAlong() async throws {
        let w = try await World()
        defer { w.remove() }
        _ = try await w.store.importCatalog(CatalogImport(attribution: nil, parks: [("alpha-land", "Alpha")],
                                                          rides: [CatalogStoreTests.entry("alpha-land.wooden-one", "Wooden One", height: 30)]))
        let ann = try await w.user("ann")
        let parked = try await self.post(w, ann, "A day at Alpha", parks: ["alpha-land"])
        let ridden = try await self.post(w, ann, "Wooden One!", rides: ["alpha-land.wooden-one"])
        #expect(parked.parks == [CatalogPark(id: "alpha-land", name: "Alpha", fenced: false)])
        // A post that says both keeps one tag of the park.
        try await w.t.sql.execute("INSERT INTO post_tags (post_id, kind, value, position) VALUES (?, 'about', 'alpha', 1)", [parked.id])
        _ = try await w.store.replaceParks([World.park(World.alpha, lon: 10)])
        let alpha = CatalogPark(id: World.alpha, name: "Alpha", fenced: true)
        #expect(try await self.read(w, parked.id, by: ann)?.parks == [alpha])
        #expect(try await self.read(w, ridden.id, by: ann)?.parks == [alpha])
        #expect(try await self.read(w, ridden.id, by: ann)?.rides.map(\.id) == ["alpha-land.wooden-one"])
        #expect(try await self.feed(w, .park(World.alpha), ann) == [ridden.id, parked.id])
        #expect(try await self.feed(w, .park("alpha-land"), ann) == [])
        #expect(try await self.edit(w, parked.id, ann, PostEdit(text: "Alpha again")).parks == [alpha])
    }

    /// The search's answer, against ``PostRules/matches(_:document:)`` over what each viewer may
    /// read: every query, whatever syntax a search engine would see in it, gives the posts whose
    /// text or a visible comment holds every term, and no error.
    @Test func searchFindsWordsPrefixesAndPhrasesAndNeverSyntax() async throws {
        let w = try await Self.world()
        defer { w.remove() }
        let ann = try await w.user("ann"), bob = try await w.user("bob"), cat = try await w.user("cat"), dan = try await w.user("dan")
        try await w.befriend(ann, bob, named: "bob")
        _ = try await w.store.block(of: cat, dan)
        struct Written { var id: Int64; var author: UserID; var visibility: PostVisibility; var text: String }
        var posts: [Written] = []
        var comments: [(post: Int64, author: UserID, text: String)] = []
        func write(_ author: UserID, _ text: String, _ visibility: PostVisibility = .public, parks: [ParkID] = [], rides: [RideID] = []) async throws -> Int64 {
            let view = try await self.post(w, author, text, visibility, parks: parks, rides: rides)
            posts.append(Written(id: view.id, author: author, visibility: visibility, text: text))
            return view.id
        }
        func say(_ post: Int64, _ author: UserID, _ text: String) async throws {
            try await self.comment(w, post, author, text)
            comments.append((post, author, text))
        }
        let airtime = try await write(ann, "Steel Vengeance airtime, then Maverick Maverick Maverick! #Airtime", rides: [Self.steelVengeance, Self.maverick])
        let launch = try await write(ann, "Maverick's launch was wild at night", rides: [Self.maverick])
        let thrill = try await write(bob, "Top Thrill 2 launch, then funnel cakes", parks: [Self.cedarPoint])
        let rain = try await write(bob, "Maverick in the rain, near the lake", .friends, rides: [Self.maverick])
        let diamond = try await write(cat, "Diamondback day at Kings Island (NEAR the Beast)", parks: [Self.kingsIsland])
        try await say(diamond, bob, "Maverick is better")
        try await say(thrill, dan, "Zeppelin mania")
        try await say(launch, cat, "launch OR not")
        _ = try await write(dan, "Zeppelin mania: the ride \"or\" the band", rides: [Self.diamondback])

        func blocked(_ a: UserID, _ b: UserID) -> Bool { (a == cat && b == dan) || (a == dan && b == cat) }
        func readable(_ post: Written, by viewer: UserID) -> Bool {
            post.author == viewer || (!blocked(post.author, viewer) && (post.visibility == .public || Set([post.author, viewer]) == Set([ann, bob])))
        }
        /// What a search should find for `viewer`: by id, whether only a comment matched.
        func expected(_ text: String, by viewer: UserID) -> [Int64: Bool] {
            let terms = PostRules.searchTerms(text)
            guard !terms.isEmpty else { return [:] }
            var found: [Int64: Bool] = [:]
            for post in posts where readable(post, by: viewer) {
                if PostRules.matches(terms, document: PostRules.searchDocument(post.text)) { found[post.id] = false; continue }
                if comments.contains(where: { $0.post == post.id && !blocked($0.author, viewer)
                                              && PostRules.matches(terms, document: PostRules.searchDocument($0.text)) }) {
                    found[post.id] = true
                }
            }
            return found
        }
        let queries = [
            "maverick", "MAVERICK!", "mav", "m", "launch maverick", "\"maverick launch\"", "\"mavericks launch", "\"maverick s lau", "maverick OR \"launch",
            "NEAR(maverick launch)", "near the", "*", "maverick*", "-maverick", "^maverick", "body:maverick", "maverick AND NOT rain", "\"", "'", "''",
            "(", ")", "\\", ":", "+", "{maverick}", "😀 maverick", "zeppelin mania", "\"zeppelin mania\"", "or", "or not", "top thrill 2", "2",
            "funnel cakes 2", "nothing", "airtime #airtime", "Mavérick", "maverick the", "\"the\"", "a\"b\"c", String(repeating: "x", count: 300),
        ]
        for viewer in [ann, bob, cat, dan] {
            for text in queries {
                let hits = try await self.search(w, text, by: viewer)
                let want = expected(text, by: viewer)
                #expect(Dictionary(uniqueKeysWithValues: hits.map { ($0.post.id, $0.inComment) }) == want, "\(text) for \(viewer)")
                #expect(hits.map(\.post.id) == want.keys.sorted(by: >), "\(text) for \(viewer), newest first")
                #expect(Set(try await self.search(w, text, by: viewer, sort: .relevance).map(\.post.id)) == Set(want.keys), "\(text) for \(viewer)")
            }
        }
        // A post matched by its comment only; by its own text and a comment.
        #expect(try await self.search(w, "better", by: ann).map(\.inComment) == [true])
        #expect(try await self.search(w, "launch", by: ann).first { $0.post.id == launch }?.inComment == false)
        // A comment by someone blocked either way does not make the post match.
        #expect(try await self.search(w, "zeppelin", by: cat).map(\.post.id) == [])
        #expect(try await self.search(w, "zeppelin", by: ann).map(\.post.id).contains(thrill))

        // Relevance: the word thrice before once, whichever is newer.
        #expect(try await self.search(w, "maverick", by: ann) { $0.author = ann }.map(\.post.id) == [launch, airtime])
        #expect(try await self.search(w, "maverick", by: ann, sort: .relevance) { $0.author = ann }.map(\.post.id) == [airtime, launch])

        // Filters.
        #expect(try await self.search(w, "launch", by: ann) { $0.park = Self.cedarPoint }.map(\.post.id) == [thrill, launch])
        #expect(try await self.search(w, "maverick", by: ann) { $0.ride = Self.maverick }.map(\.post.id) == [rain, launch, airtime])
        #expect(try await self.search(w, "maverick", by: ann) { $0.park = Self.kingsIsland }.map(\.post.id) == [diamond])
        #expect(try await self.search(w, "maverick", by: ann) { $0.hashtag = "airtime" }.map(\.post.id) == [airtime])
        #expect(try await self.search(w, "launch", by: ann) { $0.author = bob }.map(\.post.id) == [thrill])
        let launchedAt = try #require(try await self.read(w, launch, by: ann)).createdAt
        #expect(try await self.search(w, "maverick", by: ann) { $0.from = launchedAt }.map(\.post.id) == [diamond, rain, launch])
        #expect(try await self.search(w, "maverick", by: ann) { $0.to = launchedAt }.map(\.post.id) == [airtime])
        #expect(try await self.search(w, "maverick", by: ann) { $0.ride = "cedar-point.nothing" }.map(\.post.id) == [])

        // Pages by offset.
        var paged: [Int64] = []
        for offset in 0..<5 { paged += try await self.search(w, "maverick", by: ann, limit: 1, offset: offset).map(\.post.id) }
        #expect(paged == [diamond, rain, launch, airtime])

        // Words are what the fold leaves, marks and all, on both stores: "नमस" begins "नमस्ते", but "त"
        // is no word of it (a tokenizer that split words at their marks would find one).
        let hindi = try await write(cat, "नमस्ते दुनिया")
        #expect(try await self.search(w, "नमस्ते", by: ann).map(\.post.id) == [hindi])
        #expect(try await self.search(w, "दुनि", by: ann).map(\.post.id) == [hindi])
        #expect(try await self.search(w, "नमस्ते दुनिया", by: ann).map(\.post.id) == [hindi])
        #expect(try await self.search(w, "नमस त", by: ann).map(\.post.id) == [])

        // Edits and deletions are searched as they are now.
        _ = try await self.edit(w, launch, ann, PostEdit(text: "Maverick at night"))
        #expect(try await self.search(w, "wild", by: ann).map(\.post.id) == [])
        #expect(try await self.search(w, "launch", by: ann).first { $0.post.id == launch }?.inComment == true)
        try await w.store.deletePost(diamond, author: cat)
        #expect(try await self.search(w, "better", by: ann).map(\.post.id) == [])
    }
}
