import CoasterCore
import Foundation
import PostgresNIO
import Synchronization

/// Fixes, the visits and transitions they make, check-ins and ride logs.
///
/// A fix batch is a transaction of its own under its user's lock: no group commit, since
/// PostgreSQL commits transactions of different connections side by side and combines their WAL
/// flushes itself. Round trips are its cost here, so a batch reads what it needs in one
/// statement, decides every fix in Swift as the SpatiaLite store does row by row (replays of a
/// client id and duplicates of a stored fix included: the stored fixes the batch could collide
/// with are read first, and under the lock no other writer adds any), and writes fixes,
/// transitions, visits, measured waits, badges and the new state in one more statement.
extension PostgresStore: FixStore {
    /// Decides and records a batch of fixes for one user: read the previous state, decide each fix
    /// (in recorded-time order), write fixes, transitions, visits and the new state, in one
    /// transaction of its own. Results come back in the batch's order.
    public func recordFixes(
        user: UserID, _ fixes: [IncomingFix], source: FixSource, visitTimeout: TimeInterval, decide: @escaping FixDecider
    ) async throws -> FixBatch {
        try await self.recordFixes(user: user, fixes, source: source, visitTimeout: visitTimeout, decide: decide, now: self.now())
    }

    /// The same, calling `completion` after the commit (from a task of its own) instead of returning.
    public func recordFixes(
        user: UserID, _ fixes: [IncomingFix], source: FixSource, visitTimeout: TimeInterval, decide: @escaping FixDecider,
        completion: @escaping @Sendable (Result<FixBatch, any Error>) -> Void
    ) {
        let now = self.now()
        Task {
            do {
                completion(.success(try await self.recordFixes(user: user, fixes, source: source, visitTimeout: visitTimeout, decide: decide,
                                                               now: now)))
            } catch {
                completion(.failure(error))
            }
        }
    }

    private func recordFixes(
        user: UserID, _ fixes: [IncomingFix], source: FixSource, visitTimeout: TimeInterval, decide: @escaping FixDecider, now: Date
    ) async throws -> FixBatch {
        let recorded: RecordedBatch
        do {
            recorded = try await self.transaction(locking: [user]) { tx in
                try await Self.recordFixes(user: user, fixes, source: source, visitTimeout: visitTimeout, decide: decide, now: now, tx)
            }
        } catch {
            // A COMMIT that failed may have committed, and which parks' measured waits it held is not known here.
            self.measuredWaitsCommitted(in: nil)
            throw error
        }
        self.fixCommitCounts.withLock {
            $0.transactions += 1
            $0.batches += 1
        }
        self.measuredWaitsCommitted(in: recorded.waitParks)
        return recorded.batch
    }

    /// Tells the wait boards, after a fix batch's commit, which parks' boards its measured waits
    /// changed (`nil`: not known).
    private func measuredWaitsCommitted(in parks: Set<ParkID>?) {
        // WaitBoards: PostgreSQL has no commit hook, so the store says what it wrote once COMMIT returns.
        guard let parks else {
            self.waitBoards.invalidateAll()
            return
        }
        if !parks.isEmpty { self.waitBoards.committed(parks: parks) }
    }

    /// The work of ``recordFixes(user:_:source:visitTimeout:decide:)`` inside its transaction,
    /// under the user's lock: `decide` (the fix pipeline over the fences in force) rules on each
    /// fix; the store reads the state it needs and writes what the decisions say.
    private static func recordFixes(
        user: UserID, _ fixes: [IncomingFix], source: FixSource, visitTimeout: TimeInterval, decide: FixDecider, now: Date,
        _ tx: PostgresTransaction
    ) async throws -> RecordedBatch {
        var known = try await Self.batchStart(user, fixes, cutoff: now.timeIntervalSince1970 - visitTimeout, tx)
        var state = known.state
        var results = [FixResult?](repeating: nil, count: fixes.count)
        var stored: [StoredFix] = []
        let order = fixes.count == 1 ? [0] : fixes.indices.sorted { (fixes[$0].recordedAt, $0) < (fixes[$1].recordedAt, $1) }
        for i in order {
            let fix = fixes[i]
            if let clientID = fix.clientID, let previous = known.replays[clientID] {
                results[i] = FixResult(decision: previous, replayed: true)
                continue
            }
            var next = state
            let decision = decide(fix, &next, now)
            guard case .accepted(let current, let transitions) = decision else {
                results[i] = FixResult(decision: decision, replayed: false)
                continue
            }
            guard known.places.insert(FixPlace(fix)).inserted else {
                // Same time and place as a stored fix (or one stored earlier in this batch).
                results[i] = FixResult(decision: .rejected(.duplicate), replayed: false)
                continue
            }
            if current { state = next }
            if let clientID = fix.clientID {
                // What a later fix of the batch with this client id replays: the transitions as read back.
                known.replays[clientID] = .accepted(current: true, transitions: transitions.map(Self.readBack))
            }
            stored.append(StoredFix(fix: fix, current: current, transitions: transitions, parks: state.parks))
            results[i] = FixResult(decision: decision, replayed: false)
        }

        var plan = FixBatchPlan(openVisits: known.openVisits)
        let transitions = stored.flatMap(\.transitions)
        let entered = Set(transitions.filter { $0.zone == nil && $0.event == .enter }.map(\.park))
        if !entered.isEmpty { plan.visitContext = try await Self.visitContext(user, entering: entered, tx) }
        let boardings = transitions.filter { $0.event == .enter && $0.zoneKind == .ride && $0.ride != nil }
        if !boardings.isEmpty { plan.boardingContext = try await Self.boardingContext(user, boardings, tx) }
        for (n, fix) in stored.enumerated() {
            plan.add(fix, mark: -Int64(n) - 1)
        }

        if !stored.isEmpty {
            let write = FixBatchWrite(user: user, receivedAt: now.timeIntervalSince1970, source: source, plan: plan,
                                      state: state == known.state ? nil : state)
            let written = try await tx.preparedRows(write).first ?? FixBatchWritten(fixes: 0, opened: [])
            guard written.fixes == stored.count else {
                // Only this transaction writes the user's fixes while it holds their lock.
                throw PostgresStoreFault("a fix batch meant to store \(stored.count) fixes and stored \(written.fixes)")
            }
            // A visit opened counts towards the user's challenges and checks the park off in their
            // lists (rare: a batch that opens none pays nothing for them).
            for visit in written.opened {
                try await Self.creditChallenges(
                    user: user, evidence: .visit(id: visit.id, park: visit.park, at: Date(timeIntervalSince1970: visit.enteredAt)),
                    at: visit.enteredAt, now: now, tx)
                try await Self.checkListItems(user: user, park: visit.park, at: visit.enteredAt, tx)
            }
        }
        return RecordedBatch(batch: FixBatch(results: results.map { $0! }, state: state, visits: plan.openVisitEvidence),
                             waitParks: plan.waitParks)
    }

