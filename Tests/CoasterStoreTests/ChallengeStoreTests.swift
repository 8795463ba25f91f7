import CoasterCore
@testable import CoasterStore
import CoasterTestSupport
import Foundation
import Synchronization
import Testing

/// Challenges through the store interface, on either store: who sees what, what counts (ride logs
/// and visits credited in their own transaction, once), what others see and when, the ranking's
/// order and pages, the lists, search and trending, and the winners.
@Suite("Challenges in the store")
struct ChallengeStoreTests {
    /// A store on a hand-moved clock, two small parks, and named users.
    struct World {
        final class Clock: Sendable {
            let value = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
            func now() -> Date { self.value.withLock { $0 } }
            func advance(_ seconds: TimeInterval) { self.value.withLock { $0 = $0.addingTimeInterval(seconds) } }
        }

        static let alpha: ParkID = "alpha"
        static let beta: ParkID = "beta"
        /// Coasters of alpha.
        static let c1: RideID = "alpha.coaster-one"
        static let c2: RideID = "alpha.coaster-two"
        static let carousel: RideID = "alpha.carousel"
        /// The coaster of beta.
        static let b1: RideID = "beta.coaster"
        static let timeToLive: TimeInterval = 3600
        static let visitTimeout: TimeInterval = 30 * 86_400

        let clock = Clock()
        let t: TemporaryStore
        var store: any Store { self.t.store }
        var now: Date { self.clock.now() }

        init(parks: Bool = false) async throws {
            self.t = try await TemporaryStore(now: self.clock.now)
            if parks { _ = try await self.t.store.replaceParks([Self.park(Self.alpha, lon: 10), Self.park(Self.beta, lon: 11)]) }
        }

        func remove() { self.t.remove() }

        static func square(lon: Double, lat: Double, side: Double) -> MultiPolygon {
            let ring = [Coordinate(lat: lat, lon: lon), Coordinate(lat: lat, lon: lon + side), Coordinate(lat: lat + side, lon: lon + side),
                        Coordinate(lat: lat + side, lon: lon), Coordinate(lat: lat, lon: lon)]
            return MultiPolygon(polygons: [Polygon(rings: [ring])])
        }

        static func park(_ id: ParkID, lon: Double) -> ParkDefinition {
            let rides: [Ride] = id == Self.alpha
                ? [Ride(id: Self.c1, park: id, name: "Coaster One", type: .coaster, status: .operating),
                   Ride(id: Self.c2, park: id, name: "Coaster Two", type: .coaster, status: .operating),
                   Ride(id: Self.carousel, park: id, name: "Carousel", type: .flat, status: .operating)]
                : [Ride(id: Self.b1, park: id, name: "Beta Coaster", type: .coaster, status: .operating)]
            let zones = rides.enumerated().map { i, ride in
                Zone(id: ZoneID(rawValue: ride.id.rawValue + "-queue"), park: id, kind: .queue, name: ride.name + " queue", ride: ride.id,
                     area: Self.square(lon: lon + 0.001 * Double(i + 1), lat: 40.001, side: 0.0005))
            }
            return ParkDefinition(park: Park(id: id, name: id.rawValue.capitalized, timeZone: "America/New_York", attribution: nil,
                                             boundary: Self.square(lon: lon, lat: 40, side: 0.01)),
                                  zones: zones, rides: rides)
        }

        func user(_ name: String) async throws -> UserID {
            try await self.store.createUser(username: name, displayName: name.capitalized, passwordHash: "x", role: .member).id
        }

        func befriend(_ a: UserID, _ b: UserID, named bName: String) async throws {
            _ = try await self.store.requestFriend(from: a, to: bName)
            _ = try await self.store.answerRequest(of: b, from: a, accept: true)
        }

        /// A draft starting `start` seconds from now and lasting `days`.
        func draft(_ name: String, _ unit: ChallengeUnit = .custom(label: "funnel cakes"), description: String = "", start: TimeInterval = 0,
                   days: Double = 7, visibility: ChallengeVisibility = .public, parks: [ParkID] = [], evidence: RideEvidence = .inPark) -> ChallengeDraft {
            let start = self.now.addingTimeInterval(start)
            return ChallengeDraft(name: name, description: description, unit: unit, target: 10, start: start,
                                  end: start.addingTimeInterval(days * 86_400), visibility: visibility, parks: parks, evidence: evidence)
        }

        func create(_ draft: ChallengeDraft, by author: UserID, rules: ChallengeRules = ChallengeRules()) async throws -> Int64 {
            try await self.store.createChallenge(draft, author: author, rules: rules, timeToLive: Self.timeToLive).challenge.id
        }

        func join(_ id: Int64, _ user: UserID) async throws {
            _ = try await self.store.join(id, user: user, rules: ChallengeRules())
        }

        func entry(_ id: Int64, _ user: UserID, _ amount: Double, photo: Int64? = nil) async throws -> (entry: ChallengeEntry, move: ChallengeMove) {
            try await self.store.addEntry(id, user: user, amount: amount, note: "n", photo: photo, rules: ChallengeRules())
        }

        func checkIn(_ user: UserID, _ park: ParkID) async throws -> Int64 {
            let outcome = try await self.store.checkIn(user: user, park: park, visitTimeout: Self.visitTimeout) { _, _ in .success(.inside) }
            guard case .created(let visit)? = outcome else { throw Unexpected(what: "\(String(describing: outcome))") }
            return visit.id
        }

