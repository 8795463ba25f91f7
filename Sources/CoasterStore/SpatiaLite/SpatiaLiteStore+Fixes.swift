import CoasterCore
import Foundation
import GRDB

extension SpatiaLiteStore {
    /// Decides and records a batch of fixes for one user: read the previous state, decide each fix
    /// (in recorded-time order), write fixes, transitions, visits and the new state. The batch is
    /// one savepoint of a transaction shared with other users' batches queued meanwhile
    /// (``GroupCommit``); it returns after that transaction commits. Results come back in the
    /// batch's order.
    public func recordFixes(
        user: UserID, _ fixes: [IncomingFix], source: FixSource, visitTimeout: TimeInterval, decide: @escaping FixDecider
    ) async throws -> FixBatch {
        try await withCheckedThrowingContinuation { continuation in
            self.recordFixes(user: user, fixes, source: source, visitTimeout: visitTimeout, decide: decide) {
                continuation.resume(with: $0)
            }
        }
    }

    /// The same, calling `completion` after the commit (on the writer's thread) instead of
    /// returning: for callers that are not tasks (``GroupCommit/write(_:completion:)``).
    public func recordFixes(
        user: UserID, _ fixes: [IncomingFix], source: FixSource, visitTimeout: TimeInterval, decide: @escaping FixDecider,
        completion: @escaping @Sendable (Result<FixBatch, any Error>) -> Void
    ) {
        let now = self.now()
        self.fixWrites.write({ db in
            try Self.recordFixes(user: user, fixes, source: source, visitTimeout: visitTimeout, decide: decide, now: now,
                                 boards: self.waitBoards, db)
        }, completion: completion)
    }

    /// The work of ``recordFixes(user:_:source:visitTimeout:decide:)`` inside its transaction:
    /// `decide` (the fix pipeline over the fences in force) rules on each fix; the store reads the
    /// state it needs and writes what the decisions say.
    /// Every statement is a cached (prepared once per connection) one: compiling SQL and
    /// computing its observed region cost more than running it.
    static func recordFixes(
        user: UserID, _ fixes: [IncomingFix], source: FixSource, visitTimeout: TimeInterval, decide: FixDecider,
        now: Date, boards: WaitBoards, _ db: Database
    ) throws -> FixBatch {
        var state = try Self.trackState(user, db)
        try Self.closeStaleVisits(user, now: now, timeout: visitTimeout, db)
        var results = [FixResult?](repeating: nil, count: fixes.count)
        let order = fixes.count == 1 ? [0] : fixes.indices.sorted { (fixes[$0].recordedAt, $0) < (fixes[$1].recordedAt, $1) }
        let insert = try db.cachedStatement(sql: """
            INSERT INTO fixes (user_id, client_id, lat, lon, accuracy, recorded_at, received_at, speed, altitude, source)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
            """)
        let evidence = try db.cachedStatement(sql: """
            UPDATE visits SET last_evidence_at = max(last_evidence_at, ?) WHERE user_id = ? AND left_at IS NULL AND park_id = ?
            """)
        for i in order {
            let fix = fixes[i]
            if let clientID = fix.clientID, let previous = try Self.replay(user, clientID: clientID, db) {
                results[i] = FixResult(decision: previous, replayed: true)
                continue
            }
            var next = state
            let decision = decide(fix, &next, now)
            guard case .accepted(let current, let transitions) = decision else {
                results[i] = FixResult(decision: decision, replayed: false)
                continue
            }
            try insert.execute(arguments: [
                user.rawValue, fix.clientID, fix.lat, fix.lon, fix.accuracy, fix.recordedAt.timeIntervalSince1970,
                now.timeIntervalSince1970, fix.speed, fix.altitude, source.rawValue,
            ])
            guard db.changesCount == 1 else {
                // Same time and place as a stored fix (or a concurrent retry of the same client id).
                results[i] = FixResult(decision: .rejected(.duplicate), replayed: false)
                continue
            }
            let fixID = db.lastInsertedRowID
            if current { state = next }
            try Self.apply(transitions, user: user, fixID: fixID, now: now, boards: boards, db)
            if current {
                for park in state.parks {
                    try evidence.execute(arguments: [fix.recordedAt.timeIntervalSince1970, user.rawValue, park.rawValue])
                }
            }
            results[i] = FixResult(decision: decision, replayed: false)
        }
        try Self.save(state, user, db)
        return FixBatch(results: results.map { $0! }, state: state, visits: try Self.openVisitEvidence(user, db))
    }