    /// Transactions that wrote fix batches so far, and the batches they carried: one each here.
    public var fixCommits: (transactions: Int, batches: Int) {
        self.fixCommitCounts.withLock { $0 }
    }

    /// The user's latest accepted fix, if any.
    public func latestFix(of user: UserID) async throws -> AcceptedFix? {
        try await self.single { tx in try await Self.trackState(user, tx).latest }
    }

    /// How many fixes of a user are stored (for tests and the reliability harness).
    public func fixCount(of user: UserID) async throws -> Int {
        try await self.single { tx in
            try await tx.one("SELECT count(*) FROM fixes WHERE user_id = \(user.rawValue)").decode(Int.self)
        }
    }

    /// Checks a user into a park if `decide` (``CheckinPolicy`` over the fences in force) allows
    /// it from their latest fix; `nil` if there is no such park.
    public func checkIn(user: UserID, park: ParkID, visitTimeout: TimeInterval,
                        decide: @escaping @Sendable (AcceptedFix?, Date) -> Result<Containment, CheckinRefusal>) async throws -> CheckinOutcome? {
        let now = self.now()
        let t = now.timeIntervalSince1970
        return try await self.transaction(locking: [user]) { tx -> CheckinOutcome? in
            guard try await tx.first("SELECT 1 FROM parks WHERE id = \(park.rawValue)") != nil else { return nil }
            try await Self.closeStaleVisits(user, now: now, timeout: visitTimeout, tx)
            if let open = try await Self.openVisit(user, park: park, evidenceSince: t - visitTimeout, tx) {
                return .alreadyOpen(open)
            }
            switch decide(try await Self.trackState(user, tx).latest, now) {
            case .failure(let refusal):
                return .refused(refusal)
            case .success:
                let id = try await tx.one("""
                    INSERT INTO visits (user_id, park_id, how, entered_at, last_evidence_at)
                    VALUES (\(user.rawValue), \(park.rawValue), 'explicit', \(t), \(t)) RETURNING id
                    """).decode(Int64.self)
                try await Self.creditChallenges(user: user, evidence: .visit(id: id, park: park, at: now), at: t, now: now, tx)
                try await Self.checkListItems(user: user, park: park, at: t, tx)
                try await Self.awardBadges(user, at: now, tx)
                return .created(Visit(id: id, park: park, how: .explicit, enteredAt: now, leftAt: nil))
            }
        }
    }

    /// A user's visits, newest first. `before` pages by visit id.
    public func visits(of user: UserID, limit: Int, before: Int64?) async throws -> [Visit] {
        try await self.single { tx in
            try await tx.rows("""
                SELECT \(unescaped: Self.visitColumns) FROM visits WHERE user_id = \(user.rawValue) AND id < \(before ?? Int64.max)
                ORDER BY id DESC LIMIT \(limit)
                """).map(Self.visit)
        }
    }

    /// The parks a user is visiting now (open visits with recent evidence).
    public func openVisits(of user: UserID, timeout: TimeInterval) async throws -> [Visit] {
        let now = self.now().timeIntervalSince1970
        return try await self.single { tx in
            try await tx.rows("""
                SELECT \(unescaped: Self.visitColumns) FROM visits
                WHERE user_id = \(user.rawValue) AND left_at IS NULL AND last_evidence_at >= \(now - timeout) ORDER BY id
                """).map(Self.visit)
        }
    }

    /// Logs a ride, if the rider is on a visit to its park, the ride runs, and no rider could
    /// have been on it yet after their last logged ride (docs: FixesAndVisits, "Ride logs").
    ///
    /// The ride log is inserted under the ride-log lock, so ride logs commit in id order: the
    /// leaderboards settle them by id and must never pass one still to commit.
    /// - Returns: the entry, with the evidence behind it, and how many times the rider has now
    ///   ridden it.
    public func logRide(user: UserID, ride rideID: RideID, visitTimeout: TimeInterval, policy: RideLogPolicy,
                        statusRules: RideStatusRules, estimator: WaitEstimator) async throws -> Result<(RideLogEntry, Int), RideLogRefusal> {
        let now = self.now()
        let t = now.timeIntervalSince1970
        return try await self.transaction(locking: [user]) { tx -> Result<(RideLogEntry, Int), RideLogRefusal> in
            guard let row = try await tx.first("SELECT \(unescaped: Self.rideColumns("r")) FROM rides r WHERE r.id = \(rideID.rawValue) AND r.listed")
            else { throw RideError.noSuchRide }
            let ride = try Self.ride(row)
            // The rule asks for the live status, then for the open visit, and stops at its first
            // refusal. Both are read first (reads only); stale visits are closed only if it asked
            // for the visit, as the SpatiaLite store closes them inside the rule. The visit read
            // is the one closing leaves: its last evidence is not older than the cutoff.
            let live = try await Self.liveState(of: ride.id, rules: statusRules, estimator: estimator, now: now, tx)
            let open = try await Self.openVisit(user, park: ride.park, evidenceSince: t - visitTimeout, tx)
            var askedForVisit = false
            let admitted = policy.admits(ride, live: { live }, visit: {
                askedForVisit = true
                return open
            })
            if askedForVisit { try await Self.closeStaleVisits(user, now: now, timeout: visitTimeout, tx) }
            let visit: Visit
            switch admitted {
            case .failure(let refusal): return .failure(refusal)
            case .success(let open): visit = open
            }
            if let refusal = try await Self.sequenceRefusal(user, next: ride, policy: policy, now: t, tx) { return .failure(refusal) }
            let evidence = try await Self.evidence(user, ride: rideID, since: max(visit.enteredAt.timeIntervalSince1970, t - visitTimeout),
                                                   policy: policy, now: t, tx)
            // Every list of the rider's that holds it, checked off in the same transaction: before the
            // ride-log lock, which every rider's log waits for, since it needs no log id.
            try await Self.checkListItems(user: user, ride: rideID, at: t, tx)
            // Counted on the leaderboards later, by `settleTallies(through:limit:)`, in id order.
            try await tx.lock(.rideLogs)
            let id = try await tx.one("""
                INSERT INTO ride_logs (user_id, ride_id, visit_id, ridden_at, evidence)
                VALUES (\(user.rawValue), \(rideID.rawValue), \(visit.id), \(t), \(evidence.rawValue)) RETURNING id
                """).decode(Int64.self)
            let entry = RideLogEntry(id: id, ride: rideID, rideName: ride.name, park: ride.park, riddenAt: now, evidence: evidence)
            // Every active challenge of the rider, in this transaction: a log never commits uncounted.
            try await Self.creditChallenges(
                user: user, evidence: .rideLog(id: id, ride: rideID, park: ride.park, isCoaster: ride.type == .coaster, evidence: evidence, at: now),
                at: t, now: now, tx)
            try await Self.awardBadges(user, at: now, tx)
            // `ride_counts` is kept by a trigger on `ride_logs`: read after the insert's statement.
            let count = try await tx.first("SELECT rides FROM ride_counts WHERE user_id = \(user.rawValue) AND ride_id = \(rideID.rawValue)")
                .map { try $0.decode(Int.self) } ?? 0
            return .success((entry, count))
        }
    }

