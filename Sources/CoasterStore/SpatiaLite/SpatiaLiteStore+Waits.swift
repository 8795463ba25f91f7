import CoasterCore
import Foundation
import GRDB

extension SpatiaLiteStore {
    /// How much `user`'s wait evidence weighs now (``WaitReportPolicy/trust(accountAge:earlierVisits:)``):
    /// their account's age and their visits that began over a day ago, the first few only.
    static func reporterTrust(_ user: UserID, now: Date, _ db: Database) throws -> Double {
        let t = now.timeIntervalSince1970
        let created = try Double.fetchOne(db.cachedStatement(sql: "SELECT created_at FROM users WHERE id = ?"), arguments: [user.rawValue]) ?? t
        let visits = try Int.fetchOne(db.cachedStatement(sql: """
            SELECT count(*) FROM (SELECT 1 FROM visits WHERE user_id = ? AND entered_at < ? LIMIT ?)
            """), arguments: [user.rawValue, t - 24 * 3600, WaitReportPolicy.establishedVisits]) ?? 0
        return WaitReportPolicy.trust(accountAge: t - created, earlierVisits: visits)
    }

    /// Records a crowd wait report after checking the reporter may make it.
    ///
    /// The ride's live status before and after the report is worked out in the same transaction,
    /// so that concurrent reports each see the status the one before left: exactly one of them
    /// reports a change. The status after is derived from what was read before plus the report,
    /// not read again; what the status needs beyond the crowd's reports is read only when the rule
    /// asks for it.
    /// - Returns: `nil` if the ride is not listed.
    public func reportWait(user: UserID, ride: RideID, minutes: Double, visitTimeout: TimeInterval, check: @escaping WaitReportCheck,
                           estimator: WaitEstimator, statusRules: RideStatusRules) async throws -> Result<AcceptedReport, WaitReportRefusal>? {
        try await self.pool.write { db in
            // Read inside the transaction: a report committed while this one waited is never "later".
            let now = self.now()
            guard let checked = try Self.reportCheck(user: user, ride: ride, table: "wait_reports", check: check,
                                                   visitTimeout: visitTimeout, now: now, db)
            else { return nil }
            guard case .success(let (park, name)) = checked else { return checked.map { _ in AcceptedReport(at: now) } }
            var evidence = try LiveEvidence(ride: ride, statusRules: statusRules, estimator: estimator, now: now, db)
            let before = try evidence.state(db)
            try db.cachedStatement(sql: """
                INSERT INTO wait_reports (user_id, ride_id, minutes, source, at, entered_at, trust) VALUES (?, ?, ?, 'crowd', ?, ?, ?)
                """).execute(arguments: [user.rawValue, ride.rawValue, minutes, now.timeIntervalSince1970, now.timeIntervalSince1970 - minutes * 60,
                                         try Self.reporterTrust(user, now: now, db)])
            self.waitBoards.touched(park)
            evidence.recentWaits = true
            let after = try evidence.state(db)
            return .success(AcceptedReport(at: now, verdict: evidence.verdict,
                                           statusChange: RideStatusChange(ride: ride, name: name, before, after, crowdAt: now)))
        }
    }

    /// Records a ride-status report after the same checks as a wait report, and works out the
    /// ride's live status before and after it as ``reportWait(user:ride:minutes:visitTimeout:check:estimator:statusRules:)`` does.
    public func reportStatus(user: UserID, ride: RideID, condition: RideCondition, visitTimeout: TimeInterval, check: @escaping WaitReportCheck,
                             estimator: WaitEstimator, statusRules: RideStatusRules) async throws -> Result<AcceptedReport, WaitReportRefusal>? {
        try await self.pool.write { db in
            // Read inside the transaction: a report committed while this one waited is never "later".
            let now = self.now()
            guard let checked = try Self.reportCheck(user: user, ride: ride, table: "status_reports", check: check,
                                                   visitTimeout: visitTimeout, now: now, db)
            else { return nil }
            guard case .success(let (park, name)) = checked else { return checked.map { _ in AcceptedReport(at: now) } }
            var evidence = try LiveEvidence(ride: ride, statusRules: statusRules, estimator: estimator, now: now, db)
            let before = try evidence.state(db)
            try db.cachedStatement(sql: "INSERT INTO status_reports (user_id, ride_id, condition, at) VALUES (?, ?, ?, ?)")
                .execute(arguments: [user.rawValue, ride.rawValue, condition.rawValue, now.timeIntervalSince1970])
            self.waitBoards.touched(park)
            // What the status query would now return: the reporter's newest report is this one.
            evidence.statuses.removeAll { $0.user == user }
            evidence.statuses.append(StatusReport(user: user, condition: condition, at: Date(timeIntervalSince1970: now.timeIntervalSince1970)))
            let after = try evidence.state(db)
            return .success(AcceptedReport(at: now, verdict: evidence.verdict,
                                           statusChange: RideStatusChange(ride: ride, name: name, before, after, crowdAt: now)))
        }
    }

