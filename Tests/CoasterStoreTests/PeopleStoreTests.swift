import CoasterCore
@testable import CoasterStore
import CoasterTestSupport
import Foundation
import GRDB
import Testing

/// Profiles, people search, "riders like you" and follows through the store interface, on either
/// store: the same answers from both.
@Suite("People in the store")
struct PeopleStoreTests {
    typealias World = ChallengeStoreTests.World

    static let rules = PeopleRules()

    /// A user with a display name of their own.
    func user(_ w: World, _ username: String, _ displayName: String, findable: Bool = true) async throws -> UserID {
        let id = try await w.store.createUser(username: username, displayName: displayName, passwordHash: "x", role: .member).id
        if findable { _ = try await w.store.updateProfile(id, ProfileChanges(findable: true)) }
        return id
    }

    func found(_ w: World, _ q: String, by viewer: UserID, limit: Int = 20) async throws -> [String] {
        try await w.store.findPeople(PeopleRules.searchKey(q), viewer: viewer, limit: limit).map(\.user.username)
    }

    @Test func profileFieldsAreSetCheckedAndCleared() async throws {
        let w = try await World(parks: true)
        defer { w.remove() }
        let ann = try await w.user("ann")
        let status = try PeopleRules.status(emoji: "🎢", text: "  Front row  ")
        #expect(status == ProfileStatus(emoji: "🎢", text: "Front row"))
        var profile = try await w.store.updateProfile(ann, ProfileChanges(
            bio: "Coasters!", status: .some(status), homePark: .some(World.alpha), favouriteRides: [World.c2, World.c1], findable: true))
        #expect(profile.bio == "Coasters!")
        #expect(profile.card.status == status)
        #expect(profile.card.homePark?.id == World.alpha)
        #expect(profile.card.favouriteRides.map(\.id) == [World.c2, World.c1])
        #expect(profile.card.favouriteRides.first?.park.id == World.alpha)
        #expect(profile.findable)
        #expect(try await w.store.profile(ann) == profile)

        // Nothing of a refused change is written: the status that came with it stays as it was.
        let other = try PeopleRules.status(emoji: "🌧️", text: "closed")
        await #expect(throws: PeopleError.unknownPark) {
            try await w.store.updateProfile(ann, ProfileChanges(status: .some(other), homePark: .some("atlantis")))
        }
        await #expect(throws: PeopleError.unknownRide(index: 1)) {
            try await w.store.updateProfile(ann, ProfileChanges(status: .some(other), favouriteRides: [World.c1, "alpha.nothing"]))
        }
        await #expect(throws: PeopleError.duplicateRide(index: 2)) {
            try await w.store.updateProfile(ann, ProfileChanges(status: .some(other), favouriteRides: [World.c1, World.b1, World.c1]))
        }
        #expect(try await w.store.profile(ann) == profile)

        // Members left out stay; null and [] clear.
        profile = try await w.store.updateProfile(ann, ProfileChanges(displayName: "Ann B"))
        #expect(profile.card.status == status && profile.card.homePark?.id == World.alpha && profile.card.favouriteRides.count == 2)
        profile = try await w.store.updateProfile(ann, ProfileChanges(status: .some(nil), homePark: .some(nil), favouriteRides: []))
        #expect(profile.card == ProfileCard())
        #expect(profile.bio == "Coasters!" && profile.findable)
    }

    @Test func aFencedRidesIdNamesItsCatalogueEntry() async throws {
        let w = try await World(parks: true)
        defer { w.remove() }
        let ann = try await w.user("ann")
        // A catalogue entry of another id linked to the fenced ride, as a catalogue file loaded
        // before the park's can make one.
        try await w.t.sql.execute("UPDATE catalog_rides SET id = 'alpha.the-first' WHERE id = ?", [World.c1.rawValue])
        let profile = try await w.store.updateProfile(ann, ProfileChanges(favouriteRides: [World.c1]))
        #expect(profile.card.favouriteRides.map(\.id) == ["alpha.the-first"])
        await #expect(throws: PeopleError.duplicateRide(index: 1)) {
            try await w.store.updateProfile(ann, ProfileChanges(favouriteRides: [World.c1, "alpha.the-first"]))
        }
    }

    @Test func searchFindsFindableUsersByAWordOrUsernamePrefix() async throws {
        let w = try await World()
        defer { w.remove() }
        let me = try await self.user(w, "viewer", "Viewer", findable: false)
        _ = try await self.user(w, "zoe_r", "Zoë Ångström-Řehoř")
        _ = try await self.user(w, "marie", "Ann-Marie Lee")
        _ = try await self.user(w, "hidden", "Zoë Hidden", findable: false)
        #expect(try await self.found(w, "zoe", by: me) == ["zoe_r"])
        #expect(try await self.found(w, "ZOË", by: me) == ["zoe_r"])
        #expect(try await self.found(w, "angs", by: me) == ["zoe_r"])
        #expect(try await self.found(w, "rehor", by: me) == ["zoe_r"])
        #expect(try await self.found(w, "ann mar", by: me) == ["marie"])
        #expect(try await self.found(w, "lee", by: me) == ["marie"])
        // The username, and a word of it.
        #expect(try await self.found(w, "zoe_", by: me) == ["zoe_r"])
        #expect(try await self.found(w, "mari", by: me) == ["marie"])
        // A word inside a word, or words out of order, are not prefixes.
        #expect(try await self.found(w, "arie", by: me) == [])
        #expect(try await self.found(w, "lee ann", by: me) == [])
        #expect(try await self.found(w, "hidden", by: me) == [])
        #expect(try await self.found(w, "!!", by: me) == [])
        // The opt-in decides, and a new name is found by its new words only.
        let hidden = try #require(try await w.store.user(named: "hidden")).id
        _ = try await w.store.updateProfile(hidden, ProfileChanges(findable: true))
        #expect(try await self.found(w, "hidden", by: me) == ["hidden"])
        _ = try await w.store.updateProfile(hidden, ProfileChanges(displayName: "Quiet One"))
        #expect(try await self.found(w, "zo", by: me) == ["zoe_r"])
        #expect(try await self.found(w, "quiet", by: me) == ["hidden"])
        _ = try await w.store.updateProfile(hidden, ProfileChanges(findable: false))
        #expect(try await self.found(w, "quiet", by: me) == [])
    }

    @Test func searchOrdersByKeyAndStopsAtTheLimit() async throws {
        let w = try await World()
        defer { w.remove() }
        let me = try await self.user(w, "viewer", "Viewer", findable: false)
        // Each found by several keys ("ann ann", "ann"): once each, in the order of its first key.
        let annabel = try await self.user(w, "annabel", "Annabel")
        let ann = try await self.user(w, "ann2", "Ann Ann")
        let anna = try await self.user(w, "anna", "Anna Ann")
        let hits = try await w.store.findPeople("ann", viewer: me, limit: 10)
        #expect(hits.map(\.user.id) == [ann, anna, annabel])
        #expect(try await w.store.findPeople("ann", viewer: me, limit: 2).map(\.user.id) == [ann, anna])
        #expect(try await w.store.findPeople("", viewer: me, limit: 10).isEmpty)
        // The viewer is no exception when findable.
        #expect(try await w.store.findPeople("view", viewer: me, limit: 10).isEmpty)
        _ = try await w.store.updateProfile(me, ProfileChanges(findable: true))
        #expect(try await w.store.findPeople("view", viewer: me, limit: 10).map(\.user.id) == [me])
    }

    @Test func blockedUsersAreNotFoundEitherWay() async throws {
        let w = try await World()
        defer { w.remove() }
        let ann = try await self.user(w, "ann", "Ann Rider"), bob = try await self.user(w, "bob", "Bob Rider")
        let cat = try await self.user(w, "cat", "Cat Rider")
        _ = try await w.store.block(of: ann, bob)
        #expect(try await self.found(w, "rider", by: ann) == ["ann", "cat"])
        #expect(try await self.found(w, "rider", by: bob) == ["bob", "cat"])
        #expect(try await self.found(w, "rider", by: cat) == ["ann", "bob", "cat"])
        try await w.store.unblock(of: ann, bob)
        #expect(try await self.found(w, "rider", by: bob) == ["ann", "bob", "cat"])
    }

    @Test func hitsCarryTheCardAndTheViewersTies() async throws {
        let w = try await World(parks: true)
        defer { w.remove() }
        let ann = try await self.user(w, "ann", "Ann"), bob = try await self.user(w, "bob", "Bob")
        let status = ProfileStatus(emoji: "🎢", text: "riding")
        _ = try await w.store.updateProfile(bob, ProfileChanges(status: .some(status), homePark: .some(World.beta)))
        var hit = try #require(try await w.store.findPeople("bob", viewer: ann, limit: 5).first)
        #expect(hit.status == status && hit.homePark?.id == World.beta && hit.homePark?.name == "Beta")
        #expect(!hit.friend && !hit.following && hit.photo == nil)
        try await w.befriend(ann, bob, named: "bob")
        try await w.store.follow(ann, bob, rules: Self.rules)
        hit = try #require(try await w.store.findPeople("bob", viewer: ann, limit: 5).first)
        #expect(hit.friend && hit.following)
    }

    @Test func followsAreIdempotentCountedAndEndedByABlock() async throws {
        let w = try await World()
        defer { w.remove() }
        let ann = try await w.user("ann"), bob = try await w.user("bob"), cat = try await w.user("cat")
        try await w.store.follow(ann, bob, rules: Self.rules)
        try await w.store.follow(ann, bob, rules: Self.rules)
        try await w.store.follow(bob, ann, rules: Self.rules)
        try await w.store.follow(cat, bob, rules: Self.rules)
        #expect(try await w.store.isFollowing(ann, bob))
        #expect(try await w.store.isFollowing(bob, ann))
        #expect(try await !w.store.isFollowing(bob, cat))
        #expect(try await w.store.profile(bob)?.follows == FollowCounts(followers: 2, following: 1))
        #expect(try await w.store.profile(ann)?.follows == FollowCounts(followers: 1, following: 1))
        #expect(try await w.t.sql.ints("SELECT count(*) FROM user_follows WHERE followee_id = ?", [bob.rawValue]) == [2])

        await #expect(throws: PeopleError.cannotFollowSelf) { try await w.store.follow(ann, ann, rules: Self.rules) }
        await #expect(throws: FriendshipError.noSuchUser) { try await w.store.follow(ann, UserID(9_999), rules: Self.rules) }

        // A block ends the follows both ways, and none may start again, either way.
        _ = try await w.store.block(of: bob, ann)
        #expect(try await !w.store.isFollowing(ann, bob))
        #expect(try await !w.store.isFollowing(bob, ann))
        #expect(try await w.store.profile(bob)?.follows == FollowCounts(followers: 1, following: 0))
        await #expect(throws: FriendshipError.noSuchUser) { try await w.store.follow(ann, bob, rules: Self.rules) }
        await #expect(throws: FriendshipError.noSuchUser) { try await w.store.follow(bob, ann, rules: Self.rules) }
        try await w.store.unblock(of: bob, ann)
        try await w.store.follow(ann, bob, rules: Self.rules)

        try await w.store.unfollow(ann, bob)
        try await w.store.unfollow(ann, bob)
        try await w.store.unfollow(ann, UserID(9_999))
        #expect(try await !w.store.isFollowing(ann, bob))
        #expect(try await w.store.profile(bob)?.follows == FollowCounts(followers: 1, following: 0))
    }

    @Test func followsStopAtTheLimit() async throws {
        let w = try await World()
        defer { w.remove() }
        var rules = PeopleRules()
        rules.maximumFollowing = 2
        let ann = try await w.user("ann"), bob = try await w.user("bob"), cat = try await w.user("cat"), dan = try await w.user("dan")
        try await w.store.follow(ann, bob, rules: rules)
        try await w.store.follow(ann, cat, rules: rules)
        await #expect(throws: PeopleError.tooManyFollows(limit: 2)) { try await w.store.follow(ann, dan, rules: rules) }
        // Following again someone already followed is no new follow.
        try await w.store.follow(ann, cat, rules: rules)
        try await w.store.unfollow(ann, bob)
        try await w.store.follow(ann, dan, rules: rules)
    }

    @Test func theProfilePageShowsTheCardAndFollows() async throws {
        let w = try await World(parks: true)
        defer { w.remove() }
        let ann = try await w.user("ann"), bob = try await w.user("bob")
        try await w.befriend(ann, bob, named: "bob")
        _ = try await w.store.updateProfile(bob, ProfileChanges(bio: "hi", status: .some(ProfileStatus(emoji: "🎡")), homePark: .some(World.alpha),
                                                                 favouriteRides: [World.b1]))
        try await w.store.follow(ann, bob, rules: Self.rules)
        let page = try #require(try await w.store.profilePage(of: bob, viewer: ann, privacy: LocationPrivacy()))
        #expect(page.bio == "hi" && page.card.status?.emoji == "🎡" && page.card.homePark?.id == World.alpha)
        #expect(page.card.favouriteRides.map(\.id) == [World.b1])
        #expect(page.follows == FollowCounts(followers: 1, following: 0) && page.followedByViewer)
        #expect(try await w.store.profilePage(of: ann, viewer: bob, privacy: LocationPrivacy())?.followedByViewer == false)
    }

    // MARK: Riders like you

    /// Checks `user` in at the rides' parks (unless they are there already) and logs each of `rides` once.
    func rides(_ w: World, _ user: UserID, _ rides: [RideID]) async throws {
        for park in Set(rides.map(\.park)) { _ = try? await w.checkIn(user, park) }
        for ride in rides { try await w.ride(user, ride) }
    }

    func suggested(_ w: World, for viewer: UserID, limit: Int = 10, rules: PeopleRules = Self.rules) async throws -> [String] {
        try await w.store.suggestedPeople(for: viewer, limit: limit, rules: rules, privacy: LocationPrivacy()).map {
            "\($0.person.user.username) \($0.sharedCredits) \($0.mutualFriends)"
        }
    }

    @Test func ridersLikeYouPutFriendsOfFriendsFirstThenSharedCredits() async throws {
        let w = try await World(parks: true)
        defer { w.remove() }
        let me = try await self.user(w, "me", "Me")
        try await self.rides(w, me, [World.c1, World.c2, World.b1, World.carousel])
        // Shares three credits (the carousel is no credit), two, one; none; not findable.
        let three = try await self.user(w, "three", "Three"), two = try await self.user(w, "two", "Two")
        let one = try await self.user(w, "one", "One"), none = try await self.user(w, "none", "None")
        let shy = try await self.user(w, "shy", "Shy", findable: false)
        try await self.rides(w, three, [World.c1, World.c2, World.b1, World.carousel])
        try await self.rides(w, two, [World.c2, World.b1])
        try await self.rides(w, one, [World.carousel, World.c1])
        try await self.rides(w, none, [World.carousel])
        try await self.rides(w, shy, [World.c1, World.c2, World.b1])
        // Others' credits count once their first rides are older than the time-to-live.
        #expect(try await self.suggested(w, for: me) == [])
        w.clock.advance(LocationPrivacy().timeToLive)
        #expect(try await self.suggested(w, for: me) == ["three 3 0", "two 2 0", "one 1 0"])

        // A friend's friends come first, however few credits they share; the friend is none.
        let friend = try await self.user(w, "friend", "Friend")
        try await w.befriend(me, friend, named: "friend")
        try await w.befriend(friend, none, named: "none")
        try await w.befriend(one, friend, named: "friend")
        #expect(try await self.suggested(w, for: me) == ["one 1 1", "none 0 1", "three 3 0", "two 2 0"])
        #expect(try await self.suggested(w, for: me, limit: 2) == ["one 1 1", "none 0 1"])

        // Opting out, a request pending either way, or a block either way takes one out.
        _ = try await w.store.updateProfile(three, ProfileChanges(findable: false))
        _ = try await w.store.requestFriend(from: me, to: "none")
        _ = try await w.store.requestFriend(from: two, to: "me")
        _ = try await w.store.block(of: one, me)
        #expect(try await self.suggested(w, for: me) == [])
        _ = try await w.store.updateProfile(three, ProfileChanges(findable: true))
        _ = try await w.store.block(of: me, three)
        #expect(try await self.suggested(w, for: me) == [])
        // Those who blocked or were blocked see nothing of the other either.
        #expect(try await !self.suggested(w, for: one).contains { $0.hasPrefix("me ") })
        #expect(try await !self.suggested(w, for: three).contains { $0.hasPrefix("me ") })
    }

    @Test func ridesLoggedBeforeOptingInCount() async throws {
        let w = try await World(parks: true)
        defer { w.remove() }
        let me = try await self.user(w, "me", "Me"), late = try await self.user(w, "late", "Late", findable: false)
        try await self.rides(w, me, [World.c1])
        try await self.rides(w, late, [World.c1, World.c2])
        w.clock.advance(LocationPrivacy().timeToLive)
        #expect(try await self.suggested(w, for: me) == [])
        _ = try await w.store.updateProfile(late, ProfileChanges(findable: true))
        #expect(try await self.suggested(w, for: me) == ["late 1 0"])
        // A ride logged after opting in is found too: the viewer's own at once, the other's once
        // it is older than the time-to-live (a count that moves at once would say where they ride).
        try await self.rides(w, me, [World.c2, World.b1])
        #expect(try await self.suggested(w, for: me) == ["late 2 0"])
        try await self.rides(w, late, [World.b1])
        #expect(try await self.suggested(w, for: me) == ["late 2 0"])
        w.clock.advance(LocationPrivacy().timeToLive)
        #expect(try await self.suggested(w, for: me) == ["late 3 0"])
    }

    @Test func theSamplesAreBoundedAndTheShownCountsExact() async throws {
        let w = try await World(parks: true)
        defer { w.remove() }
        let me = try await self.user(w, "me", "Me")
        try await self.rides(w, me, [World.c1, World.c2])
        let a = try await self.user(w, "a", "A"), b = try await self.user(w, "b", "B"), c = try await self.user(w, "c", "C")
        try await self.rides(w, a, [World.c1])
        try await self.rides(w, b, [World.c1, World.c2])
        try await self.rides(w, c, [World.c2])
        w.clock.advance(LocationPrivacy().timeToLive)
        #expect(try await self.suggested(w, for: me) == ["b 2 0", "a 1 0", "c 1 0"])
        // One rider read per credit, the first by id: a for c1, b for c2. B's count is still
        // both credits: the samples find candidates, and the chosen are counted in full.
        var rules = PeopleRules()
        rules.ridersPerCredit = 1
        #expect(try await self.suggested(w, for: me, rules: rules) == ["b 2 0", "a 1 0"])
        rules = PeopleRules()
        rules.suggestionCredits = 1
        #expect(try await self.suggested(w, for: me, rules: rules) == ["b 2 0", "a 1 0"])
        // Only the first limit × measuredPerPlace of the samples' order are measured.
        rules = PeopleRules()
        rules.measuredPerPlace = 1
        #expect(try await self.suggested(w, for: me, limit: 1, rules: rules) == ["b 2 0"])
    }

    @Test func mutualFriendsAreCountedInFull() async throws {
        let w = try await World()
        defer { w.remove() }
        let me = try await self.user(w, "me", "Me"), target = try await self.user(w, "target", "Target")
        var friends: [UserID] = []
        for i in 0..<3 {
            let f = try await self.user(w, "f\(i)", "F\(i)")
            try await w.befriend(me, f, named: "f\(i)")
            // Both ways round: the target asked some of them, others asked the target.
            if i % 2 == 0 { try await w.befriend(f, target, named: "target") } else { try await w.befriend(target, f, named: "f\(i)") }
            friends.append(f)
        }
        #expect(try await self.suggested(w, for: me) == ["target 0 3"])
        var rules = PeopleRules()
        rules.friendsConsidered = 1
        #expect(try await self.suggested(w, for: me, rules: rules) == ["target 0 3"])
        rules.friendsOfEachFriend = 0
        #expect(try await self.suggested(w, for: me, rules: rules) == [])
    }

    @Test(.enabled(if: TestDatabase.isSQLite)) func aSearchIsARangeOfTheNameKeys() async throws {
        let plan = try await QueryPlanTests.plan(SpatiaLiteStore.nameRange, ["key": "ann", "end": "ann\u{10FFFF}", "viewer": 1, "rows": 100])
        #expect(plan.contains { $0.contains("SEARCH k USING PRIMARY KEY (key>? AND key<?)") }, "\(plan)")
        #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(plan)")
        let riders = try await QueryPlanTests.plan(SpatiaLiteStore.findableRiders, ["p.r", 1, 0.0, 50])
        #expect(riders.contains { $0.contains("ride_counts_findable (ride_id=?") }, "\(riders)")
        #expect(riders.contains { $0.contains("ride_logs_by_user (user_id=? AND ride_id=?)") }, "\(riders)")
    }

    /// On PostgreSQL too a search whose range holds more keys than it reads is that range of the
    /// name keys' primary key (a `COLLATE "C"` btree) read in order and stopped at the limit (a
    /// range smaller than that may be fetched whole and sorted: it is small), and a credit's
    /// findable riders a range of their partial index, with thousands of rows there.
    @Test(.enabled(if: !TestDatabase.isSQLite)) func aSearchIsARangeOfTheNameKeysOnPostgreSQL() async throws {
        let t = try await TemporaryStore()
        defer { t.remove() }
        try await t.sql.execute("""
            INSERT INTO users (id, username, display_name, password_hash, role, created_at, findable)
            SELECT g, 'u' || g, 'U', 'x', 'member', 0, true FROM generate_series(1, 5000) g
            """)
        try await t.sql.execute("INSERT INTO people_names (key, user_id) SELECT 'name ' || g, g FROM generate_series(1, 5000) g")
        try await t.sql.execute("INSERT INTO ride_counts (user_id, ride_id, rides) SELECT g, 'p.r' || (g % 20), 1 FROM generate_series(1, 5000) g")
        try await t.sql.execute("ANALYZE people_names")
        try await t.sql.execute("ANALYZE ride_counts")
        let search = try await t.sql.strings("""
            EXPLAIN SELECT k.user_id FROM people_names k WHERE k.key >= 'name 1' AND k.key < 'name 1' || chr(1114111)
              AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker = 1 AND b.blocked = k.user_id)
              AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker = k.user_id AND b.blocked = 1)
            ORDER BY k.key, k.user_id LIMIT 320
            """).joined(separator: "\n")
        #expect(search.contains("people_names_pkey") && !search.contains("Seq Scan") && !search.contains("Sort"), "\(search)")
        let riders = try await t.sql.strings("""
            EXPLAIN SELECT user_id FROM ride_counts WHERE ride_id = 'p.r3' AND findable AND user_id <> 1 ORDER BY user_id LIMIT 50
            """).joined(separator: "\n")
        #expect(riders.contains("ride_counts_findable") && !riders.contains("Seq Scan"), "\(riders)")
    }
}