    /// Why `next` cannot be logged yet after the rider's last logged ride, if it cannot
    /// (``RideLogPolicy/refusal(next:after:walk:sinceLast:)``), from the last log and the walk
    /// between the two rides' footprints.
    private static func sequenceRefusal(_ user: UserID, next: Ride, policy: RideLogPolicy, now: Double,
                                        _ tx: PostgresTransaction) async throws -> RideLogRefusal? {
        // Logs at the same time: the newest id, as SQLite's backward scan of (user_id, ridden_at) finds it.
        guard let last = try await tx.first("""
            SELECT ride_id, ridden_at FROM ride_logs WHERE user_id = \(user.rawValue) ORDER BY ridden_at DESC, id DESC LIMIT 1
            """) else { return nil }
        let (previousID, riddenAt) = try last.decode((String, Double).self)
        let previous: Ride
        if previousID == next.id.rawValue {
            previous = next
        } else {
            guard let row = try await tx.first("SELECT \(unescaped: Self.rideColumns("r")) FROM rides r WHERE r.id = \(previousID)")
            else { return nil }
            previous = try Self.ride(row)
        }
        var walk = 0.0
        if previous.id != next.id {
            // A ride's footprints in the order the import wrote them (the last one wins, as on SQLite).
            var footprints: [String: MultiPolygon] = [:]
            for row in try await tx.rows("""
                SELECT ride_id, ST_AsBinary(area, 'NDR') FROM zones WHERE kind = 'ride' AND ride_id IN (\(previous.id.rawValue), \(next.id.rawValue))
                ORDER BY ride_id, position
                """) {
                let (ride, data) = try row.decode((String, Data?).self)
                if let data, let area = try? WKB.decodeMultiPolygon([UInt8](data)) { footprints[ride] = area }
            }
            // A ride without a footprint has no distance to walk: its cycle alone counts.
            if let from = footprints[previous.id.rawValue], let to = footprints[next.id.rawValue] {
                walk = RideLogPolicy.walk(from: from, to: to) ?? 0
            }
        }
        return policy.refusal(next: next, after: previous, walk: walk, sinceLast: now - riddenAt)
    }

    /// The evidence of a log now (``RideLogPolicy/evidence(lastFixAtRide:now:)``) from the rider's
    /// last accepted fix in the ride's zone or queue on this visit. Between entering a zone and
    /// leaving it every accepted fix of theirs lay inside, so the last fix inside is their newest
    /// fix while a zone is still entered, else the last fix before they left. Only this visit's
    /// transitions are read (`since`).
    private static func evidence(_ user: UserID, ride: RideID, since: Double, policy: RideLogPolicy, now: Double,
                                 _ tx: PostgresTransaction) async throws -> RideEvidence {
        // Per zone of the ride (its footprint, its queue), the newest transition; of two at the
        // same time the first stored, as SQLite's bare column beside max(at) gives it.
        let latest = try await tx.rows("""
            SELECT DISTINCT ON (zone_id) event, at FROM transitions
            WHERE user_id = \(user.rawValue) AND at >= \(since) AND ride_id = \(ride.rawValue)
            ORDER BY zone_id, at DESC, id
            """).map { try $0.decode((String, Double).self) }
        guard !latest.isEmpty else { return policy.evidence(lastFixAtRide: nil, now: now) }
        let inside = latest.contains { $0.0 == Transition.Event.enter.rawValue }
        let left = latest.map(\.1).max() ?? now
        let lastInside = try await tx.one(inside
            ? "SELECT max(recorded_at) FROM fixes WHERE user_id = \(user.rawValue)"
            : "SELECT max(recorded_at) FROM fixes WHERE user_id = \(user.rawValue) AND recorded_at < \(left)").decode(Double?.self)
        return policy.evidence(lastFixAtRide: lastInside, now: now)
    }

    /// A ride's live status now (``RideStatusRules/liveState(statuses:posted:recentWaits:estimator:now:)``),
    /// the rule of the wait board and the live pushes, from each person's newest status report
    /// (ties as the wait boards break them) and the park's newest posted wait; recent waits can
    /// only say the ride runs, so they are not read.
    private static func liveState(of ride: RideID, rules: RideStatusRules, estimator: WaitEstimator, now: Date,
                                  _ tx: PostgresTransaction) async throws -> RideLiveState {
        let t = now.timeIntervalSince1970
        let statuses = try await tx.rows("""
            SELECT DISTINCT ON (user_id) user_id, condition, at FROM status_reports
            WHERE ride_id = \(ride.rawValue) AND at > \(t - rules.window) AND at <= \(t)
            ORDER BY user_id, at DESC, id
            """).map { row in
            let (user, condition, at) = try row.decode((Int64, String, Double).self)
            return StatusReport(user: UserID(user), condition: RideCondition(rawValue: condition) ?? .operating, at: Date(timeIntervalSince1970: at))
        }
        let posted = try await tx.first("""
            SELECT at, minutes FROM posted_waits WHERE ride_id = \(ride.rawValue) AND at <= \(t) ORDER BY at DESC LIMIT 1
            """).map { row in
            let (at, minutes) = try row.decode((Double, Double?).self)
            return PostedWait(minutes: minutes, at: Date(timeIntervalSince1970: at))
        }
        return rules.liveState(statuses: statuses, posted: { posted }, recentWaits: { false }, estimator: estimator, now: now)
    }

