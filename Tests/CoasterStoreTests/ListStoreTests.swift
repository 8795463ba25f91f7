import CoasterCore
@testable import CoasterStore
import CoasterTestSupport
import Foundation
import Testing

/// Ride lists through the store interface, on either store: who reads what, items and their
/// order, checks by ride logs, visits and hand, what others see of a check and when, the changes
/// followers get, likes, follows, copies and share links.
@Suite("Ride lists in the store")
struct ListStoreTests {
    typealias World = ChallengeStoreTests.World

    static let privacy = LocationPrivacy()
    static let rules = ListRules()

    func create(_ w: World, _ owner: UserID, _ title: String, _ visibility: ListVisibility = .private, rules: ListRules = Self.rules) async throws
        -> RideListView {
        try await w.store.createList(ListDraft(title: title, description: "about " + title, visibility: visibility), owner: owner, rules: rules, privacy: Self.privacy)
    }

    @discardableResult
    func add(_ w: World, _ list: Int64, _ owner: UserID, _ target: ListItemTarget, note: String? = nil, at position: Int? = nil,
             rules: ListRules = Self.rules) async throws -> ListItemView {
        try await w.store.addItem(to: list, owner: owner, target: target, note: note, position: position, rules: rules, privacy: Self.privacy)
    }

    func items(_ w: World, _ list: Int64, viewer: UserID, sort: ListSort = .custom) async throws -> [ListItemView]? {
        try await w.store.items(of: list, viewer: viewer, sort: sort, privacy: Self.privacy, limit: 100, offset: 0)
    }

    /// The targets in custom order, checking that positions are 0..<n.
    func order(_ w: World, _ list: Int64, _ owner: UserID) async throws -> [ListItemTarget] {
        let items = try #require(try await self.items(w, list, viewer: owner))
        #expect(items.map(\.position) == Array(items.indices))
        #expect(try await w.store.list(list, viewer: owner, privacy: Self.privacy)?.items == items.count)
        return items.map(\.target)
    }

    func edit(_ w: World, _ item: ListItemView, in list: Int64, _ owner: UserID, _ edit: ListItemEdit) async throws -> ListItemView {
        try await w.store.editItem(item.id, in: list, owner: owner, edit: edit, privacy: Self.privacy)
    }