    /// When the reporter last reported (for `Retry-After`).
    public func lastReport(user: UserID, ride: RideID, status: Bool) async throws -> Date? {
        try await self.pool.read { db in
            try Double.fetchOne(db.cachedStatement(sql: "SELECT max(at) FROM \(status ? "status_reports" : "wait_reports") WHERE user_id = ? AND ride_id = ?"),
                arguments: [user.rawValue, ride.rawValue]).map(Date.init(timeIntervalSince1970:))
        }
    }

    /// The ride's park and name if the reporter may report it.
    private static func reportCheck(user: UserID, ride: RideID, table: String, check: WaitReportCheck, visitTimeout: TimeInterval,
                                    now: Date, _ db: Database) throws -> Result<(ParkID, String), WaitReportRefusal>? {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT park_id, name FROM rides WHERE id = ? AND listed = 1"),
            arguments: [ride.rawValue])
        else { return nil }
        let park: String = row["park_id"], name: String = row["name"]
        try Self.closeStaleVisits(user, now: now, timeout: visitTimeout, db)
        let visiting = try Self.openVisit(user, park: ParkID(rawValue: park), db) != nil
        let zones = try String.fetchAll(db.cachedStatement(sql: "SELECT id FROM zones WHERE ride_id = ? AND kind IN ('ride', 'queue')"),
            arguments: [ride.rawValue])
        let crowdOnly = table == "wait_reports" ? " AND source = 'crowd'" : ""
        let lastReport = try Double.fetchOne(
            db.cachedStatement(sql: "SELECT max(at) FROM \(table) WHERE user_id = ? AND ride_id = ?\(crowdOnly)"),
            arguments: [user.rawValue, ride.rawValue]).map(Date.init(timeIntervalSince1970:))
        let facts = WaitReportFacts(latest: try Self.trackState(user, db).latest, visiting: visiting,
                                    zones: Set(zones.map(ZoneID.init(rawValue:))), lastReport: lastReport)
        return check(facts, now).map { (ParkID(rawValue: park), name) }
    }

    /// Loads a park's posted waits (replacing rows with the same ride and time). Every row must name
    /// a listed ride of the park, or nothing is written.
    ///
    /// The live status of each ride the feed names is worked out before and after in the same
    /// transaction; the changes come back in the park's ride order, at most one per listed ride of
    /// the park.
    @discardableResult
    public func loadPostedWaits(park: ParkID, _ entries: [PostedWaitEntry], estimator: WaitEstimator = WaitEstimator(),
                                statusRules: RideStatusRules = RideStatusRules()) async throws -> PostedWaitsLoad {
        try await self.pool.write { db in
            let now = self.now()
            let listed = try Row.fetchAll(db.cachedStatement(sql: "SELECT id, name FROM rides WHERE park_id = ? AND listed = 1 ORDER BY position"),
                arguments: [park.rawValue]).map { (id: RideID(rawValue: $0["id"]), name: $0["name"] as String) }
            let rides = Set(listed.map(\.id))
            let unknown = entries.enumerated().filter { !rides.contains($0.element.ride) }.map { ($0.offset, $0.element.ride.rawValue) }
            guard unknown.isEmpty else { throw PostedWaitError.unknownRides(Array(unknown.prefix(100))) }
            let named = Set(entries.map(\.ride))
            var watched: [(id: RideID, name: String, evidence: LiveEvidence, before: RideLiveState)] = []
            for ride in listed where named.contains(ride.id) {
                var evidence = try LiveEvidence(ride: ride.id, statusRules: statusRules, estimator: estimator, now: now, db)
                let before = try evidence.state(db)
                watched.append((ride.id, ride.name, evidence, before))
            }
            let insert = try db.cachedStatement(sql: "INSERT OR REPLACE INTO posted_waits (ride_id, at, minutes) VALUES (?, ?, ?)")
            for e in entries {
                try insert.execute(arguments: [e.ride.rawValue, e.at.timeIntervalSince1970, e.minutes])
            }
            self.waitBoards.touched(park, rows: entries.count)
            var changes: [RideStatusChange] = []
            for var ride in watched {
                let newest = try Self.newestPosted(ride.id, now: now, db)
                ride.evidence.posted = .some(newest)
                let after = try ride.evidence.state(db)
                guard after != ride.before else { continue }
                changes.append(RideStatusChange(ride: ride.id, name: ride.name, previous: ride.before, current: after,
                                                at: after.source == .posted ? newest?.at ?? now : now))
            }
            return PostedWaitsLoad(loaded: entries.count, statusChanges: changes)
        }
    }

    /// How long (seconds) a computed wait board is answered again when no write of this process
    /// has changed what it read; writes by other processes show within this time.
    public static var waitBoardFreshness: TimeInterval { WaitBoards.freshness }

    /// The park's wait board: every listed ride with its estimate, posted wait and reported condition.
    /// A board computed less than ``waitBoardFreshness`` ago is answered again unless a write it
    /// read has committed since (``WaitBoards``).
    /// - Returns: `nil` if there is no such park.
    public func waitBoard(park: ParkID, estimator: WaitEstimator, statusRules: RideStatusRules) async throws -> [WaitBoardRow]? {
        let now = self.now()
        if let rows = self.waitBoards.board(park: park, estimator: estimator, statusRules: statusRules, now: now) { return rows }
        // One read for every miss at this generation, which is taken before the read's transaction
        // begins: a commit after that point makes the board stale.
        return try await self.waitBoards.flight(park: park, estimator: estimator, statusRules: statusRules) { generation in
            let rows: [WaitBoardRow]? = try await self.pool.read { db in
                guard try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM parks WHERE id = ?)"),
                    arguments: [park.rawValue]) == true else {
                    return nil
                }
                let rides = try RideRecord.fetchAll(db.cachedStatement(sql: "SELECT * FROM rides WHERE park_id = ? AND listed = 1 ORDER BY position"),
                    arguments: [park.rawValue]).map(\.ride)
                return try rides.map { ride in
                    try Self.boardRow(ride, estimator: estimator, statusRules: statusRules, now: now, db)
                }
            }
            if let rows {
                self.waitBoards.keep(rows, park: park, estimator: estimator, statusRules: statusRules, generation: generation, now: now)
            }
            return rows
        }.value
    }

    /// One ride's board row, or `nil` if the ride is not listed.
    public func waitEstimate(ride: RideID, estimator: WaitEstimator, statusRules: RideStatusRules) async throws -> WaitBoardRow? {
        let now = self.now()
        return try await self.pool.read { db in
            guard let ride = try RideRecord.fetchOne(db.cachedStatement(sql: "SELECT * FROM rides WHERE id = ? AND listed = 1"),
                arguments: [ride.rawValue])?.ride
            else { return nil }
            return try Self.boardRow(ride, estimator: estimator, statusRules: statusRules, now: now, db)
        }
    }

    /// The board row of `ride` at `now`: the board's, a ride's estimate's and its detail's.
    static func boardRow(_ ride: Ride, estimator: WaitEstimator, statusRules: RideStatusRules, now: Date, _ db: Database) throws -> WaitBoardRow {
        let t = now.timeIntervalSince1970
        // Each person's newest report only: the estimator counts no other (nor does the status
        // consensus, below), and a person reporting often made the board read all of theirs.
        // SQLite takes a bare column's value from the row whose max() it returns.
        let observations = try Row.fetchAll(db.cachedStatement(sql: """
            SELECT user_id, minutes, max(at) AS at, source, trust FROM wait_reports WHERE ride_id = ? AND at > ? AND at <= ? GROUP BY user_id
            """), arguments: [ride.id.rawValue, t - estimator.window, t]).map {
            WaitObservation(user: UserID($0["user_id"] as Int64), minutes: $0["minutes"], at: Date(timeIntervalSince1970: $0["at"]),
                            source: WaitObservation.Source(rawValue: $0["source"]) ?? .crowd, trust: $0["trust"])
        }
        let posted = try Self.newestPosted(ride.id, now: now, db)
        let model = try Self.postedModel(ride, before: now, db)
        let statuses = try Self.statusReports(ride.id, rules: statusRules, now: now, db)
        let verdict = statusRules.consensus(statuses, now: now)
        // The observations above are what `recentWaits` asks for (the same rows as `LiveEvidence` reads).
        let status = statusRules.liveState(statuses: statuses, posted: { posted }, recentWaits: { !observations.isEmpty }, estimator: estimator, now: now)
        return WaitBoardRow(ride: ride, estimate: estimator.estimate(observations: observations, posted: posted, model: model, now: now),
                            posted: posted, reportedCondition: verdict, model: model, status: status)
    }

    /// The park's newest posted wait for the ride at or before `now`.
    static func newestPosted(_ ride: RideID, now: Date, _ db: Database) throws -> PostedWait? {
        try Row.fetchOne(db.cachedStatement(sql: """
            SELECT at, minutes FROM posted_waits WHERE ride_id = ? AND at <= ? ORDER BY at DESC LIMIT 1
            """), arguments: [ride.rawValue, now.timeIntervalSince1970]).map { PostedWait(minutes: $0["minutes"], at: Date(timeIntervalSince1970: $0["at"])) }
    }

    /// Each person's newest status report of the ride within the rules' window: the consensus's votes.
    static func statusReports(_ ride: RideID, rules: RideStatusRules, now: Date, _ db: Database) throws -> [StatusReport] {
        let t = now.timeIntervalSince1970
        return try Row.fetchAll(db.cachedStatement(sql: """
            SELECT user_id, condition, max(at) AS at FROM status_reports WHERE ride_id = ? AND at > ? AND at <= ? GROUP BY user_id
            """), arguments: [ride.rawValue, t - rules.window, t]).map {
            StatusReport(user: UserID($0["user_id"] as Int64), condition: RideCondition(rawValue: $0["condition"]) ?? .operating,
                         at: Date(timeIntervalSince1970: $0["at"]))
        }
    }

    /// Whether anyone reported or timed a wait for the ride within the estimator's window: whether
    /// the board's observations of it are not empty.
    static func hasRecentWaits(_ ride: RideID, estimator: WaitEstimator, now: Date, _ db: Database) throws -> Bool {
        let t = now.timeIntervalSince1970
        return try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM wait_reports WHERE ride_id = ? AND at > ? AND at <= ?)"),
            arguments: [ride.rawValue, t - estimator.window, t]) ?? false
    }

    /// The ride's posted-to-actual model for the part of the day `now` is in (park time), learned
    /// from its last 100 reports in that part of the day that have a posted wait from the hour
    /// before the reporter joined the line.
    static func postedModel(_ ride: Ride, before now: Date, _ db: Database) throws -> PostedModel {
        let zone = TimeZone(identifier: try String.fetchOne(db.cachedStatement(sql: "SELECT time_zone FROM parks WHERE id = ?"),
            arguments: [ride.park.rawValue]) ?? "UTC") ?? .gmt
        let bucket = WaitHours.bucket(now, in: zone)
        // Without a posted wait before now no report can pair with one: skip reading up to 600
        // reports, each with its own posted-wait lookup (rides of parks without a feed).
        guard try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM posted_waits WHERE ride_id = ? AND at < ?)"),
            arguments: [ride.id.rawValue, now.timeIntervalSince1970]) == true
        else { return PostedModel.learn([]) }
        let rows = try Row.fetchAll(db.cachedStatement(sql: """
            SELECT r.minutes AS actual, r.entered_at AS entered,
                   (SELECT p.minutes FROM posted_waits p WHERE p.ride_id = r.ride_id AND p.at < r.entered_at AND p.at > r.entered_at - 3600
                    ORDER BY p.at DESC LIMIT 1) AS posted
            FROM wait_reports r WHERE r.ride_id = ? AND r.at <= ? ORDER BY r.at DESC LIMIT 600
            """), arguments: [ride.id.rawValue, now.timeIntervalSince1970])
        var pairs: [(actual: Double, posted: Double)] = []
        for row in rows {
            guard let posted = row["posted"] as Double?, posted > 0,
                  WaitHours.bucket(Date(timeIntervalSince1970: row["entered"]), in: zone) == bucket else { continue }
            pairs.append((row["actual"], posted))
            if pairs.count == 100 { break }
        }
        return PostedModel.learn(pairs)
    }

    /// A ride's wait history in buckets of `bucket` seconds from `from` to `to`.
    public func waitHistory(ride: RideID, from: Date, to: Date, bucket: TimeInterval) async throws -> [WaitHistoryBucket]? {
        try await self.pool.read { db in
            guard try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM rides WHERE id = ?)"),
                arguments: [ride.rawValue]) == true else {
                return nil
            }
            let start = (from.timeIntervalSince1970 / bucket).rounded(.down) * bucket
            let count = max(1, Int(((to.timeIntervalSince1970 - start) / bucket).rounded(.up)))
            var buckets = (0..<count).map { i in
                WaitHistoryBucket(start: Date(timeIntervalSince1970: start + Double(i) * bucket), reports: 0, reportedMedian: nil, posted: nil)
            }
            var values = [[Double]](repeating: [], count: count)
            for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT minutes, at FROM wait_reports WHERE ride_id = ? AND at >= ? AND at < ? ORDER BY at"),
                arguments: [ride.rawValue, start, to.timeIntervalSince1970]) {
                let i = Int(((row["at"] as Double) - start) / bucket)
                if i >= 0 && i < count { values[i].append(row["minutes"]) }
            }
            for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT minutes, at FROM posted_waits WHERE ride_id = ? AND at >= ? AND at < ? ORDER BY at"),
                arguments: [ride.rawValue, start, to.timeIntervalSince1970]) {
                let i = Int(((row["at"] as Double) - start) / bucket)
                if i >= 0 && i < count { buckets[i].posted = row["minutes"] }
            }
            for i in 0..<count where !values[i].isEmpty {
                let v = values[i].sorted()
                buckets[i].reports = v.count
                buckets[i].reportedMedian = v.count % 2 == 1 ? v[v.count / 2] : (v[v.count / 2 - 1] + v[v.count / 2]) / 2
            }
            return buckets
        }
    }

    /// Turns a ride-zone enter that follows the same rider's queue-zone enter into a timed wait,
    /// when ``MeasuredWait`` takes the pair for one.
    static func recordMeasuredWait(user: UserID, ride: RideID, boardedAt: Double, currentFix: Int64, boards: WaitBoards, _ db: Database) throws {
        guard let queued = try Double.fetchOne(db.cachedStatement(sql: """
            SELECT max(at) FROM transitions WHERE user_id = ? AND ride_id = ? AND zone_kind = 'queue' AND event = 'enter' AND at > ? AND at <= ?
            """), arguments: [user.rawValue, ride.rawValue, boardedAt - MeasuredWait.lookback, boardedAt]) else { return }
        let boardedSince = try Int.fetchOne(db.cachedStatement(sql: """
            SELECT count(*) FROM transitions WHERE user_id = ? AND ride_id = ? AND zone_kind = 'ride' AND event = 'enter'
              AND at > ? AND at <= ? AND fix_id <> ?
            """), arguments: [user.rawValue, ride.rawValue, queued, boardedAt, currentFix]) ?? 0
        guard let minutes = MeasuredWait.minutes(queuedAt: queued, boardedAt: boardedAt, boardingsBetween: boardedSince),
              let park = try String.fetchOne(db.cachedStatement(sql: "SELECT park_id FROM rides WHERE id = ?"), arguments: [ride.rawValue])
        else { return }
        try db.cachedStatement(sql: "INSERT INTO wait_reports (user_id, ride_id, minutes, source, at, entered_at, trust) VALUES (?, ?, ?, 'measured', ?, ?, ?)")
            .execute(arguments: [user.rawValue, ride.rawValue, minutes, boardedAt, queued,
                                 try Self.reporterTrust(user, now: Date(timeIntervalSince1970: boardedAt), db)])
        boards.touched(ParkID(rawValue: park))
    }
}