    /// A rider's logged rides, newest first; `before` pages by entry id. `nil` unless `viewer` is
    /// the rider or an accepted friend of theirs (read in the same transaction).
    public func rideHistory(of user: UserID, viewer: UserID, limit: Int, before: Int64?) async throws -> [RideLogEntry]? {
        try await self.read { tx -> [RideLogEntry]? in
            guard try await Self.isSelfOrFriend(user, of: viewer, tx) else { return nil }
            return try await tx.rows("""
                SELECT l.id, l.ride_id, l.ridden_at, l.evidence, r.name, r.park_id FROM ride_logs l JOIN rides r ON r.id = l.ride_id
                WHERE l.user_id = \(user.rawValue) AND l.id < \(before ?? Int64.max) ORDER BY l.id DESC LIMIT \(limit)
                """).map { row in
                let (id, ride, riddenAt, evidence, name, park) = try row.decode((Int64, String, Double, String, String, String).self)
                return RideLogEntry(id: id, ride: RideID(rawValue: ride), rideName: name, park: ParkID(rawValue: park),
                                    riddenAt: Date(timeIntervalSince1970: riddenAt), evidence: RideEvidence(rawValue: evidence) ?? .inPark)
            }
        }
    }

    /// How often a rider has ridden each ride of a park, with the park's last load (what a kept
    /// copy of its rides is checked against), or `nil` if there is no such park.
    public func rideCounts(of user: UserID, in park: ParkID) async throws -> (counts: [RideID: Int], loadedAt: Date)? {
        let counts = try await self.read { tx -> RideCountsOfPark? in
            guard let loadedAt = try await Self.loadedAt(park, tx) else { return nil }
            var counts: [RideID: Int] = [:]
            for row in try await tx.rows("""
                SELECT c.ride_id, c.rides FROM ride_counts c JOIN rides r ON r.id = c.ride_id
                WHERE c.user_id = \(user.rawValue) AND r.park_id = \(park.rawValue)
                """) {
                let (ride, n) = try row.decode((String, Int).self)
                counts[RideID(rawValue: ride)] = n
            }
            return RideCountsOfPark(counts: counts, loadedAt: loadedAt)
        }
        return counts.map { ($0.counts, $0.loadedAt) }
    }

    public func riderStats(of user: UserID) async throws -> RiderStats {
        try await self.single { tx in RiderStats(try await Self.riderFacts(user, tx)) }
    }

    /// Records an OwnTracks region event as the app reported it.
    public func recordOwnTracksTransition(user: UserID, event: String, region: String?, regionID: String?, position: Coordinate,
                                          accuracy: Double, at: Date) async throws {
        let now = self.now().timeIntervalSince1970
        try await self.single { tx in
            try await tx.run("""
                INSERT INTO owntracks_transitions (user_id, event, region, region_id, lat, lon, accuracy, at, received_at)
                VALUES (\(user.rawValue), \(event), \(region), \(regionID), \(position.lat), \(position.lon), \(accuracy),
                        \(at.timeIntervalSince1970), \(now))
                """)
        }
    }

    /// How many OwnTracks region events a user has (for tests).
    public func ownTracksTransitionCount(of user: UserID) async throws -> Int {
        try await self.single { tx in
            try await tx.one("SELECT count(*) FROM owntracks_transitions WHERE user_id = \(user.rawValue)").decode(Int.self)
        }
    }

    // MARK: Helpers inside transactions

    /// The pipeline's state of a user (the empty state if they have none yet).
    static func trackState(_ user: UserID, _ tx: PostgresTransaction) async throws -> TrackState {
        guard let row = try await tx.first("""
            SELECT lat, lon, accuracy, recorded_at, parks, zones FROM track_state WHERE user_id = \(user.rawValue)
            """) else { return TrackState() }
        let (lat, lon, accuracy, recordedAt, parks, zones) = try row.decode((Double, Double, Double, Double, String, String).self)
        return TrackState(
            latest: AcceptedFix(position: Coordinate(lat: lat, lon: lon), accuracy: accuracy, recordedAt: Date(timeIntervalSince1970: recordedAt)),
            parks: TrackStateColumns.ids(parks), zones: TrackStateColumns.ids(zones))
    }

    /// Ends open visits with no evidence for `timeout` seconds, at their last evidence.
    static func closeStaleVisits(_ user: UserID, now: Date, timeout: TimeInterval, _ tx: PostgresTransaction) async throws {
        try await tx.run("""
            UPDATE visits SET left_at = last_evidence_at
            WHERE user_id = \(user.rawValue) AND left_at IS NULL AND last_evidence_at < \(now.timeIntervalSince1970 - timeout)
            """)
    }

    /// The user's newest open visit to `park` whose last evidence is not older than `evidenceSince`
    /// (after ``closeStaleVisits(_:now:timeout:_:)`` with that cutoff: their open visit to the park).
    static func openVisit(_ user: UserID, park: ParkID, evidenceSince: Double, _ tx: PostgresTransaction) async throws -> Visit? {
        try await tx.first("""
            SELECT \(unescaped: Self.visitColumns) FROM visits
            WHERE user_id = \(user.rawValue) AND park_id = \(park.rawValue) AND left_at IS NULL AND last_evidence_at >= \(evidenceSince)
            ORDER BY id DESC LIMIT 1
            """).map(Self.visit)
    }

    /// The columns of a `visits` row that ``visit(_:)`` reads, in its order.
    static let visitColumns = "id, park_id, how, entered_at, left_at"

    static func visit(_ row: PostgresRow) throws -> Visit {
        let (id, park, how, enteredAt, leftAt) = try row.decode((Int64, String, String, Double, Double?).self)
        return Visit(id: id, park: ParkID(rawValue: park), how: Visit.How(rawValue: how) ?? .automatic,
                     enteredAt: Date(timeIntervalSince1970: enteredAt), leftAt: leftAt.map(Date.init(timeIntervalSince1970:)))
    }