        /// One accepted fix now whose decision is `transitions` (at now); `inside` are the parks
        /// the fix lies in, when given (the open visits of those it is evidence of).
        func fix(_ user: UserID, _ transitions: [Transition], inside: Set<ParkID>? = nil) async throws {
            let at = self.now
            _ = try await self.store.recordFixes(user: user, [IncomingFix(lat: 40.005, lon: 10.005, accuracy: 5, recordedAt: at)], source: .api,
                                                 visitTimeout: Self.visitTimeout) { _, state, _ in
                if let inside { state.parks = inside }
                return .accepted(current: true, transitions: transitions)
            }
        }

        /// Logs a ride ten minutes after the clock's time (past any ride's cycle); at the ride
        /// (a fix in its queue just before) or on the visit only.
        @discardableResult
        func ride(_ user: UserID, _ ride: RideID, atRide: Bool = false) async throws -> RideLogEntry {
            self.clock.advance(600)
            if atRide {
                let zone = ZoneID(rawValue: ride.rawValue + "-queue")
                try await self.fix(user, [Transition(event: .enter, park: ride.park, zone: zone, zoneKind: .queue, ride: ride, at: self.now)])
                self.clock.advance(1)
                try await self.fix(user, [Transition(event: .exit, park: ride.park, zone: zone, zoneKind: .queue, ride: ride, at: self.now)])
            }
            switch try await self.store.logRide(user: user, ride: ride, visitTimeout: Self.visitTimeout) {
            case .success(let (entry, _)):
                #expect(entry.evidence == (atRide ? .atRide : .inPark))
                return entry
            case .failure(let refusal): throw Unexpected(what: "\(refusal)")
            }
        }

        /// The member's own progress (their line as they see it).
        func progress(_ id: Int64, of user: UserID) async throws -> Double? {
            try await self.store.ranking(id, viewer: user, limit: 0, offset: 0)?.mine?.progress
        }

        /// What `viewer` sees of everyone's progress, by user.
        func shown(_ id: Int64, viewer: UserID) async throws -> [UserID: Double] {
            let ranking = try #require(try await self.store.ranking(id, viewer: viewer, limit: 100, offset: 0))
            return Dictionary(uniqueKeysWithValues: ranking.entries.map { ($0.user.id, $0.progress) })
        }
    }

    struct Unexpected: Error {
        var what: String
    }