    /// Transactions that wrote fix batches so far, and the batches they carried (their ratio is the
    /// mean group size of the group commit).
    public var fixCommits: (transactions: Int, batches: Int) {
        let totals = self.fixWrites.totals
        return (totals.groups, totals.writes)
    }

    /// The user's latest accepted fix, if any.
    public func latestFix(of user: UserID) async throws -> AcceptedFix? {
        try await self.pool.read { db in try Self.trackState(user, db).latest }
    }

    /// How many fixes of a user are stored (for tests and the reliability harness).
    public func fixCount(of user: UserID) async throws -> Int {
        try await self.pool.read { db in
            try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM fixes WHERE user_id = ?"), arguments: [user.rawValue]) ?? 0
        }
    }

    /// Checks a user into a park if `decide` (``CheckinPolicy`` over the fences in force) allows
    /// it from their latest fix; `nil` if there is no such park.
    public func checkIn(user: UserID, park: ParkID, visitTimeout: TimeInterval,
                        decide: @escaping @Sendable (AcceptedFix?, Date) -> Result<Containment, CheckinRefusal>) async throws -> CheckinOutcome? {
        let now = self.now()
        return try await self.pool.write { db in
            guard try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM parks WHERE id = ?)"),
                arguments: [park.rawValue]) == true else {
                return nil
            }
            try Self.closeStaleVisits(user, now: now, timeout: visitTimeout, db)
            if let open = try Self.openVisit(user, park: park, db) {
                return .alreadyOpen(open)
            }
            switch decide(try Self.trackState(user, db).latest, now) {
            case .failure(let refusal):
                return .refused(refusal)
            case .success:
                try db.cachedStatement(sql: """
                    INSERT INTO visits (user_id, park_id, how, entered_at, last_evidence_at) VALUES (?, ?, 'explicit', ?, ?)
                    """).execute(arguments: [user.rawValue, park.rawValue, now.timeIntervalSince1970, now.timeIntervalSince1970])
                let id = db.lastInsertedRowID
                try Self.creditChallenges(user: user, evidence: .visit(id: id, park: park, at: now), now: now, db)
                try Self.checkListItems(user: user, evidence: .visit(park, at: now), db)
                try Self.awardBadges(user, at: now, db)
                return .created(Visit(id: id, park: park, how: .explicit, enteredAt: now, leftAt: nil))
            }
        }
    }

    /// A user's visits, newest first. `before` pages by visit id.
    public func visits(of user: UserID, limit: Int, before: Int64? = nil) async throws -> [Visit] {
        try await self.pool.read { db in
            try Row.fetchAll(db.cachedStatement(sql: Self.visitPage), arguments: [user.rawValue, before ?? Int64.max, limit]).map(Self.visit)
        }
    }

    /// A page of a user's visits, newest first: a range of `visits_paged` (QueryPlanTests).
    static let visitPage = "SELECT * FROM visits WHERE user_id = ? AND id < ? ORDER BY id DESC LIMIT ?"

    /// The parks a user is visiting now (open visits with recent evidence).
    public func openVisits(of user: UserID, timeout: TimeInterval) async throws -> [Visit] {
        let now = self.now().timeIntervalSince1970
        return try await self.pool.read { db in
            try Row.fetchAll(db.cachedStatement(sql: """
                SELECT * FROM visits WHERE user_id = ? AND left_at IS NULL AND last_evidence_at >= ? ORDER BY id
                """), arguments: [user.rawValue, now - timeout]).map(Self.visit)
        }
    }

    /// Logs a ride, if the rider is on a visit to its park, the ride runs, and no rider could
    /// have been on it yet after their last logged ride (docs: FixesAndVisits, "Ride logs").
    /// - Returns: the entry, with the evidence behind it, and how many times the rider has now
    ///   ridden it.
    public func logRide(user: UserID, ride rideID: RideID, visitTimeout: TimeInterval, policy: RideLogPolicy = RideLogPolicy(),
                        statusRules: RideStatusRules = RideStatusRules(), estimator: WaitEstimator = WaitEstimator()) async throws -> Result<(RideLogEntry, Int), RideLogRefusal> {
        let now = self.now()
        let t = now.timeIntervalSince1970
        return try await self.pool.write { db in
            guard let ride = try RideRecord.fetchOne(db.cachedStatement(sql: "SELECT * FROM rides WHERE id = ? AND listed = 1"),
                arguments: [rideID.rawValue])?.ride
            else { throw RideError.noSuchRide }
            let admitted = try policy.admits(ride, live: {
                // The rule of the wait board and the live pushes; recent waits can only say the
                // ride runs, so they are not read.
                try statusRules.liveState(
                    statuses: try Self.statusReports(ride.id, rules: statusRules, now: now, db),
                    posted: { try Self.newestPosted(ride.id, now: now, db) }, recentWaits: { false }, estimator: estimator, now: now)
            }, visit: {
                try Self.closeStaleVisits(user, now: now, timeout: visitTimeout, db)
                return try Self.openVisit(user, park: ride.park, db)
            })
            let visit: Visit
            switch admitted {
            case .failure(let refusal): return .failure(refusal)
            case .success(let open): visit = open
            }
            if let refusal = try Self.sequenceRefusal(user, next: ride, policy: policy, now: t, db) { return .failure(refusal) }
            let evidence = try Self.evidence(user, ride: rideID, since: max(visit.enteredAt.timeIntervalSince1970, t - visitTimeout),
                                             policy: policy, now: t, db)
            // Counted on the leaderboards later, by `settleTallies(through:limit:)`.
            try db.cachedStatement(sql: "INSERT INTO ride_logs (user_id, ride_id, visit_id, ridden_at, evidence) VALUES (?, ?, ?, ?, ?)")
                .execute(arguments: [user.rawValue, rideID.rawValue, visit.id, t, evidence.rawValue])
            // Read the id before anything else inserts (a badge) and moves lastInsertedRowID.
            let entry = RideLogEntry(id: db.lastInsertedRowID, ride: rideID, rideName: ride.name, park: ride.park, riddenAt: now,
                                     evidence: evidence)
            // Every active challenge of the rider, in this transaction: a log never commits uncounted.
            try Self.creditChallenges(
                user: user, evidence: .rideLog(id: entry.id, ride: rideID, park: ride.park, isCoaster: ride.type == .coaster, evidence: evidence, at: now),
                now: now, db)
            // And every list of the rider's that holds it, likewise.
            try Self.checkListItems(user: user, evidence: .rideLog(rideID, at: now), db)
            try Self.awardBadges(user, at: now, db)
            let count = try Int.fetchOne(db.cachedStatement(sql: "SELECT rides FROM ride_counts WHERE user_id = ? AND ride_id = ?"),
                arguments: [user.rawValue, rideID.rawValue]) ?? 0
            return .success((entry, count))
        }
    }

    /// Why `next` cannot be logged yet after the rider's last logged ride, if it cannot
    /// (``RideLogPolicy/refusal(next:after:walk:sinceLast:)``), from the last log and the walk
    /// between the two rides' footprints.
    private static func sequenceRefusal(_ user: UserID, next: Ride, policy: RideLogPolicy, now: Double, _ db: Database) throws -> RideLogRefusal? {
        guard let last = try Row.fetchOne(db.cachedStatement(sql: """
            SELECT l.ride_id, l.ridden_at FROM ride_logs l WHERE l.user_id = ? ORDER BY l.ridden_at DESC LIMIT 1
            """), arguments: [user.rawValue]) else { return nil }
        let previousID = RideID(rawValue: last["ride_id"])
        let riddenAt: Double = last["ridden_at"]
        guard let previous = previousID == next.id ? next : try RideRecord.fetchOne(
            db.cachedStatement(sql: "SELECT * FROM rides WHERE id = ?"), arguments: [previousID.rawValue])?.ride
        else { return nil }
        var walk = 0.0
        if previous.id != next.id {
            var footprints: [String: MultiPolygon] = [:]
            for row in try Row.fetchAll(db.cachedStatement(sql: """
                SELECT ride_id, AsBinary(area) AS area FROM zones WHERE kind = 'ride' AND ride_id IN (?, ?)
                """), arguments: [previous.id.rawValue, next.id.rawValue]) {
                if let data: Data = row["area"], let area = try? WKB.decodeMultiPolygon([UInt8](data)) { footprints[row["ride_id"]] = area }
            }
            // A ride without a footprint has no distance to walk: its cycle alone counts.
            if let from = footprints[previous.id.rawValue], let to = footprints[next.id.rawValue] {
                walk = RideLogPolicy.walk(from: from, to: to) ?? 0
            }
        }
        return policy.refusal(next: next, after: previous, walk: walk, sinceLast: now - riddenAt)
    }

    /// The evidence of a log now (``RideLogPolicy/evidence(lastFixAtRide:now:)``) from the rider's
    /// last accepted fix in the ride's zone or queue on this visit. Between entering a zone and leaving it every accepted fix of theirs lay inside, so
    /// the last fix inside is their newest fix while a zone is still entered, else the last fix
    /// before they left. Only this visit's transitions are read (`since`).
    private static func evidence(_ user: UserID, ride: RideID, since: Double, policy: RideLogPolicy, now: Double, _ db: Database) throws -> RideEvidence {
        // Per zone of the ride (its footprint, its queue), the newest transition; SQLite takes the
        // bare `event` from the row whose max(at) it returns.
        let latest = try Row.fetchAll(db.cachedStatement(sql: """
            SELECT event, max(at) AS at FROM transitions WHERE user_id = ? AND at >= ? AND ride_id = ? GROUP BY zone_id
            """), arguments: [user.rawValue, since, ride.rawValue])
        guard !latest.isEmpty else { return policy.evidence(lastFixAtRide: nil, now: now) }
        let inside = latest.contains { $0["event"] as String == Transition.Event.enter.rawValue }
        let left = latest.map { $0["at"] as Double }.max() ?? now
        let lastInside = try Double.fetchOne(db.cachedStatement(sql: inside
            ? "SELECT max(recorded_at) FROM fixes WHERE user_id = ?"
            : "SELECT max(recorded_at) FROM fixes WHERE user_id = ? AND recorded_at < ?"),
            arguments: inside ? [user.rawValue] : [user.rawValue, left])
        return policy.evidence(lastFixAtRide: lastInside, now: now)
    }

    /// A rider's logged rides, newest first; `before` pages by entry id. `nil` unless `viewer` is
    /// the rider or an accepted friend of theirs (read in the same transaction).
    public func rideHistory(of user: UserID, viewer: UserID, limit: Int, before: Int64? = nil) async throws -> [RideLogEntry]? {
        try await self.pool.read { db in
            guard try Self.isSelfOrFriend(user, of: viewer, db) else { return nil }
            return try Row.fetchAll(db.cachedStatement(sql: Self.rideHistoryPage), arguments: [user.rawValue, before ?? Int64.max, limit]).map {
                RideLogEntry(id: $0["id"], ride: RideID(rawValue: $0["ride_id"]), rideName: $0["name"],
                             park: ParkID(rawValue: $0["park_id"]), riddenAt: Date(timeIntervalSince1970: $0["ridden_at"]),
                             evidence: RideEvidence(rawValue: $0["evidence"]) ?? .inPark)
            }
        }
    }

    /// A page of a rider's logged rides, newest first: a range of `ride_logs_paged` (QueryPlanTests).
    static let rideHistoryPage = """
        SELECT l.id, l.ride_id, l.ridden_at, l.evidence, r.name, r.park_id FROM ride_logs l JOIN rides r ON r.id = l.ride_id
        WHERE l.user_id = ? AND l.id < ? ORDER BY l.id DESC LIMIT ?
        """

    /// How often a rider has ridden each ride of a park, with the park's last load (what a kept
    /// copy of its rides is checked against), or `nil` if there is no such park.
    public func rideCounts(of user: UserID, in park: ParkID) async throws -> (counts: [RideID: Int], loadedAt: Date)? {
        try await self.pool.read { db in
            guard let loadedAt = try Self.loadedAt(park, db) else { return nil }
            var counts: [RideID: Int] = [:]
            for row in try Row.fetchAll(db.cachedStatement(sql: Self.parkRideCounts), arguments: [user.rawValue, park.rawValue]) {
                counts[RideID(rawValue: row["ride_id"])] = row["n"]
            }
            return (counts, loadedAt)
        }
    }

    /// How often a rider has ridden each ride of a park, from `ride_counts` (one row a ride).
    static let parkRideCounts = """
        SELECT c.ride_id, c.rides AS n FROM ride_counts c JOIN rides r ON r.id = c.ride_id WHERE c.user_id = ? AND r.park_id = ?
        """

    public func riderStats(of user: UserID) async throws -> RiderStats {
        try await self.pool.read { db in
            RiderStats(try Self.riderFacts(user, db))
        }
    }

    /// Records an OwnTracks region event as the app reported it.
    public func recordOwnTracksTransition(user: UserID, event: String, region: String?, regionID: String?, position: Coordinate,
                                          accuracy: Double, at: Date) async throws {
        let now = self.now().timeIntervalSince1970
        try await self.pool.write { db in
            try db.cachedStatement(sql: """
                INSERT INTO owntracks_transitions (user_id, event, region, region_id, lat, lon, accuracy, at, received_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """).execute(arguments: [user.rawValue, event, region, regionID, position.lat, position.lon, accuracy, at.timeIntervalSince1970, now])
        }
    }

    /// How many OwnTracks region events a user has (for tests).
    public func ownTracksTransitionCount(of user: UserID) async throws -> Int {
        try await self.pool.read { db in
            try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM owntracks_transitions WHERE user_id = ?"), arguments: [user.rawValue]) ?? 0
        }
    }

    // MARK: Helpers inside transactions

    static func trackState(_ user: UserID, _ db: Database) throws -> TrackState {
        let select = try db.cachedStatement(sql: "SELECT lat, lon, accuracy, recorded_at, parks, zones FROM track_state WHERE user_id = ?")
        guard let row = try Row.fetchOne(select, arguments: [user.rawValue]) else {
            return TrackState()
        }
        return TrackState(
            latest: AcceptedFix(position: Coordinate(lat: row["lat"], lon: row["lon"]), accuracy: row["accuracy"],
                                recordedAt: Date(timeIntervalSince1970: row["recorded_at"])),
            parks: TrackStateColumns.ids(row["parks"]), zones: TrackStateColumns.ids(row["zones"]))
    }

    private static func save(_ state: TrackState, _ user: UserID, _ db: Database) throws {
        guard let latest = state.latest else { return }
        try db.cachedStatement(sql: """
            INSERT INTO track_state (user_id, lat, lon, accuracy, recorded_at, parks, zones) VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (user_id) DO UPDATE SET lat = excluded.lat, lon = excluded.lon, accuracy = excluded.accuracy,
                recorded_at = excluded.recorded_at, parks = excluded.parks, zones = excluded.zones
            """).execute(arguments: [user.rawValue, latest.position.lat, latest.position.lon, latest.accuracy, latest.recordedAt.timeIntervalSince1970,
                             TrackStateColumns.text(state.parks), TrackStateColumns.text(state.zones)])
    }

    /// The stored outcome of an earlier fix with this client id, if there is one.
    private static func replay(_ user: UserID, clientID: String, _ db: Database) throws -> FixDecision? {
        let select = try db.cachedStatement(sql: "SELECT id FROM fixes WHERE user_id = ? AND client_id = ?")
        guard let fixID = try Int64.fetchOne(select, arguments: [user.rawValue, clientID])
        else { return nil }
        let transitions = try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM transitions WHERE fix_id = ? ORDER BY id"),
            arguments: [fixID]).map {
            Transition(event: Transition.Event(rawValue: $0["event"]) ?? .enter, park: ParkID(rawValue: $0["park_id"]),
                       zone: ($0["zone_id"] as String?).map(ZoneID.init(rawValue:)),
                       zoneKind: ($0["zone_kind"] as String?).flatMap(ZoneKind.init(rawValue:)),
                       ride: ($0["ride_id"] as String?).map(RideID.init(rawValue:)), at: Date(timeIntervalSince1970: $0["at"]))
        }
        return .accepted(current: true, transitions: transitions)
    }

    /// Writes transitions and the visits they open and close; a visit opened counts towards the
    /// user's challenges and checks their lists (rare: the fixes that open none pay nothing for them).
    private static func apply(_ transitions: [Transition], user: UserID, fixID: Int64, now: Date, boards: WaitBoards, _ db: Database) throws {
        let insert = try db.cachedStatement(sql: """
            INSERT INTO transitions (user_id, fix_id, event, park_id, zone_id, zone_kind, ride_id, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """)
        for t in transitions {
            try insert.execute(arguments: [user.rawValue, fixID, t.event.rawValue, t.park.rawValue, t.zone?.rawValue, t.zoneKind?.rawValue,
                                           t.ride?.rawValue, t.at.timeIntervalSince1970])
            if t.event == .enter, t.zoneKind == .ride, let ride = t.ride {
                try Self.recordMeasuredWait(user: user, ride: ride, boardedAt: t.at.timeIntervalSince1970, currentFix: fixID, boards: boards, db)
            }
            guard t.zone == nil else { continue }
            let at = t.at.timeIntervalSince1970
            switch t.event {
            case .enter:
                if try Self.openVisit(user, park: t.park, db) == nil,
                   try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM parks WHERE id = ?)"),
                       arguments: [t.park.rawValue]) == true {
                    try db.cachedStatement(sql: """
                        INSERT INTO visits (user_id, park_id, how, entered_at, last_evidence_at) VALUES (?, ?, 'automatic', ?, ?)
                        """).execute(arguments: [user.rawValue, t.park.rawValue, at, at])
                    try Self.creditChallenges(user: user, evidence: .visit(id: db.lastInsertedRowID, park: t.park, at: t.at), now: now, db)
                    try Self.checkListItems(user: user, evidence: .visit(t.park, at: t.at), db)
                    try Self.awardBadges(user, at: t.at, db)
                }
            case .exit:
                try db.cachedStatement(sql: """
                    UPDATE visits SET left_at = max(entered_at, ?) WHERE user_id = ? AND park_id = ? AND left_at IS NULL
                    """).execute(arguments: [at, user.rawValue, t.park.rawValue])
            }
        }
    }

    /// Ends open visits with no evidence for `timeout` seconds, at their last evidence.
    static func closeStaleVisits(_ user: UserID, now: Date, timeout: TimeInterval, _ db: Database) throws {
        try db.cachedStatement(sql: """
            UPDATE visits SET left_at = last_evidence_at WHERE user_id = ? AND left_at IS NULL AND last_evidence_at < ?
            """).execute(arguments: [user.rawValue, now.timeIntervalSince1970 - timeout])
    }

    static func openVisitEvidence(_ user: UserID, _ db: Database) throws -> [ParkID: Date] {
        var out: [ParkID: Date] = [:]
        let select = try db.cachedStatement(sql: "SELECT park_id, last_evidence_at FROM visits WHERE user_id = ? AND left_at IS NULL")
        for row in try Row.fetchAll(select, arguments: [user.rawValue]) {
            out[ParkID(rawValue: row["park_id"])] = Date(timeIntervalSince1970: row["last_evidence_at"])
        }
        return out
    }

    static func openVisit(_ user: UserID, park: ParkID, _ db: Database) throws -> Visit? {
        let select = try db.cachedStatement(sql: """
            SELECT * FROM visits WHERE user_id = ? AND park_id = ? AND left_at IS NULL ORDER BY id DESC LIMIT 1
            """)
        return try Row.fetchOne(select, arguments: [user.rawValue, park.rawValue]).map(Self.visit)
    }

    static func visit(_ row: Row) -> Visit {
        Visit(id: row["id"], park: ParkID(rawValue: row["park_id"]), how: Visit.How(rawValue: row["how"]) ?? .automatic,
              enteredAt: Date(timeIntervalSince1970: row["entered_at"]),
              leftAt: (row["left_at"] as Double?).map(Date.init(timeIntervalSince1970:)))
    }
}