    /// A transition as it reads back from its row: its time through `double precision` seconds
    /// since 1970, the same `Date` a replay of it gives.
    private static func readBack(_ transition: Transition) -> Transition {
        var stored = transition
        stored.at = Date(timeIntervalSince1970: transition.at.timeIntervalSince1970)
        return stored
    }

    // MARK: What a fix batch reads

    /// What a batch starts from, in one statement (one round trip): the user's state, their open
    /// visits once the stale ones are closed, and the stored fixes the batch could collide with
    /// (its client ids, its recorded times) with the transitions a replay answers with.
    private static func batchStart(_ user: UserID, _ fixes: [IncomingFix], cutoff: Double, _ tx: PostgresTransaction) async throws -> BatchStart {
        let statement = FixBatchRead(user: user.rawValue, cutoff: cutoff, clientIDs: fixes.compactMap(\.clientID),
                                     times: fixes.map(\.recordedAt.timeIntervalSince1970))
        var start = BatchStart()
        var replayed: [Int64: String] = [:]
        var transitions: [Int64: [Transition]] = [:]
        for (part, id, x1, x2, x3, x4, a, b, c, d, e) in try await tx.preparedRows(statement) {
            switch part {
            case 0:
                if let x1, let x2, let x3, let x4, let a, let b {
                    start.state = TrackState(
                        latest: AcceptedFix(position: Coordinate(lat: x1, lon: x2), accuracy: x3, recordedAt: Date(timeIntervalSince1970: x4)),
                        parks: TrackStateColumns.ids(a), zones: TrackStateColumns.ids(b))
                }
            case 1:
                if let id, let x1, let x2, let a {
                    start.openVisits.append(PlannedVisit(id: id, park: ParkID(rawValue: a), enteredAt: x1, leftAt: nil, lastEvidenceAt: x2))
                }
            case 2:
                if let x1, let x2, let x4 { start.places.insert(FixPlace(recordedAt: x4, lat: x1, lon: x2)) }
                if let id, let a, statement.clientIDs.contains(a) { replayed[id] = a }
            default:
                if let id, let x4, let a, let b {
                    transitions[id, default: []].append(Transition(
                        event: Transition.Event(rawValue: a) ?? .enter, park: ParkID(rawValue: b), zone: c.map(ZoneID.init(rawValue:)),
                        zoneKind: d.flatMap(ZoneKind.init(rawValue:)), ride: e.map(RideID.init(rawValue:)), at: Date(timeIntervalSince1970: x4)))
                }
            }
        }
        for (fix, clientID) in replayed {
            start.replays[clientID] = .accepted(current: true, transitions: transitions[fix] ?? [])
        }
        return start
    }

    /// What opening visits needs: which of the parks entered exist, which of them the rider
    /// visited before, and their badge facts and badges (a visit to a new park may earn one).
    private static func visitContext(_ user: UserID, entering parks: Set<ParkID>, _ tx: PostgresTransaction) async throws -> VisitContext {
        let ids = parks.map(\.rawValue)
        let (existing, visited) = try await tx.one("""
            SELECT ARRAY(SELECT id FROM parks WHERE id = ANY(\(ids)::text[])),
                   ARRAY(SELECT DISTINCT park_id FROM visits WHERE user_id = \(user.rawValue) AND park_id = ANY(\(ids)::text[]))
            """).decode(([String], [String]).self)
        let (facts, earned) = try await Self.factsAndBadges(user, tx)
        return VisitContext(parks: Set(existing.map(ParkID.init(rawValue:))), visitedBefore: Set(visited.map(ParkID.init(rawValue:))),
                            facts: facts, earned: Set(earned.map(\.badge.id)))
    }

    /// What timing the waits of `boardings` (ride-zone enters) needs, in one statement: the
    /// rider's queue and ride enters of those rides stored before the batch, far enough back for
    /// each boarding (``MeasuredWait/lookback``), the rides' parks, and what the rider's trust
    /// rests on (their account's age, their first few visits).
    private static func boardingContext(_ user: UserID, _ boardings: [Transition], _ tx: PostgresTransaction) async throws -> BoardingContext {
        let times = boardings.map(\.at.timeIntervalSince1970)
        let rides = Array(Set(boardings.compactMap(\.ride?.rawValue)))
        var context = BoardingContext()
        for row in try await tx.rows("""
            SELECT 0 AS part, NULL::bigint AS fix, created_at AS at, NULL::text AS a, NULL::text AS b FROM users WHERE id = \(user.rawValue)
            UNION ALL
            (SELECT 1, NULL, entered_at, NULL, NULL FROM visits WHERE user_id = \(user.rawValue)
             ORDER BY entered_at LIMIT \(WaitReportPolicy.establishedVisits))
            UNION ALL
            SELECT 2, NULL, NULL, id, park_id FROM rides WHERE id = ANY(\(rides)::text[])
            UNION ALL
            SELECT 3, fix_id, at, ride_id, zone_kind FROM transitions
            WHERE user_id = \(user.rawValue) AND ride_id = ANY(\(rides)::text[]) AND event = 'enter' AND zone_kind IN ('queue', 'ride')
              AND at > \((times.min() ?? 0) - MeasuredWait.lookback) AND at <= \(times.max() ?? 0)
            """) {
            let (part, fix, at, a, b) = try row.decode((Int, Int64?, Double?, String?, String?).self)
            switch part {
            case 0: context.createdAt = at
            case 1: if let at { context.firstVisits.append(at) }
            case 2: if let a, let b { context.parks[RideID(rawValue: a)] = ParkID(rawValue: b) }
            default:
                if let at, let a, let b, let kind = ZoneKind(rawValue: b) {
                    context.enters.append(ZoneEnter(ride: RideID(rawValue: a), kind: kind, at: at, fix: fix))
                }
            }
        }
        return context
    }
}

// MARK: - A fix batch's values

/// A fix batch's outcome, and the parks whose boards its measured waits changed.
private struct RecordedBatch: Sendable {
    var batch: FixBatch
    var waitParks: Set<ParkID>
}

/// A rider's ride counts in one park and the park's last load, as one Sendable value out of a read.
private struct RideCountsOfPark: Sendable {
    var counts: [RideID: Int]
    var loadedAt: Date
}