    @Test func whoSeesInvitesJoinsAndLeaves() async throws {
        let w = try await World(parks: true)
        defer { w.remove() }
        let ann = try await w.user("ann"), bob = try await w.user("bob"), cat = try await w.user("cat"), dan = try await w.user("dan")
        let eve = try await w.user("eve")
        try await w.befriend(ann, bob, named: "bob")
        try await w.befriend(cat, ann, named: "ann")
        _ = try await w.store.requestFriend(from: ann, to: "eve")

        await #expect(throws: ChallengeError.unknownRide("alpha.nothing")) {
            try await w.create(w.draft("x", .ride("alpha.nothing")), by: ann)
        }
        await #expect(throws: ChallengeError.unknownPark(index: 1)) {
            try await w.create(w.draft("x", .rides, parks: [World.alpha, "gamma"]), by: ann)
        }

        let p = try await w.create(w.draft("Cakes", start: 3600, visibility: .private), by: ann)
        let created = try #require(try await w.store.challenge(p, viewer: ann))
        #expect(created.membership == .member && created.challenge.participants == 1 && created.challenge.author.id == ann)
        #expect(created.challenge.unit == .custom(label: "funnel cakes") && created.challenge.visibility == .private)
        #expect(created.challenge.finalizedAt == nil && created.winners.isEmpty && !created.liked)

        // A stranger: it does not exist.
        #expect(try await w.store.challenge(p, viewer: dan) == nil)
        #expect(try await w.store.ranking(p, viewer: dan, limit: 10, offset: 0) == nil)
        #expect(try await w.store.gallery(p, viewer: dan, limit: 10, before: nil) == nil)
        await #expect(throws: ChallengeError.noSuchChallenge) { try await w.join(p, dan) }
        await #expect(throws: ChallengeError.noSuchChallenge) { try await w.store.setChallengeLike(p, user: dan, liked: true) }
        await #expect(throws: ChallengeError.noSuchChallenge) { try await w.store.invite(p, author: dan, users: [bob]) }
        await #expect(throws: ChallengeError.noSuchChallenge) { try await w.store.deleteChallenge(p, author: dan) }
        #expect(try await w.store.challenge(p + 100, viewer: ann) == nil)
        await #expect(throws: ChallengeError.noSuchChallenge) { try await w.join(p + 100, ann) }

        // Friends only, the first who is not named; nothing written.
        await #expect(throws: ChallengeError.notAFriend(index: 1)) { try await w.store.invite(p, author: ann, users: [bob, dan, cat]) }
        await #expect(throws: ChallengeError.notAFriend(index: 0)) { try await w.store.invite(p, author: ann, users: [eve]) }
        #expect(try await w.store.challenge(p, viewer: bob) == nil)

        // The author and those already in are skipped; the newly invited come back in order.
        #expect(try await w.store.invite(p, author: ann, users: [cat, ann, bob]).map(\.id) == [cat, bob])
        #expect(try await w.store.invite(p, author: ann, users: [bob]).isEmpty)
        let invited = try #require(try await w.store.challenge(p, viewer: bob))
        #expect(invited.membership == .invited && invited.challenge.participants == 1)
        #expect(try await w.store.challengeMembers(p, among: [bob, ann, dan, cat]) == [ann])
        #expect(try await w.store.challenges(of: bob, list: .invited, limit: 10, before: nil).map(\.challenge.id) == [p])
        await #expect(throws: ChallengeError.notAuthor) { try await w.store.invite(p, author: bob, users: [cat]) }
        await #expect(throws: ChallengeError.notAuthor) { try await w.store.editChallenge(p, author: bob, name: "mine", description: nil) }

        // Declined: out of sight, until invited again.
        try await w.store.decline(p, user: cat)
        #expect(try await w.store.challenge(p, viewer: cat) == nil)
        await #expect(throws: ChallengeError.noSuchChallenge) { try await w.store.decline(p, user: cat) }
        #expect(try await w.store.invite(p, author: ann, users: [cat]).map(\.id) == [cat])
        #expect(try await w.store.challenge(p, viewer: cat)?.membership == .invited)
        await #expect(throws: ChallengeError.notInvited) { try await w.store.decline(p, user: ann) }

        // Joining, once.
        let joined = try await w.store.join(p, user: bob, rules: ChallengeRules())
        #expect(joined.membership == .member && joined.challenge.participants == 2)
        #expect(try await w.store.join(p, user: bob, rules: ChallengeRules()).challenge.participants == 2)
        #expect(try await w.store.challengeMembers(p, among: [dan, bob, cat, ann]) == [ann, bob])
        #expect(try await w.store.challenges(of: bob, list: .invited, limit: 10, before: nil).isEmpty)
        #expect(try await w.store.challenges(of: bob, list: .upcoming, limit: 10, before: nil).map(\.challenge.id) == [p])

        // Editing before the start.
        let edited = try await w.store.editChallenge(p, author: ann, name: "Funnel cakes", description: nil)
        #expect(edited.challenge.name == "Funnel cakes" && edited.challenge.description == "")

        // Leaving.
        await #expect(throws: ChallengeError.authorCannotLeave) { try await w.store.leave(p, user: ann) }
        await #expect(throws: ChallengeError.notAMember) { try await w.store.leave(p, user: cat) }
        try await w.store.leave(p, user: bob)
        #expect(try await w.store.challenge(p, viewer: bob) == nil)
        #expect(try await w.store.challenge(p, viewer: ann)?.challenge.participants == 1)

        // A public one: anyone sees and joins it; nobody declines it uninvited.
        let u = try await w.create(w.draft("Open", start: 3600), by: ann)
        #expect(try await w.store.challenge(u, viewer: dan)?.membership == nil)
        await #expect(throws: ChallengeError.notInvited) { try await w.store.decline(u, user: dan) }
        await #expect(throws: ChallengeError.notAuthor) { try await w.store.deleteChallenge(u, author: dan) }
        await #expect(throws: ChallengeError.notAMember) { try await w.store.leave(u, user: dan) }
        try await w.join(u, dan)
        #expect(try await w.store.challenge(u, viewer: dan)?.membership == .member)

        // The membership limit counts challenges that have not ended.
        var two = ChallengeRules()
        two.maximumActiveMemberships = 2
        await #expect(throws: ChallengeError.tooManyMemberships(limit: 2)) { try await w.create(w.draft("Third"), by: ann, rules: two) }
        var none = ChallengeRules()
        none.maximumActiveMemberships = 0
        await #expect(throws: ChallengeError.tooManyMemberships(limit: 0)) { try await w.store.join(p, user: cat, rules: none) }
        #expect(try await w.store.challenge(p, viewer: cat)?.membership == .invited)

        // Started: no more edits; ending it early ends it for everyone, once.
        await #expect(throws: ChallengeError.notStarted) { try await w.store.endChallenge(u, author: ann, timeToLive: World.timeToLive) }
        w.clock.advance(7200)
        await #expect(throws: ChallengeError.alreadyStarted) { try await w.store.editChallenge(u, author: ann, name: "Later", description: nil) }
        await #expect(throws: ChallengeError.notAuthor) { try await w.store.endChallenge(u, author: dan, timeToLive: World.timeToLive) }
        let ended = try await w.store.endChallenge(u, author: ann, timeToLive: World.timeToLive)
        #expect(ended.challenge.end == w.now && ended.challenge.status(at: w.now) == .completed)
        await #expect(throws: ChallengeError.ended) { try await w.store.endChallenge(u, author: ann, timeToLive: World.timeToLive) }
        await #expect(throws: ChallengeError.ended) { try await w.join(u, cat) }
        await #expect(throws: ChallengeError.ended) { try await w.store.invite(u, author: ann, users: [bob]) }
        #expect(try await w.store.challenges(of: dan, list: .completed, limit: 10, before: nil).map(\.challenge.id) == [u])
        // Once ended, it no longer holds a place under the limit.
        _ = try await w.create(w.draft("Third"), by: ann, rules: two)

        // Deleted: gone for everyone.
        try await w.store.deleteChallenge(u, author: ann)
        #expect(try await w.store.challenge(u, viewer: ann) == nil)
        #expect(try await w.store.challenge(u, viewer: dan) == nil)
        #expect(try await w.store.challenges(of: dan, list: .completed, limit: 10, before: nil).isEmpty)
        await #expect(throws: ChallengeError.noSuchChallenge) { try await w.join(u, dan) }
    }

    /// A visit's credit says where its rider may still be while the visit goes on: it is settled
    /// once the visit's last evidence is before the cutoff, not its start.
    @Test func aVisitIsShownToOthersOnceItIsOver() async throws {
        let w = try await World(parks: true)
        defer { w.remove() }
        let ann = try await w.user("ann"), bob = try await w.user("bob")
        let visits = try await w.create(w.draft("Visits", .visits), by: ann)
        try await w.join(visits, bob)
        w.clock.advance(60)
        let enteredAt = w.now
        try await w.fix(bob, [Transition(event: .enter, park: World.alpha, at: enteredAt)], inside: [World.alpha])
        #expect(try await w.progress(visits, of: bob) == 1)
        // An hour on, a fix inside the park: the visit goes on.
        w.clock.advance(3600)
        try await w.fix(bob, [], inside: [World.alpha])
        let lastEvidence = w.now
        #expect(try await w.store.settleChallengeCredits(through: lastEvidence.addingTimeInterval(-1), limit: 100).isEmpty)
        #expect(try await w.shown(visits, viewer: ann) == [ann: 0, bob: 0])
        #expect(try await w.store.settleChallengeCredits(through: lastEvidence, limit: 100).map(\.challenge) == [visits])
        #expect(try await w.shown(visits, viewer: ann) == [ann: 0, bob: 1])
        let entry = try #require(try await w.store.ranking(visits, viewer: ann, limit: 10, offset: 0)?.entries.first)
        #expect(entry.user.id == bob && entry.lastActivity == enteredAt)
    }

    /// Ride logs and visits count in their own transaction, in the window, in the scope, with the
    /// evidence asked, once; others see them once settled.
    @Test func countingFromRideLogsAndVisits() async throws {
        let w = try await World(parks: true)
        defer { w.remove() }
        let ann = try await w.user("ann"), bob = try await w.user("bob"), cat = try await w.user("cat")
        _ = try await w.checkIn(bob, World.alpha)
        try await w.ride(bob, World.c1)  // before any challenge: c1 is no new credit
        let rides = try await w.create(w.draft("Rides", .rides, start: 3600), by: ann)
        let credits = try await w.create(w.draft("Credits", .credits, start: 3600), by: ann)
        let one = try await w.create(w.draft("C1 at the ride", .ride(World.c1), start: 3600, evidence: .atRide), by: ann)
        let inBeta = try await w.create(w.draft("Beta rides", .rides, start: 3600, parks: [World.beta]), by: ann)
        let visits = try await w.create(w.draft("Visits", .visits, start: 3600), by: ann)
        let parks = try await w.create(w.draft("Parks", .parks, start: 3600), by: ann)
        let all = [rides, credits, one, inBeta, visits, parks]
        for id in all { try await w.join(id, bob) }
        // Before the start: nothing counts.
        try await w.ride(bob, World.carousel)
        #expect(try await w.progress(rides, of: bob) == 0)
        w.clock.advance(3600)

        // After the start.
        let first = try await w.ride(bob, World.c1)
        #expect(try await w.progress(rides, of: bob) == 1)
        #expect(try await w.progress(credits, of: bob) == 0)  // ridden before the window
        #expect(try await w.progress(one, of: bob) == 0)  // in the park, not at the ride
        #expect(try await w.progress(inBeta, of: bob) == 0)  // another park
        let moves = try await w.store.challengeMoves(of: bob, source: "ride-log", id: first.id)
        #expect(moves.map(\.challenge) == [rides])
        #expect(moves.first?.progress == 1 && moves.first?.shownProgress == 0 && moves.first?.user.id == bob)
        try await w.ride(bob, World.c2)
        try await w.ride(bob, World.c2)  // a credit once
        try await w.ride(bob, World.carousel)  // no coaster
        let atRide = try await w.ride(bob, World.c1, atRide: true)
        #expect(try await w.progress(rides, of: bob) == 5)
        #expect(try await w.progress(credits, of: bob) == 1)
        #expect(try await w.progress(one, of: bob) == 1)
        #expect(try await w.store.challengeMoves(of: bob, source: "ride-log", id: atRide.id).map(\.challenge) == [rides, one])

        // Visits: a check-in, and visits the fixes open.
        let beta = try await w.checkIn(bob, World.beta)
        #expect(try await w.store.challengeMoves(of: bob, source: "visit", id: beta).map(\.challenge) == [visits, parks])
        try await w.ride(bob, World.b1)
        #expect(try await w.progress(inBeta, of: bob) == 1)
        #expect(try await w.progress(credits, of: bob) == 2)
        w.clock.advance(60)
        try await w.fix(bob, [Transition(event: .exit, park: World.alpha, at: w.now)])
        w.clock.advance(60)
        try await w.fix(bob, [Transition(event: .enter, park: World.alpha, at: w.now)])
        w.clock.advance(60)
        try await w.fix(bob, [Transition(event: .exit, park: World.alpha, at: w.now)])
        w.clock.advance(60)
        try await w.fix(bob, [Transition(event: .enter, park: World.alpha, at: w.now)])
        #expect(try await w.progress(visits, of: bob) == 3)
        #expect(try await w.progress(parks, of: bob) == 2)  // beta, and alpha entered in the window once

        // Joining late: what came before does not count.
        let late = w.now
        try await w.ride(bob, World.b1)
        _ = try await w.checkIn(cat, World.beta)
        try await w.ride(cat, World.b1)
        try await w.join(inBeta, cat)
        #expect(try await w.progress(inBeta, of: cat) == 0)
        try await w.ride(cat, World.b1)
        #expect(try await w.progress(inBeta, of: cat) == 1)

        // What counted, newest first, as the member sees it.
        let ranking = try #require(try await w.store.ranking(inBeta, viewer: bob, limit: 10, offset: 0))
        #expect(ranking.counted.map(\.source) == ["ride-log", "ride-log"])
        #expect(ranking.counted.map(\.ride) == [World.b1, World.b1] && ranking.counted.map(\.park) == [World.beta, World.beta])
        #expect(ranking.counted.first.map { $0.at > late } == true && ranking.counted.map(\.evidence) == [.inPark, .inPark])
        #expect(ranking.pending == 2 && ranking.mine?.progress == 2)
        let visitItems = try #require(try await w.store.ranking(visits, viewer: bob, limit: 10, offset: 0)).counted
        #expect(visitItems.map(\.source) == ["visit", "visit", "visit"] && visitItems.last?.id == beta && visitItems.allSatisfy { $0.ride == nil })

        // Others see nothing yet; the member sees theirs, ranked against what they see.
        #expect(try await w.shown(rides, viewer: ann) == [ann: 0, bob: 0])
        #expect(try await w.shown(rides, viewer: bob) == [ann: 0, bob: 7])
        #expect(try await w.store.ranking(rides, viewer: bob, limit: 10, offset: 0)?.entries.map(\.user.id) == [bob, ann])
        #expect(try await w.store.ranking(rides, viewer: ann, limit: 10, offset: 0)?.entries.map(\.rank) == [1, 1])

        // Settled in time order, a few at a time.
        let beforeEntering = atRide.riddenAt
        let settled = try await w.store.settleChallengeCredits(through: beforeEntering, limit: 2)
        #expect(settled.map(\.challenge) == [rides])
        #expect(settled.first?.shownProgress == 2 && settled.first?.progress == 7 && settled.first?.shownRank == 1 && settled.first?.rank == 1)
        let rest = try await w.store.settleChallengeCredits(through: beforeEntering, limit: 100)
        #expect(rest.map(\.challenge) == [rides, credits, one, visits, parks])
        #expect(try await w.shown(rides, viewer: ann) == [ann: 0, bob: 5])
        _ = try await w.store.settleChallengeCredits(through: w.now, limit: 1000)
        #expect(try await w.shown(rides, viewer: ann) == [ann: 0, bob: 7])
        #expect(try await w.shown(inBeta, viewer: ann) == [ann: 0, bob: 2, cat: 1])
        #expect(try await w.store.ranking(inBeta, viewer: bob, limit: 10, offset: 0)?.pending == 0)
        #expect(try await w.store.settleChallengeCredits(through: w.now, limit: 1000).isEmpty)

        // Leaving takes the progress with it.
        try await w.store.leave(inBeta, user: cat)
        #expect(try await w.shown(inBeta, viewer: ann) == [ann: 0, bob: 2])
        // A refused log moves nothing.
        if case .success = try await w.store.logRide(user: ann, ride: World.c1, visitTimeout: World.visitTimeout) {
            Issue.record("a log without a visit")
        }
    }

    /// The order (more first, then who got there first, then the lower id), shared ranks, pages
    /// and the viewer's own line; entries added and deleted.
    @Test func rankingsEntriesAndGallery() async throws {
        let w = try await World()
        defer { w.remove() }
        let names = ["ann", "bob", "cat", "dan", "eve", "fay", "gus"]
        var u: [UserID] = []
        for name in names { u.append(try await w.user(name)) }
        let (ann, bob, cat, dan, eve, fay, gus) = (u[0], u[1], u[2], u[3], u[4], u[5], u[6])
        let cakes = try await w.create(w.draft("Cakes", start: 60), by: ann)
        for user in [bob, cat, dan, eve, fay] { try await w.join(cakes, user) }
        await #expect(throws: ChallengeError.notStarted) { try await w.entry(cakes, bob, 1) }
        w.clock.advance(120)
        await #expect(throws: ChallengeError.notAMember) { try await w.entry(cakes, gus, 1) }
        let rides = try await w.create(w.draft("Rides", .rides), by: ann)
        await #expect(throws: ChallengeError.notCustom) { try await w.entry(rides, ann, 1) }

        // bob 5 and eve 5 at the same moment, dan 7 (3 + 4), cat 5 later (ahead of eve by id, behind
        // by time), fay and ann nothing.
        _ = try await w.entry(cakes, bob, 5)
        let eve5 = try await w.entry(cakes, eve, 5)
        #expect(eve5.entry.user.id == eve && eve5.entry.amount == 5 && eve5.entry.note == "n" && eve5.entry.at == w.now)
        #expect(eve5.move.progress == 5 && eve5.move.shownProgress == 5 && eve5.move.rank == 1 && eve5.move.shownRank == 1)
        w.clock.advance(60)
        let dan3 = try await w.entry(cakes, dan, 3)
        w.clock.advance(60)
        let dan4 = try await w.entry(cakes, dan, 4)
        #expect(dan4.move.progress == 7 && dan4.move.rank == 1)
        w.clock.advance(60)
        let cat5 = try await w.entry(cakes, cat, 5)
        #expect(cat5.move.rank == 4 && cat5.move.shownRank == 4)

        let order = [dan, bob, eve, cat, ann, fay]
        let ranks = [1, 2, 2, 4, 5, 5]
        for viewer in [gus, ann, cat, eve, fay] {
            let whole = try #require(try await w.store.ranking(cakes, viewer: viewer, limit: 10, offset: 0))
            #expect(whole.entries.map(\.user.id) == order, "seen by \(viewer)")
            #expect(whole.entries.map(\.rank) == ranks, "seen by \(viewer)")
            #expect(whole.entries.map(\.progress) == [7, 5, 5, 5, 0, 0])
            #expect(whole.entries.last?.lastActivity == nil && whole.entries.first?.lastActivity == dan4.entry.at)
            let place = order.firstIndex(of: viewer)
            #expect(whole.mine?.rank == place.map { ranks[$0] } && whole.mine?.user.id == place.map { order[$0] })
            for (offset, limit) in [(0, 2), (1, 2), (2, 3), (3, 2), (4, 5), (6, 2)] {
                let page = try #require(try await w.store.ranking(cakes, viewer: viewer, limit: limit, offset: offset))
                #expect(page.entries == Array(whole.entries.dropFirst(offset).prefix(limit)), "\(offset)+\(limit) seen by \(viewer)")
                #expect(page.mine == whole.mine)
            }
        }
        let outside = try #require(try await w.store.ranking(cakes, viewer: gus, limit: 10, offset: 0))
        #expect(outside.mine == nil && outside.pending == 0 && outside.counted.isEmpty && outside.view.membership == nil)
        let dans = try #require(try await w.store.ranking(cakes, viewer: dan, limit: 1, offset: 3)).counted
        #expect(dans.map(\.source) == ["entry", "entry"] && dans.map(\.id) == [dan4.entry.id, dan3.entry.id] && dans.map(\.amount) == [4, 3])

        // An entry deleted: progress and its time from those left.
        await #expect(throws: ChallengeError.noSuchEntry) { try await w.store.deleteEntry(cakes, entry: dan4.entry.id, user: bob) }
        await #expect(throws: ChallengeError.noSuchEntry) { try await w.store.deleteEntry(rides, entry: dan4.entry.id, user: dan) }
        let moved = try await w.store.deleteEntry(cakes, entry: dan4.entry.id, user: dan)
        #expect(moved.progress == 3 && moved.shownProgress == 3 && moved.rank == 4 && moved.shownRank == 4)
        let after = try #require(try await w.store.ranking(cakes, viewer: gus, limit: 10, offset: 0))
        #expect(after.entries.map(\.user.id) == [bob, eve, cat, dan, ann, fay] && after.entries.map(\.rank) == [1, 1, 3, 4, 5, 5])
        #expect(after.entries[3].lastActivity == dan3.entry.at)
        _ = try await w.store.deleteEntry(cakes, entry: dan3.entry.id, user: dan)
        #expect(try await w.store.ranking(cakes, viewer: dan, limit: 10, offset: 0)?.mine.map { [Double($0.rank), $0.progress] } == [4, 0])

        // The entry limit, and proof that must be the member's own photo.
        var two = ChallengeRules()
        two.maximumEntries = 2
        _ = try await w.store.addEntry(cakes, user: fay, amount: 1, note: nil, photo: nil, rules: two)
        _ = try await w.store.addEntry(cakes, user: fay, amount: 1, note: nil, photo: nil, rules: two)
        await #expect(throws: ChallengeError.tooManyEntries(limit: 2)) {
            try await w.store.addEntry(cakes, user: fay, amount: 1, note: nil, photo: nil, rules: two)
        }
        let image = try ImageInspector.inspect([UInt8](try Data(contentsOf: BackupTests.images.appendingPathComponent("coaster.png"))))
        let bobs = try await w.store.addPhoto(owner: bob, image: image, sha256: "a1" + String(repeating: "0", count: 62), caption: nil, park: nil, ride: nil)
        let cats = try await w.store.addPhoto(owner: cat, image: image, sha256: "c3" + String(repeating: "0", count: 62), caption: nil, park: nil, ride: nil)
        await #expect(throws: ChallengeError.noSuchPhoto) { try await w.entry(cakes, cat, 1, photo: bobs.id) }
        #expect(try await w.store.photo(cats.id, viewer: gus) == nil)
        let withPhoto1 = try await w.entry(cakes, cat, 1, photo: cats.id)
        _ = try await w.entry(cakes, bob, 1)
        let withPhoto2 = try await w.entry(cakes, bob, 2, photo: bobs.id)
        #expect(withPhoto2.entry.photo == bobs.id)
        // Proof in a public challenge: anyone may see it.
        #expect(try await w.store.photo(cats.id, viewer: gus)?.id == cats.id)
        let gallery = try #require(try await w.store.gallery(cakes, viewer: gus, limit: 10, before: nil))
        #expect(gallery.map(\.id) == [withPhoto2.entry.id, withPhoto1.entry.id] && gallery.map(\.photo) == [bobs.id, cats.id])
        #expect(gallery.first?.user.id == bob && gallery.first?.challenge == cakes)
        #expect(try await w.store.gallery(cakes, viewer: gus, limit: 10, before: withPhoto2.entry.id)?.map(\.id) == [withPhoto1.entry.id])
        #expect(try await w.store.gallery(cakes, viewer: gus, limit: 1, before: nil)?.map(\.id) == [withPhoto2.entry.id])

        // Proof in a private challenge: its members only.
        let secret = try await w.create(w.draft("Secret", visibility: .private), by: bob)
        let proof = try await w.store.addPhoto(owner: bob, image: image, sha256: "b2" + String(repeating: "0", count: 62), caption: nil, park: nil, ride: nil)
        _ = try await w.entry(secret, bob, 1, photo: proof.id)
        #expect(try await w.store.photo(proof.id, viewer: gus) == nil)
        #expect(try await w.store.gallery(secret, viewer: gus, limit: 10, before: nil) == nil)

        // After the end: no entries.
        w.clock.advance(8 * 86_400)
        await #expect(throws: ChallengeError.ended) { try await w.entry(cakes, bob, 1) }
    }

    /// The user's lists, search by words and park, trending and likes.
    @Test func listsSearchTrendingAndLikes() async throws {
        let w = try await World(parks: true)
        defer { w.remove() }
        let ann = try await w.user("ann"), bob = try await w.user("bob"), cat = try await w.user("cat"), dan = try await w.user("dan")
        try await w.befriend(ann, bob, named: "bob")
        let old = try await w.create(w.draft("Old funnel cakes", description: "Who eats more at the fair", days: 2), by: ann)
        w.clock.advance(3600)
        let ongoing = try await w.create(w.draft("Coaster credits summer", .credits, description: "Most new coasters", parks: [World.alpha]), by: ann)
        let upcoming = try await w.create(w.draft("Funnel cakes again", description: "The fair is back", start: 86_400 * 3), by: ann)
        let hidden = try await w.create(w.draft("Funnel secret", visibility: .private), by: ann)
        let beta = try await w.create(w.draft("Beta visits", .visits, description: "Funnel cakes in beta", parks: [World.beta, World.alpha]), by: ann)
        _ = try await w.store.invite(hidden, author: ann, users: [bob])
        for id in [ongoing, upcoming, beta] { try await w.join(id, bob) }
        try await w.join(beta, cat)

        // Search: public, not final, every word as a prefix of a word of the name or description;
        // most participants first, then the newest.
        func search(_ query: String?, park: ParkID? = nil, limit: Int = 10, offset: Int = 0) async throws -> [Int64] {
            try await w.store.searchChallenges(query, park: park, viewer: dan, limit: limit, offset: offset).map(\.challenge.id)
        }
        #expect(try await search("funnel") == [beta, upcoming, old])
        #expect(try await search("FUN fair") == [upcoming, old])
        #expect(try await search("cakes eats") == [old])
        #expect(try await search("coast") == [ongoing])
        #expect(try await search("funnel zebra") == [])
        #expect(try await search("secret") == [])
        #expect(try await search(nil, park: World.alpha) == [beta, ongoing])
        #expect(try await search("funnel", park: World.alpha) == [beta])
        #expect(try await search("funnel", park: "gamma") == [])
        #expect(try await search("  !! ") == [beta, upcoming, ongoing, old])
        #expect(try await search(nil, limit: 2, offset: 1) == [upcoming, ongoing])
        // Renamed: found by its new words only.
        _ = try await w.store.editChallenge(upcoming, author: ann, name: "Churros again", description: nil)
        #expect(try await search("funnel") == [beta, old])
        #expect(try await search("churro") == [upcoming])

        // Likes: once each, and off again.
        let liked = try await w.store.setChallengeLike(ongoing, user: dan, liked: true)
        #expect(liked.liked && liked.challenge.likes == 1)
        #expect(try await w.store.setChallengeLike(ongoing, user: dan, liked: true).challenge.likes == 1)
        #expect(try await w.store.challenge(ongoing, viewer: dan)?.liked == true)
        #expect(try await w.store.challenge(ongoing, viewer: cat)?.liked == false)
        let unliked = try await w.store.setChallengeLike(ongoing, user: dan, liked: false)
        #expect(!unliked.liked && unliked.challenge.likes == 0)
        #expect(try await w.store.setChallengeLike(ongoing, user: dan, liked: false).challenge.likes == 0)

        // Trending: joins and likes since a time; score, then participants, then the newest.
        let since = w.now.addingTimeInterval(1)
        #expect(try await w.store.trendingChallenges(since: since, viewer: dan, limit: 10).isEmpty)
        w.clock.advance(60)
        _ = try await w.store.setChallengeLike(upcoming, user: dan, liked: true)
        _ = try await w.store.setChallengeLike(ongoing, user: cat, liked: true)
        _ = try await w.store.setChallengeLike(hidden, user: ann, liked: true)
        try await w.join(ongoing, dan)
        #expect(try await w.store.trendingChallenges(since: since, viewer: dan, limit: 10).map(\.challenge.id) == [ongoing, upcoming])
        let always = try await w.store.trendingChallenges(since: Date(timeIntervalSince1970: 0), viewer: dan, limit: 10)
        #expect(always.map(\.challenge.id) == [ongoing, beta, upcoming, old])
        #expect(always.first?.liked == false && always.first?.membership == .member && always.first?.challenge.likes == 1)
        #expect(try await w.store.trendingChallenges(since: Date(timeIntervalSince1970: 0), viewer: dan, limit: 2).map(\.challenge.id) == [ongoing, beta])

        // The user's lists, newest first, in pages.
        w.clock.advance(2 * 86_400)  // `old` has ended
        func list(_ user: UserID, _ list: ChallengeList, limit: Int = 10, before: Int64? = nil) async throws -> [Int64] {
            try await w.store.challenges(of: user, list: list, limit: limit, before: before).map(\.challenge.id)
        }
        #expect(try await list(ann, .ongoing) == [beta, hidden, ongoing])
        #expect(try await list(ann, .ongoing, limit: 2) == [beta, hidden])
        #expect(try await list(ann, .ongoing, limit: 2, before: hidden) == [ongoing])
        #expect(try await list(ann, .upcoming) == [upcoming])
        #expect(try await list(ann, .completed) == [old])
        #expect(try await list(ann, .won) == [])
        #expect(try await list(bob, .invited) == [hidden])
        #expect(try await list(bob, .ongoing) == [beta, ongoing])
        #expect(try await list(dan, .ongoing) == [ongoing])
        #expect(try await list(dan, .completed) == [])
        #expect(try await w.store.challenges(of: bob, list: .invited, limit: 10, before: nil).first?.membership == .invited)
        // Final now, it is found no more.
        #expect(try await search("fair") == [upcoming])
    }

    /// Winners: fixed when the final time passes (lazily on a read, or by the sweep), level ones
    /// together, none without progress; counted on the profile and as a badge.
    @Test func winnersAreFixedOnceFinal() async throws {
        let w = try await World(parks: true)
        defer { w.remove() }
        let ann = try await w.user("ann"), bob = try await w.user("bob"), cat = try await w.user("cat"), dan = try await w.user("dan")
        let cakes = try await w.create(w.draft("Cakes", days: 1), by: ann)
        let rides = try await w.create(w.draft("Rides", .rides, days: 1), by: ann)
        let nothing = try await w.create(w.draft("Nothing", days: 1), by: ann)
        let early = try await w.create(w.draft("Early", days: 5), by: ann)
        for id in [cakes, rides, nothing, early] {
            for user in [bob, cat, dan] { try await w.join(id, user) }
        }
        _ = try await w.entry(cakes, bob, 5)
        _ = try await w.entry(cakes, cat, 5)
        _ = try await w.entry(cakes, dan, 3)
        _ = try await w.checkIn(bob, World.alpha)
        try await w.ride(bob, World.c1)
        #expect(try await w.store.finalizeChallenges(limit: 10) == [])
        #expect(try await w.store.challenge(cakes, viewer: bob)?.winners == [])

        // Ending early: hand entries are final at once.
        _ = try await w.entry(early, dan, 1)
        let ended = try await w.store.endChallenge(early, author: ann, timeToLive: World.timeToLive)
        #expect(ended.challenge.finalizedAt == w.now && ended.winners.map(\.id) == [dan])

        w.clock.advance(86_400)
        // Read lazily: the winners are those level at the top.
        let read = try #require(try await w.store.challenge(cakes, viewer: dan))
        #expect(read.challenge.finalizedAt == w.now && read.winners.map(\.id) == [bob, cat])
        // The sweep: what is due and not final yet, once. Counted units wait for the privacy delay.
        #expect(try await w.store.finalizeChallenges(limit: 10) == [nothing])
        #expect(try await w.store.challenge(nothing, viewer: ann)?.winners == [])
        #expect(try await w.store.badges(of: bob).earned.contains { $0.badge.id == "challenge-won" })
        #expect(try await w.store.badges(of: bob).facts.challengesWon == 1)
        #expect(try await w.store.badges(of: dan).facts.challengesWon == 1)
        #expect(try await w.store.badges(of: ann).earned.contains { $0.badge.id == "challenge-won" } == false)
        #expect(try await w.store.challenges(of: cat, list: .won, limit: 10, before: nil).map(\.challenge.id) == [cakes])
        #expect(try await w.store.challenges(of: bob, list: .won, limit: 10, before: nil).map(\.challenge.id) == [cakes])
        #expect(try await w.store.challenge(rides, viewer: ann)?.challenge.finalizedAt == nil)
        #expect(try await w.store.ranking(rides, viewer: ann, limit: 10, offset: 0)?.entries.first.map { [$0.user.id.rawValue, Int64($0.progress)] }
            == [ann.rawValue, 0])
        w.clock.advance(World.timeToLive)
        // A ranking read fixes them too, showing what was still hidden.
        let ranking = try #require(try await w.store.ranking(rides, viewer: ann, limit: 10, offset: 0))
        #expect(ranking.view.winners.map(\.id) == [bob] && ranking.entries.first?.user.id == bob && ranking.entries.first?.progress == 1)
        #expect(try await w.store.finalizeChallenges(limit: 10) == [])
        #expect(try await w.store.badges(of: bob).facts.challengesWon == 2)
        #expect(try await w.store.challenges(of: bob, list: .won, limit: 10, before: nil).map(\.challenge.id) == [rides, cakes])
        #expect(try await w.store.challenges(of: bob, list: .won, limit: 1, before: rides).map(\.challenge.id) == [cakes])

        // Deleted for everyone: members, entries, wins.
        try await w.store.deleteChallenge(cakes, author: ann)
        #expect(try await w.store.challenge(cakes, viewer: bob) == nil)
        #expect(try await w.store.challenges(of: bob, list: .won, limit: 10, before: nil).map(\.challenge.id) == [rides])
        #expect(try await w.store.challenges(of: bob, list: .completed, limit: 10, before: nil).map(\.challenge.id) == [early, nothing, rides])
        #expect(try await w.store.badges(of: cat).facts.challengesWon == 0)
    }
}