    @Test func whoMayReadAList() async throws {
        let w = try await World(parks: true)
        defer { w.remove() }
        let ann = try await w.user("ann"), bob = try await w.user("bob"), cat = try await w.user("cat"), dan = try await w.user("dan")
        let eve = try await w.user("eve")
        try await w.befriend(ann, bob, named: "bob")
        _ = try await w.store.block(of: ann, dan)
        _ = try await w.store.block(of: eve, ann)
        let mine = try await self.create(w, ann, "mine").id, friends = try await self.create(w, ann, "friends", .friends).id
        let open = try await self.create(w, ann, "open", .public).id, link = try await self.create(w, ann, "link", .link)
        try await self.add(w, link.id, ann, .ride(World.c1))

        func reads(_ viewer: UserID) async throws -> [Int64] {
            var ids: [Int64] = []
            for id in [mine, friends, open, link.id] {
                if try await w.store.list(id, viewer: viewer, privacy: Self.privacy) != nil { ids.append(id) }
            }
            #expect(try await w.store.lists(of: ann, viewer: viewer, privacy: Self.privacy, limit: 10, before: nil).map(\.id) == ids.reversed())
            return ids
        }
        #expect(try await reads(ann) == [mine, friends, open, link.id])
        #expect(try await reads(bob) == [friends, open])
        #expect(try await reads(cat) == [open])
        #expect(try await reads(dan) == [])
        #expect(try await reads(eve) == [])
        #expect(try await w.store.lists(of: ann, viewer: ann, privacy: Self.privacy, limit: 2, before: open).map(\.id) == [friends, mine])
        #expect(try await self.items(w, mine, viewer: bob) == nil)
        #expect(try await self.items(w, open, viewer: dan) == nil)
        #expect(try await self.items(w, open, viewer: cat) == [])

        // What may not be read does not exist; what may be read is not the reader's to change.
        await #expect(throws: ListError.noSuchList) { try await w.store.setListLike(mine, user: bob, liked: true, privacy: Self.privacy) }
        await #expect(throws: ListError.noSuchList) {
            try await w.store.setListFollow(open, user: dan, following: true, rules: Self.rules, privacy: Self.privacy)
        }
        await #expect(throws: ListError.noSuchList) { try await w.store.copyList(link.id, user: cat, rules: Self.rules, privacy: Self.privacy) }
        await #expect(throws: ListError.noSuchList) { try await self.add(w, mine, bob, .ride(World.c1)) }
        await #expect(throws: ListError.notOwner) { try await self.add(w, open, bob, .ride(World.c1)) }
        await #expect(throws: ListError.notOwner) {
            try await w.store.editList(friends, owner: bob, edit: ListEdit(title: "mine now"), privacy: Self.privacy)
        }
        await #expect(throws: ListError.notOwner) { try await w.store.deleteList(open, owner: cat) }
        await #expect(throws: ListError.noSuchList) { try await w.store.deleteList(open, owner: dan) }
        await #expect(throws: ListError.noSuchList) { try await w.store.deleteList(999, owner: ann) }

        // The share link: to the owner only, read by anyone who holds it, revocable.
        let token = try #require(link.shareToken)
        #expect(try await w.store.list(open, viewer: ann, privacy: Self.privacy)?.shareToken == nil)
        let shared = try #require(try await w.store.sharedList(token: token, sort: .custom, privacy: Self.privacy))
        #expect(shared.list.id == link.id && shared.list.shareToken == nil && shared.items.map(\.target) == [.ride(World.c1)])
        let renewed = try await w.store.editList(link.id, owner: ann, edit: ListEdit(newLink: true), privacy: Self.privacy)
        let newToken = try #require(renewed.shareToken)
        #expect(newToken != token)
        #expect(try await w.store.sharedList(token: token, sort: .custom, privacy: Self.privacy) == nil)
        #expect(try await w.store.sharedList(token: newToken, sort: .custom, privacy: Self.privacy)?.list.title == "link")
        let opened = try await w.store.editList(link.id, owner: ann, edit: ListEdit(title: "now open", visibility: .public), privacy: Self.privacy)
        #expect(opened.shareToken == nil && opened.title == "now open" && opened.description == "about link" && opened.visibility == .public)
        #expect(try await w.store.sharedList(token: newToken, sort: .custom, privacy: Self.privacy) == nil)
        #expect(try await w.store.list(link.id, viewer: cat, privacy: Self.privacy) != nil)
        let again = try await w.store.editList(link.id, owner: ann, edit: ListEdit(visibility: .link), privacy: Self.privacy)
        #expect(again.shareToken != nil && again.shareToken != newToken)
        #expect(try await w.store.sharedList(token: "no-such-token", sort: .custom, privacy: Self.privacy) == nil)

        // A friendship ended, a block made: the friends' list goes with them.
        try await w.store.removeFriend(of: bob, ann)
        #expect(try await reads(bob) == [open])
        try await w.store.deleteList(open, owner: ann)
        #expect(try await w.store.list(open, viewer: ann, privacy: Self.privacy) == nil)
    }

    @Test func itemsKeepADenseOrder() async throws {
        let w = try await World(parks: true)
        defer { w.remove() }
        let ann = try await w.user("ann")
        let list = try await self.create(w, ann, "ohio").id
        let c1 = try await self.add(w, list, ann, .ride(World.c1), note: "first")
        #expect(c1.position == 0 && c1.note == "first" && c1.ride?.name == "Coaster One" && c1.ride?.fenced == World.c1 && c1.check == nil)
        #expect(c1.ride?.park == CatalogPark(id: World.alpha, name: "Alpha", fenced: true) && c1.addedAt == w.now)
        try await self.add(w, list, ann, .ride(World.c2))
        let carousel = try await self.add(w, list, ann, .ride(World.carousel))
        let b1 = try await self.add(w, list, ann, .ride(World.b1), at: 1)
        let alpha = try await self.add(w, list, ann, .park(World.alpha), at: 0)
        #expect(alpha.park == CatalogPark(id: World.alpha, name: "Alpha", fenced: true) && alpha.ride == nil && alpha.name == "Alpha")
        #expect(try await self.order(w, list, ann) == [.park(World.alpha), .ride(World.c1), .ride(World.b1), .ride(World.c2), .ride(World.carousel)])
        _ = try await self.edit(w, carousel, in: list, ann, ListItemEdit(position: 0))
        #expect(try await self.order(w, list, ann) == [.ride(World.carousel), .park(World.alpha), .ride(World.c1), .ride(World.b1), .ride(World.c2)])
        let moved = try await self.edit(w, carousel, in: list, ann, ListItemEdit(position: 3, note: .some(nil)))
        #expect(moved.position == 3 && moved.note == nil)
        #expect(try await self.order(w, list, ann) == [.park(World.alpha), .ride(World.c1), .ride(World.b1), .ride(World.carousel), .ride(World.c2)])
        try await w.store.removeItem(b1.id, from: list, owner: ann)
        #expect(try await self.order(w, list, ann) == [.park(World.alpha), .ride(World.c1), .ride(World.carousel), .ride(World.c2)])
        let noted = try await self.edit(w, c1, in: list, ann, ListItemEdit(note: "again"))
        #expect(noted.note == "again" && noted.position == 1)

        // Refusals: past the end, twice the same, nothing of the catalogue's, no such item.
        await #expect(throws: ListError.positionOutOfRange(largest: 4)) { try await self.add(w, list, ann, .ride(World.b1), at: 5) }
        await #expect(throws: ListError.positionOutOfRange(largest: 3)) { try await self.edit(w, c1, in: list, ann, ListItemEdit(position: 4)) }
        await #expect(throws: ListError.duplicateItem(existing: c1.id)) { try await self.add(w, list, ann, .ride(World.c1)) }
        await #expect(throws: ListError.duplicateItem(existing: alpha.id)) { try await self.add(w, list, ann, .park(World.alpha)) }
        await #expect(throws: ListError.unknownTarget(pointer: "/ride")) { try await self.add(w, list, ann, .ride("alpha.nothing")) }
        await #expect(throws: ListError.unknownTarget(pointer: "/park")) { try await self.add(w, list, ann, .park("nowhere")) }
        await #expect(throws: ListError.noSuchItem) { try await w.store.removeItem(b1.id, from: list, owner: ann) }
        var four = ListRules()
        four.maximumItems = 4
        await #expect(throws: ListError.tooManyItems(limit: 4)) { try await self.add(w, list, ann, .ride(World.b1), rules: four) }
        #expect(try await self.order(w, list, ann).count == 4)

        // How many lists hold a ride.
        #expect(try await w.store.catalogRide(World.c1)?.lists == 1)
        var two = ListRules()
        two.maximumLists = 2
        let other = try await self.create(w, ann, "other", rules: two).id
        try await self.add(w, other, ann, .ride(World.c1))
        #expect(try await w.store.catalogRide(World.c1)?.lists == 2)
        await #expect(throws: ListError.tooManyLists(limit: 2)) { try await self.create(w, ann, "third", rules: two) }
        await #expect(throws: ListError.tooManyLists(limit: 2)) { try await w.store.copyList(other, user: ann, rules: two, privacy: Self.privacy) }
        try await w.store.deleteList(other, owner: ann)
        #expect(try await w.store.catalogRide(World.c1)?.lists == 1)
        try await w.store.removeItem(c1.id, from: list, owner: ann)
        #expect(try await w.store.catalogRide(World.c1)?.lists == 0)
        #expect(try await self.order(w, list, ann) == [.park(World.alpha), .ride(World.carousel), .ride(World.c2)])
    }

    @Test func itemsSortByNameParkStatAndTimeAdded() async throws {
        let w = try await World(parks: true)
        defer { w.remove() }
        _ = try await w.store.importCatalog(CatalogImport(attribution: nil, parks: [("gamma", "Gamma")], rides: [
            CatalogStoreTests.entry("gamma.tall", "Tall One", height: 90, speed: 120),
            CatalogStoreTests.entry("gamma.fast", "Fast One", height: 20, speed: 150),
        ]))
        let ann = try await w.user("ann")
        let list = try await self.create(w, ann, "sorted").id
        for target: ListItemTarget in [.ride(World.c2), .ride("gamma.tall"), .park(World.beta), .ride(World.b1), .ride("gamma.fast"), .ride(World.c1)] {
            try await self.add(w, list, ann, target)
            w.clock.advance(1)
        }
        func sorted(_ sort: ListSort) async throws -> [String] { try #require(try await self.items(w, list, viewer: ann, sort: sort)).map(\.target.id) }
        #expect(try await sorted(.custom) == ["alpha.coaster-two", "gamma.tall", "beta", "beta.coaster", "gamma.fast", "alpha.coaster-one"])
        #expect(try await sorted(.added) == ["alpha.coaster-one", "gamma.fast", "beta.coaster", "beta", "gamma.tall", "alpha.coaster-two"])
        #expect(try await sorted(.name) == ["beta", "beta.coaster", "alpha.coaster-one", "alpha.coaster-two", "gamma.fast", "gamma.tall"])
        #expect(try await sorted(.park) == ["alpha.coaster-two", "alpha.coaster-one", "beta", "beta.coaster", "gamma.tall", "gamma.fast"])
        #expect(try await sorted(.height) == ["gamma.tall", "gamma.fast", "alpha.coaster-two", "beta", "beta.coaster", "alpha.coaster-one"])
        #expect(try await sorted(.speed) == ["gamma.fast", "gamma.tall", "alpha.coaster-two", "beta", "beta.coaster", "alpha.coaster-one"])
        let page = try #require(try await w.store.items(of: list, viewer: ann, sort: .custom, privacy: Self.privacy, limit: 2, offset: 3))
        #expect(page.map(\.target.id) == ["beta.coaster", "gamma.fast"])
    }

    @Test func rideLogsAndVisitsCheckItemsAndAHandUncheckSticks() async throws {
        let w = try await World(parks: true)
        defer { w.remove() }
        let ann = try await w.user("ann"), bob = try await w.user("bob")
        let first = try await self.create(w, ann, "first", .public).id, second = try await self.create(w, ann, "second").id
        try await self.add(w, first, ann, .ride(World.c1))
        try await self.add(w, first, ann, .park(World.alpha))
        let c2 = try await self.add(w, first, ann, .ride(World.c2))
        try await self.add(w, first, ann, .park(World.beta))
        try await self.add(w, second, ann, .ride(World.c1))
        // Bob has lists holding the same ride and park: his stay open.
        let bobs = try await self.create(w, bob, "bob's").id
        try await self.add(w, bobs, bob, .ride(World.c1))
        try await self.add(w, bobs, bob, .park(World.alpha))

        func checks(_ list: Int64, _ viewer: UserID = ann) async throws -> [String: ListCheck?] {
            Dictionary(uniqueKeysWithValues: try #require(try await self.items(w, list, viewer: viewer)).map { ($0.target.id, $0.check) })
        }
        let visitedAt = w.now
        _ = try await w.checkIn(ann, World.alpha)
        #expect(try await checks(first) == ["alpha.coaster-one": nil, "alpha": ListCheck(at: visitedAt, source: .visit), "alpha.coaster-two": nil,
                                            "beta": nil])
        // Unchecked by hand before the ride: the ride leaves it unchecked.
        _ = try await self.edit(w, c2, in: first, ann, ListItemEdit(checked: false))
        try await w.ride(ann, World.c1)
        let riddenAt = w.now
        try await w.ride(ann, World.c2)
        #expect(try await checks(first) == ["alpha.coaster-one": ListCheck(at: riddenAt, source: .rideLog), "alpha": ListCheck(at: visitedAt, source: .visit),
                                            "alpha.coaster-two": nil, "beta": nil])
        #expect(try await checks(second) == ["alpha.coaster-one": ListCheck(at: riddenAt, source: .rideLog)])
        #expect(try await checks(bobs, bob) == ["alpha.coaster-one": nil, "alpha": nil])
        // A second log of the same ride keeps the first check.
        try await w.ride(ann, World.c1)
        #expect(try await checks(second) == ["alpha.coaster-one": ListCheck(at: riddenAt, source: .rideLog)])

        // Others see evidence once the location time-to-live has passed; a hand check at once.
        let handAt = w.now
        let byHand = try await self.edit(w, c2, in: first, ann, ListItemEdit(checked: true))
        #expect(byHand.check == ListCheck(at: handAt, source: .hand))
        #expect(try await w.store.list(first, viewer: ann, privacy: Self.privacy)?.checked == 3)
        #expect(try await w.store.list(first, viewer: bob, privacy: Self.privacy)?.checked == 1)
        #expect(try await checks(first, bob) == ["alpha.coaster-one": nil, "alpha": nil, "alpha.coaster-two": ListCheck(at: handAt, source: .hand),
                                                 "beta": nil])
        w.clock.advance(Self.privacy.timeToLive)
        #expect(try await w.store.list(first, viewer: bob, privacy: Self.privacy)?.checked == 3)
        #expect(try await checks(first, bob)["alpha.coaster-one"] == ListCheck(at: riddenAt, source: .rideLog))

        // Adding what the owner has evidence for checks it with that evidence.
        let third = try await self.create(w, ann, "third").id
        #expect(try await self.add(w, third, ann, .ride(World.c2)).check?.source == .rideLog)
        #expect(try await self.add(w, third, ann, .park(World.alpha)).check == ListCheck(at: visitedAt, source: .visit))
        #expect(try await self.add(w, third, ann, .ride(World.b1)).check == nil)
        // An uncheck by hand sticks against the next ride log too; a hand check lifts it.
        let c1 = try #require(try await self.items(w, second, viewer: ann)?.first)
        _ = try await self.edit(w, c1, in: second, ann, ListItemEdit(checked: false))
        try await w.ride(ann, World.c1)
        #expect(try await checks(second) == ["alpha.coaster-one": nil])
        #expect(try await self.edit(w, c1, in: second, ann, ListItemEdit(checked: true)).check?.source == .hand)
    }

    /// A visit's check says where its owner may still be while the visit goes on: others see it,
    /// on the list and among the changes, once the visit's last evidence is older than the
    /// time-to-live, as a post's "I was there"; not from the visit's start.
    @Test func aVisitsCheckShowsOnceTheVisitIsOver() async throws {
        let w = try await World(parks: true)
        defer { w.remove() }
        let ann = try await w.user("ann"), bob = try await w.user("bob")
        let list = try await self.create(w, ann, "parks", .public).id
        try await self.add(w, list, ann, .park(World.alpha))
        _ = try await w.store.setListFollow(list, user: bob, following: true, rules: Self.rules, privacy: Self.privacy)
        func deliver() async throws -> [ListChangeDelivery] { try await w.store.deliverListChanges(now: w.now, privacy: Self.privacy, limit: 10) }
        func bobs() async throws -> (check: ListCheck?, checked: Int?, changes: [ListChange.Kind]) {
            (try await self.items(w, list, viewer: bob)?.first?.check, try await w.store.list(list, viewer: bob, privacy: Self.privacy)?.checked,
             try await w.store.listChanges(for: bob, privacy: Self.privacy, limit: 10, before: nil).map(\.kind))
        }
        #expect(try await deliver().map(\.change.kind) == [.itemAdded])

        let enteredAt = w.now
        try await w.fix(ann, [Transition(event: .enter, park: World.alpha, at: enteredAt)], inside: [World.alpha])
        #expect(try await self.items(w, list, viewer: ann)?.first?.check == ListCheck(at: enteredAt, source: .visit))
        w.clock.advance(3600)
        try await w.fix(ann, [], inside: [World.alpha])
        let lastEvidence = w.now
        // Past the visit's start by the time-to-live, not past its last evidence: nothing yet.
        w.clock.advance(Self.privacy.timeToLive - 3600 + 1)
        #expect(try await bobs() == (nil, 0, [.itemAdded]))
        #expect(try await deliver().isEmpty)
        // An uncheck by hand now takes back the change no one was shown.
        let c = try #require(try await self.items(w, list, viewer: ann)?.first)
        _ = try await self.edit(w, c, in: list, ann, ListItemEdit(checked: false))
        _ = try await self.edit(w, c, in: list, ann, ListItemEdit(checked: true))
        w.clock.advance(lastEvidence.addingTimeInterval(Self.privacy.timeToLive).timeIntervalSince(w.now))
        #expect(try await bobs().changes == [.itemChecked, .itemAdded])
        #expect(try await deliver().map(\.change.source) == [.hand])

        // A second list checked by the same visit, the visit now over: shown from its end on.
        let second = try await self.create(w, ann, "again", .public).id
        try await self.add(w, second, ann, .park(World.alpha))
        #expect(try await self.items(w, second, viewer: bob)?.first?.check == ListCheck(at: enteredAt, source: .visit))
        #expect(try await w.store.list(second, viewer: bob, privacy: Self.privacy)?.checked == 1)
    }

    @Test func followersGetChangesOnTheirPageAndLive() async throws {
        let w = try await World(parks: true)
        defer { w.remove() }
        let ann = try await w.user("ann"), bob = try await w.user("bob"), cat = try await w.user("cat"), dan = try await w.user("dan")
        let open = try await self.create(w, ann, "open", .public).id, hidden = try await self.create(w, ann, "hidden").id
        let dans = try await self.create(w, dan, "dan's", .public).id
        _ = try await w.store.setListFollow(open, user: bob, following: true, rules: Self.rules, privacy: Self.privacy)
        try await w.store.setListsFollow(of: ann, user: cat, following: true, rules: Self.rules)
        func page(_ user: UserID, limit: Int = 10, before: Int64? = nil) async throws -> [ListChange] {
            try await w.store.listChanges(for: user, privacy: Self.privacy, limit: limit, before: before)
        }
        func deliver() async throws -> [ListChangeDelivery] { try await w.store.deliverListChanges(now: w.now, privacy: Self.privacy, limit: 10) }

        let added = try await self.add(w, open, ann, .ride(World.c1))
        try await self.add(w, hidden, ann, .ride(World.c2))
        let change = try #require(try await page(bob).first)
        #expect(change.kind == .itemAdded && change.list == open && change.listTitle == "open" && change.owner.id == ann && change.item == added.id)
        #expect(change.target == .ride(World.c1) && change.itemName == "Coaster One" && change.source == nil && change.at == w.now)
        #expect(try await page(bob).count == 1)
        #expect(try await page(cat).map(\.id) == [change.id])
        #expect(try await page(dan).isEmpty)
        let delivered = try await deliver()
        #expect(delivered.map(\.change.list) == [open, hidden])
        #expect(delivered.first == ListChangeDelivery(change: change, followers: [bob, cat]) && delivered.last?.followers == [])
        #expect(try await deliver().isEmpty)

        // A check by a ride log reaches followers only after the time-to-live.
        _ = try await w.checkIn(ann, World.alpha)
        try await w.ride(ann, World.c1)
        let riddenAt = w.now
        #expect(try await page(bob).count == 1)
        #expect(try await deliver().isEmpty)
        w.clock.advance(Self.privacy.timeToLive)
        let checked = try #require(try await page(bob).first)
        #expect(checked.kind == .itemChecked && checked.source == .rideLog && checked.at == riddenAt && checked.item == added.id)
        #expect(try await page(bob, limit: 1).map(\.id) == [checked.id])
        #expect(try await page(bob, before: checked.id).map(\.id) == [change.id])
        #expect(try await deliver() == [ListChangeDelivery(change: checked, followers: [bob, cat])])

        // A hand check is shown at once; a block takes the blocked follower off.
        _ = try await w.store.block(of: ann, cat)
        let c2 = try await self.add(w, open, ann, .ride(World.c2))
        _ = try await self.edit(w, c2, in: open, ann, ListItemEdit(checked: true))
        #expect(try await page(bob).prefix(2).map(\.kind) == [.itemChecked, .itemAdded])
        #expect(try await page(cat).isEmpty)
        #expect(try await deliver().map(\.followers) == [[bob], [bob]])

        // Follows: not one's own, at most so many, and counted.
        await #expect(throws: ListError.ownList) {
            try await w.store.setListFollow(open, user: ann, following: true, rules: Self.rules, privacy: Self.privacy)
        }
        await #expect(throws: ListError.ownList) { try await w.store.setListsFollow(of: ann, user: ann, following: true, rules: Self.rules) }
        await #expect(throws: ListError.noSuchUser) { try await w.store.setListsFollow(of: UserID(9_999), user: bob, following: true, rules: Self.rules) }
        await #expect(throws: ListError.noSuchUser) { try await w.store.setListsFollow(of: ann, user: cat, following: true, rules: Self.rules) }
        var one = ListRules()
        one.maximumFollows = 1
        await #expect(throws: ListError.tooManyFollows(limit: 1)) {
            try await w.store.setListFollow(dans, user: bob, following: true, rules: one, privacy: Self.privacy)
        }
        await #expect(throws: ListError.tooManyFollows(limit: 1)) { try await w.store.setListsFollow(of: dan, user: cat, following: true, rules: one) }
        let followed = try await w.store.setListFollow(open, user: bob, following: true, rules: one, privacy: Self.privacy)
        #expect(followed.following && followed.followers == 1)
        let unfollowed = try await w.store.setListFollow(open, user: bob, following: false, rules: one, privacy: Self.privacy)
        #expect(!unfollowed.following && unfollowed.followers == 0)
        try await w.store.setListsFollow(of: ann, user: cat, following: false, rules: Self.rules)
        _ = try await self.add(w, open, ann, .ride(World.carousel))
        #expect(try await deliver().map(\.followers) == [[]])
    }

    @Test func likesCopiesAndCovers() async throws {
        let w = try await World(parks: true)
        defer { w.remove() }
        let ann = try await w.user("ann"), bob = try await w.user("bob"), cat = try await w.user("cat")
        let open = try await self.create(w, ann, "open", .public).id
        try await self.add(w, open, ann, .ride(World.c1), note: "first")
        try await self.add(w, open, ann, .park(World.alpha))
        try await self.add(w, open, ann, .ride(World.c2), note: "then")
        _ = try await w.checkIn(ann, World.alpha)
        try await w.ride(ann, World.c1)

        let liked = try await w.store.setListLike(open, user: bob, liked: true, privacy: Self.privacy)
        #expect(liked.liked && liked.likes == 1)
        #expect(try await w.store.setListLike(open, user: bob, liked: true, privacy: Self.privacy).likes == 1)
        let seen = try #require(try await w.store.list(open, viewer: ann, privacy: Self.privacy))
        #expect(!seen.liked && seen.likes == 1)
        let unliked = try await w.store.setListLike(open, user: bob, liked: false, privacy: Self.privacy)
        #expect(!unliked.liked && unliked.likes == 0)

        // A copy is the copier's, private, checked by the copier's own evidence only.
        let visitedAt = w.now
        _ = try await w.checkIn(bob, World.alpha)
        try await w.ride(bob, World.c2)
        let riddenAt = w.now
        let copy = try await w.store.copyList(open, user: bob, rules: Self.rules, privacy: Self.privacy)
        #expect(copy.owner.id == bob && copy.visibility == .private && copy.title == "open" && copy.description == "about open")
        #expect(copy.copiedFrom == open && copy.items == 3 && copy.checked == 2 && copy.shareToken == nil)
        let items = try #require(try await self.items(w, copy.id, viewer: bob))
        #expect(items.map(\.target) == [.ride(World.c1), .park(World.alpha), .ride(World.c2)] && items.map(\.note) == ["first", nil, "then"])
        #expect(items.map(\.check) == [nil, ListCheck(at: visitedAt, source: .visit), ListCheck(at: riddenAt, source: .rideLog)])
        #expect(try await w.store.list(copy.id, viewer: ann, privacy: Self.privacy) == nil)
        #expect(try await w.store.catalogRide(World.c1)?.lists == 2)
        try await w.store.deleteList(open, owner: ann)
        #expect(try await w.store.list(copy.id, viewer: bob, privacy: Self.privacy)?.copiedFrom == nil)

        // A cover is one of the owner's photos, shown to whoever reads the list.
        let image = try ImageInspector.inspect([UInt8](try Data(contentsOf: BackupTests.images.appendingPathComponent("coaster.png"))))
        let anns = try await w.store.addPhoto(owner: ann, image: image, sha256: "a1" + String(repeating: "0", count: 62), caption: nil, park: nil, ride: nil)
        let bobs = try await w.store.addPhoto(owner: bob, image: image, sha256: "b2" + String(repeating: "0", count: 62), caption: nil, park: nil, ride: nil)
        await #expect(throws: ListError.noSuchPhoto) {
            try await w.store.createList(ListDraft(title: "covered", cover: bobs.id), owner: ann, rules: Self.rules, privacy: Self.privacy)
        }
        let covered = try await w.store.createList(ListDraft(title: "covered", visibility: .private, cover: anns.id), owner: ann, rules: Self.rules, privacy: Self.privacy)
        #expect(covered.cover == anns.id)
        #expect(try await w.store.photo(anns.id, viewer: cat) == nil)
        _ = try await w.store.editList(covered.id, owner: ann, edit: ListEdit(visibility: .public), privacy: Self.privacy)
        #expect(try await w.store.photo(anns.id, viewer: cat)?.id == anns.id)
        await #expect(throws: ListError.noSuchPhoto) {
            try await w.store.editList(covered.id, owner: ann, edit: ListEdit(cover: .some(bobs.id)), privacy: Self.privacy)
        }
        let bare = try await w.store.editList(covered.id, owner: ann, edit: ListEdit(cover: .some(nil)), privacy: Self.privacy)
        #expect(bare.cover == nil)
        #expect(try await w.store.photo(anns.id, viewer: cat) == nil)
    }
}