/// Where and when a fix was taken: what `UNIQUE (user_id, recorded_at, lat, lon)` compares.
private struct FixPlace: Hashable {
    var recordedAt: Double
    var lat: Double
    var lon: Double

    init(recordedAt: Double, lat: Double, lon: Double) {
        self.recordedAt = recordedAt
        self.lat = lat
        self.lon = lon
    }

    init(_ fix: IncomingFix) {
        self.init(recordedAt: fix.recordedAt.timeIntervalSince1970, lat: fix.lat, lon: fix.lon)
    }
}

/// What a batch starts from (``PostgresStore/batchStart(_:_:cutoff:_:)``).
private struct BatchStart {
    var state = TrackState()
    /// In id order.
    var openVisits: [PlannedVisit] = []
    /// Places of stored fixes the batch's fixes could repeat, and then of the batch's stored fixes.
    var places: Set<FixPlace> = []
    /// The outcome a fix with a stored client id gets again.
    var replays: [String: FixDecision] = [:]
}

/// A fix of the batch that is stored, with what it decided.
private struct StoredFix {
    var fix: IncomingFix
    var current: Bool
    var transitions: [Transition]
    /// The parks the user is inside after it.
    var parks: Set<ParkID>
}

/// A visit of the rider's as the batch leaves it: open when it began (with its id) or opened by it.
private struct PlannedVisit {
    var id: Int64?
    var park: ParkID
    var enteredAt: Double
    var leftAt: Double?
    var lastEvidenceAt: Double
    /// A stored visit the batch changed.
    var changed = false
}

/// What opening a visit needs (``PostgresStore/visitContext(_:entering:_:)``).
private struct VisitContext {
    /// The parks entered that exist.
    var parks: Set<ParkID>
    /// The parks entered that the rider had visited before the batch.
    var visitedBefore: Set<ParkID>
    /// Before the batch.
    var facts: RiderFacts
    var earned: Set<String>
}

/// A queue or ride-zone enter of a ride: what a measured wait is timed from.
private struct ZoneEnter {
    var ride: RideID
    var kind: ZoneKind
    var at: Double
    /// The fix that made it: a stored fix's id, a batch fix's negative mark, `nil` for none.
    var fix: Int64?
}

/// What timing waits needs (``PostgresStore/boardingContext(_:_:_:)``).
private struct BoardingContext {
    var enters: [ZoneEnter] = []
    var parks: [RideID: ParkID] = [:]
    var createdAt: Double?
    /// When the rider's first visits began, the earliest ``WaitReportPolicy/establishedVisits`` of them.
    var firstVisits: [Double] = []
}

/// What a fix batch writes besides its fixes, worked out from what it read, fix after fix, as the
/// SpatiaLite store writes it row after row: transitions, the visits they open and close and the
/// evidence they add, the waits boardings time, and the badges new visits earn.
private struct FixBatchPlan {
    var fixes: [IncomingFix] = []
    var transitions: [(fix: IncomingFix, transition: Transition)] = []
    /// The visits open when the batch began, in id order, then those it opened.
    var visits: [PlannedVisit]
    var visitContext: VisitContext?
    var boardingContext: BoardingContext?
    /// The batch's own queue and ride enters so far.
    var enters: [ZoneEnter] = []
    var waits: [(ride: RideID, minutes: Double, at: Double, enteredAt: Double, trust: Double)] = []
    var waitParks: Set<ParkID> = []
    var badges: [(id: String, at: Double)] = []

    init(openVisits: [PlannedVisit]) {
        self.visits = openVisits
    }

    /// Adds a stored fix (`mark` stands for its id, not known before the insert).
    mutating func add(_ stored: StoredFix, mark: Int64) {
        self.fixes.append(stored.fix)
        for t in stored.transitions {
            self.transitions.append((stored.fix, t))
            let at = t.at.timeIntervalSince1970
            if t.event == .enter, let ride = t.ride, let kind = t.zoneKind, kind == .queue || kind == .ride {
                self.enters.append(ZoneEnter(ride: ride, kind: kind, at: at, fix: mark))
                if kind == .ride { self.boarded(ride, at: at, fix: mark) }
            }
            guard t.zone == nil else { continue }
            switch t.event {
            case .enter:
                if !self.visits.contains(where: { $0.park == t.park && $0.leftAt == nil }), let context = self.visitContext,
                   context.parks.contains(t.park) {
                    self.visits.append(PlannedVisit(id: nil, park: t.park, enteredAt: at, leftAt: nil, lastEvidenceAt: at))
                    self.awardBadges(at: t.at)
                }
            case .exit:
                for k in self.visits.indices where self.visits[k].park == t.park && self.visits[k].leftAt == nil {
                    self.visits[k].leftAt = max(self.visits[k].enteredAt, at)
                    self.visits[k].changed = true
                }
            }
        }
        guard stored.current else { return }
        let recordedAt = stored.fix.recordedAt.timeIntervalSince1970
        for k in self.visits.indices where self.visits[k].leftAt == nil && stored.parks.contains(self.visits[k].park) {
            let evidence = max(self.visits[k].lastEvidenceAt, recordedAt)
            if evidence != self.visits[k].lastEvidenceAt {
                self.visits[k].lastEvidenceAt = evidence
                self.visits[k].changed = true
            }
        }
    }

    /// A ride-zone enter that follows the rider's queue-zone enter is a timed wait when
    /// ``MeasuredWait`` takes the pair for one, weighed by the rider's trust then
    /// (``WaitReportPolicy/trust(accountAge:earlierVisits:)``).
    private mutating func boarded(_ ride: RideID, at boardedAt: Double, fix: Int64) {
        guard let context = self.boardingContext else { return }
        let enters = context.enters + self.enters
        guard let queued = enters.filter({
            $0.ride == ride && $0.kind == .queue && $0.at > boardedAt - MeasuredWait.lookback && $0.at <= boardedAt
        }).map(\.at).max() else { return }
        // Other fixes' boardings only (an enter without a fix never matches, as `fix_id <> ?` does not on NULL).
        let boardedSince = enters.count {
            $0.ride == ride && $0.kind == .ride && $0.at > queued && $0.at <= boardedAt && $0.fix != nil && $0.fix != fix
        }
        guard let minutes = MeasuredWait.minutes(queuedAt: queued, boardedAt: boardedAt, boardingsBetween: boardedSince),
              let park = context.parks[ride] else { return }
        // Trust as of the boarding, its time through a `Date` as the SpatiaLite store passes it.
        let t = Date(timeIntervalSince1970: boardedAt).timeIntervalSince1970
        let dayBefore = t - 24 * 3600
        let earlier = context.firstVisits.count { $0 < dayBefore } + self.visits.count { $0.id == nil && $0.enteredAt < dayBefore }
        let trust = WaitReportPolicy.trust(accountAge: t - (context.createdAt ?? t), earlierVisits: min(earlier, WaitReportPolicy.establishedVisits))
        self.waits.append((ride, minutes, boardedAt, queued, trust))
        self.waitParks.insert(park)
    }