/// What one ride's live status rests on, inside a write transaction: the status votes and the
/// posted wait (the fresher of the two settles most rides), and recent waits once the rule asks
/// for them (``RideStatusRules/liveState(statuses:posted:recentWaits:estimator:now:)``). A write
/// sets what it changed, and the status after it is worked out without reading again what it
/// did not change.
struct LiveEvidence {
    let ride: RideID
    let statusRules: RideStatusRules
    let estimator: WaitEstimator
    let now: Date
    var statuses: [StatusReport]
    /// `nil` until read.
    var posted: PostedWait??
    var recentWaits: Bool?

    init(ride: RideID, statusRules: RideStatusRules, estimator: WaitEstimator, now: Date, _ db: Database) throws {
        self.ride = ride
        self.statusRules = statusRules
        self.estimator = estimator
        self.now = now
        self.statuses = try SpatiaLiteStore.statusReports(ride, rules: statusRules, now: now, db)
    }

    var verdict: RideCondition? { self.statusRules.consensus(self.statuses, now: self.now) }

    mutating func state(_ db: Database) throws -> RideLiveState {
        // Copied out: the closures below write to `self` while the rule runs.
        let rules = self.statusRules, estimator = self.estimator, now = self.now, statuses = self.statuses
        return try rules.liveState(
            statuses: statuses,
            posted: {
                if let posted = self.posted { return posted }
                let read = try SpatiaLiteStore.newestPosted(self.ride, now: self.now, db)
                self.posted = .some(read)
                return read
            },
            recentWaits: {
                if let recent = self.recentWaits { return recent }
                let read = try SpatiaLiteStore.hasRecentWaits(self.ride, estimator: self.estimator, now: self.now, db)
                self.recentWaits = read
                return read
            },
            estimator: estimator, now: now)
    }
}