    /// Awards every badge the rider's facts earn once the visits so far are counted.
    private mutating func awardBadges(at: Date) {
        guard var context = self.visitContext else { return }
        let newParks = Set(self.visits.filter { $0.id == nil }.map(\.park)).subtracting(context.visitedBefore)
        var facts = context.facts
        facts.parksVisited += newParks.count
        for badge in Badge.newlyEarned(facts, earned: context.earned) {
            self.badges.append((badge.id, at.timeIntervalSince1970))
            context.earned.insert(badge.id)
        }
        self.visitContext = context
    }

    /// Open visits after the batch: park → last evidence (of two open visits to one park, the newer).
    var openVisitEvidence: [ParkID: Date] {
        var out: [ParkID: Date] = [:]
        for visit in self.visits where visit.leftAt == nil {
            out[visit.park] = Date(timeIntervalSince1970: visit.lastEvidenceAt)
        }
        return out
    }
}

// MARK: - The fix batch's statements

extension PostgresTransaction {
    /// Every row of a prepared statement: parsed and planned once per connection, then only
    /// bound and run.
    fileprivate func preparedRows<Statement: PostgresPreparedStatement>(_ statement: Statement) async throws -> [Statement.Row] {
        var rows: [Statement.Row] = []
        for try await row in try await self.connection.execute(statement, logger: self.logger) {
            rows.append(row)
        }
        return rows
    }
}

/// What a fix batch reads before deciding, as rows of four kinds (`part`) in one statement:
/// - 0, the user's `track_state`: lat, lon, accuracy, recorded_at (x1…x4), parks, zones (a, b);
/// - 1, each open visit left once those without evidence since the cutoff are closed: id,
///   entered_at, last_evidence_at (x1, x2), park_id (a), by id. The statement's snapshot is from
///   before its own update, so the open visits are read as those the closing leaves;
/// - 2, each stored fix with one of the batch's client ids or recorded times: id, lat, lon, recorded_at (x1, x2, x4), client_id (a);
/// - 3, the transitions of those with one of the client ids (a replay's answer), by id: fix_id,
///   at (x4), event, park_id, zone_id, zone_kind, ride_id (a…e).
private struct FixBatchRead: PostgresPreparedStatement {
    static let name = "coasterlife_fix_batch_read"
    static let sql = """
        WITH closed AS (
            UPDATE visits SET left_at = last_evidence_at WHERE user_id = $1 AND left_at IS NULL AND last_evidence_at < $2
        ), known AS (
            SELECT id, client_id, lat, lon, recorded_at FROM fixes
            WHERE user_id = $1 AND (client_id = ANY($3::text[]) OR recorded_at = ANY($4::float8[]))
        )
        SELECT 0 AS part, 0::bigint AS ord, NULL::bigint AS id, lat AS x1, lon AS x2, accuracy AS x3, recorded_at AS x4,
               parks AS a, zones AS b, NULL::text AS c, NULL::text AS d, NULL::text AS e
        FROM track_state WHERE user_id = $1
        UNION ALL
        SELECT 1, id, id, entered_at, last_evidence_at, NULL, NULL, park_id, NULL, NULL, NULL, NULL
        FROM visits WHERE user_id = $1 AND left_at IS NULL AND last_evidence_at >= $2
        UNION ALL
        SELECT 2, id, id, lat, lon, NULL, recorded_at, client_id, NULL, NULL, NULL, NULL FROM known
        UNION ALL
        SELECT 3, t.id, t.fix_id, NULL, NULL, NULL, t.at, t.event, t.park_id, t.zone_id, t.zone_kind, t.ride_id
        FROM transitions t WHERE t.fix_id IN (SELECT id FROM known WHERE client_id = ANY($3::text[]))
        ORDER BY part, ord
        """
    typealias Row = (Int, Int64?, Double?, Double?, Double?, Double?, String?, String?, String?, String?, String?)

    var user: Int64
    var cutoff: Double
    var clientIDs: [String]
    var times: [Double]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings()
        bindings.append(self.user)
        bindings.append(self.cutoff)
        bindings.append(self.clientIDs)
        bindings.append(self.times)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        let (part, _, id, x1, x2, x3, x4, a, b, c, d, e) =
            try row.decode((Int, Int64, Int64?, Double?, Double?, Double?, Double?, String?, String?, String?, String?, String?).self)
        return (part, id, x1, x2, x3, x4, a, b, c, d, e)
    }
}

/// Everything a fix batch writes, in one statement of data-modifying CTEs, each from `unnest`
/// arrays in the order the SpatiaLite store inserts the rows (so ids rise in the same order):
/// the fixes (returning their places, which the transitions join to find their fix's id), the
/// transitions, the visits opened and those changed, the new state (`$27`: whether it changed),
/// the measured waits and the badges. Returns how many fixes it inserted and the visits it opened.
private struct FixBatchWrite: PostgresPreparedStatement {
    static let name = "coasterlife_fix_batch_write"
    static let sql = """
        WITH f AS (
            INSERT INTO fixes (user_id, client_id, lat, lon, accuracy, recorded_at, received_at, speed, altitude, source)
            SELECT $1, u.client_id, u.lat, u.lon, u.accuracy, u.recorded_at, $2, u.speed, u.altitude, $3
            FROM unnest($4::text[], $5::float8[], $6::float8[], $7::float8[], $8::float8[], $9::float8[], $10::float8[])
                WITH ORDINALITY AS u(client_id, lat, lon, accuracy, recorded_at, speed, altitude, n)
            ORDER BY u.n
            ON CONFLICT DO NOTHING
            RETURNING id, lat, lon, recorded_at
        ), t AS (
            INSERT INTO transitions (user_id, fix_id, event, park_id, zone_id, zone_kind, ride_id, at)
            SELECT $1, f.id, u.event, u.park_id, u.zone_id, u.zone_kind, u.ride_id, u.at
            FROM unnest($11::float8[], $12::float8[], $13::float8[], $14::text[], $15::text[], $16::text[], $17::text[], $18::text[], $19::float8[])
                WITH ORDINALITY AS u(fix_lat, fix_lon, fix_recorded_at, event, park_id, zone_id, zone_kind, ride_id, at, n)
            JOIN f ON f.lat = u.fix_lat AND f.lon = u.fix_lon AND f.recorded_at = u.fix_recorded_at
            ORDER BY u.n
        ), opened AS (
            INSERT INTO visits (user_id, park_id, how, entered_at, left_at, last_evidence_at)
            SELECT $1, u.park_id, 'automatic', u.entered_at, u.left_at, u.last_evidence_at
            FROM unnest($20::text[], $21::float8[], $22::float8[], $23::float8[])
                WITH ORDINALITY AS u(park_id, entered_at, left_at, last_evidence_at, n)
            ORDER BY u.n
            RETURNING id, park_id, entered_at
        ), changed AS (
            UPDATE visits v SET left_at = u.left_at, last_evidence_at = u.last_evidence_at
            FROM unnest($24::bigint[], $25::float8[], $26::float8[]) AS u(id, left_at, last_evidence_at)
            WHERE v.id = u.id
        ), state AS (
            INSERT INTO track_state (user_id, lat, lon, accuracy, recorded_at, parks, zones)
            SELECT $1, $28, $29, $30, $31, $32, $33 WHERE $27
            ON CONFLICT (user_id) DO UPDATE SET lat = excluded.lat, lon = excluded.lon, accuracy = excluded.accuracy,
                recorded_at = excluded.recorded_at, parks = excluded.parks, zones = excluded.zones
        ), waits AS (
            INSERT INTO wait_reports (user_id, ride_id, minutes, source, at, entered_at, trust)
            SELECT $1, u.ride_id, u.minutes, 'measured', u.at, u.entered_at, u.trust
            FROM unnest($34::text[], $35::float8[], $36::float8[], $37::float8[], $38::float8[])
                WITH ORDINALITY AS u(ride_id, minutes, at, entered_at, trust, n)
            ORDER BY u.n
        ), earned AS (
            INSERT INTO badges (user_id, badge_id, earned_at)
            SELECT $1, u.badge_id, u.earned_at FROM unnest($39::text[], $40::float8[]) AS u(badge_id, earned_at)
            ON CONFLICT (user_id, badge_id) DO NOTHING
        )
        SELECT (SELECT count(*) FROM f), ARRAY(SELECT id FROM opened ORDER BY id), ARRAY(SELECT park_id FROM opened ORDER BY id),
               ARRAY(SELECT entered_at FROM opened ORDER BY id)
        """
    typealias Row = FixBatchWritten

    var user: UserID
    var receivedAt: Double
    var source: FixSource
    var plan: FixBatchPlan
    /// The new state, if it differs from the stored one.
    var state: TrackState?

    func makeBindings() throws -> PostgresBindings {
        var b = PostgresBindings()
        b.append(self.user.rawValue)
        b.append(self.receivedAt)
        b.append(self.source.rawValue)
        let fixes = self.plan.fixes
        try b.append(NullableArray(fixes.map(\.clientID)))
        b.append(fixes.map(\.lat))
        b.append(fixes.map(\.lon))
        try b.append(NullableArray(fixes.map(\.accuracy)))
        b.append(fixes.map(\.recordedAt.timeIntervalSince1970))
        try b.append(NullableArray(fixes.map(\.speed)))
        try b.append(NullableArray(fixes.map(\.altitude)))
        let transitions = self.plan.transitions
        b.append(transitions.map(\.fix.lat))
        b.append(transitions.map(\.fix.lon))
        b.append(transitions.map(\.fix.recordedAt.timeIntervalSince1970))
        b.append(transitions.map(\.transition.event.rawValue))
        b.append(transitions.map(\.transition.park.rawValue))
        try b.append(NullableArray(transitions.map(\.transition.zone?.rawValue)))
        try b.append(NullableArray(transitions.map(\.transition.zoneKind?.rawValue)))
        try b.append(NullableArray(transitions.map(\.transition.ride?.rawValue)))
        b.append(transitions.map(\.transition.at.timeIntervalSince1970))
        let opened = self.plan.visits.filter { $0.id == nil }
        b.append(opened.map(\.park.rawValue))
        b.append(opened.map(\.enteredAt))
        try b.append(NullableArray(opened.map(\.leftAt)))
        b.append(opened.map(\.lastEvidenceAt))
        let changed = self.plan.visits.filter { $0.id != nil && $0.changed }
        b.append(changed.compactMap(\.id))
        try b.append(NullableArray(changed.map(\.leftAt)))
        b.append(changed.map(\.lastEvidenceAt))
        let latest = self.state?.latest
        b.append(latest != nil)
        b.append(latest?.position.lat ?? 0)
        b.append(latest?.position.lon ?? 0)
        b.append(latest?.accuracy ?? 0)
        b.append(latest?.recordedAt.timeIntervalSince1970 ?? 0)
        b.append(TrackStateColumns.text(self.state?.parks ?? []))
        b.append(TrackStateColumns.text(self.state?.zones ?? []))
        let waits = self.plan.waits
        b.append(waits.map(\.ride.rawValue))
        b.append(waits.map(\.minutes))
        b.append(waits.map(\.at))
        b.append(waits.map(\.enteredAt))
        b.append(waits.map(\.trust))
        b.append(self.plan.badges.map(\.id))
        b.append(self.plan.badges.map(\.at))
        return b
    }

    func decodeRow(_ row: PostgresRow) throws -> FixBatchWritten {
        let (fixes, ids, parks, enteredAt) = try row.decode((Int, [Int64], [String], [Double]).self)
        return FixBatchWritten(fixes: fixes, opened: zip(ids, zip(parks, enteredAt)).map { ($0.0, ParkID(rawValue: $0.1.0), $0.1.1) })
    }
}

/// What a fix batch wrote: how many fixes, and the visits it opened (by id).
private struct FixBatchWritten {
    var fixes: Int
    var opened: [(id: Int64, park: ParkID, enteredAt: Double)]
}
