import CoasterCore
import Foundation
import PostgresNIO

extension PostgresStore: WaitStore {
    /// How long (seconds) a computed wait board is answered again when no write of this node has
    /// changed what it read; writes by other nodes show within this time.
    public static var waitBoardFreshness: TimeInterval { WaitBoards.freshness }

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
        try await self.crowdReport(.wait(minutes: minutes), user: user, ride: ride, visitTimeout: visitTimeout, check: check,
                                   estimator: estimator, statusRules: statusRules)
    }

    /// Records a ride-status report after the same checks as a wait report, and works out the
    /// ride's live status before and after it as ``reportWait(user:ride:minutes:visitTimeout:check:estimator:statusRules:)`` does.
    public func reportStatus(user: UserID, ride: RideID, condition: RideCondition, visitTimeout: TimeInterval, check: @escaping WaitReportCheck,
                             estimator: WaitEstimator, statusRules: RideStatusRules) async throws -> Result<AcceptedReport, WaitReportRefusal>? {
        try await self.crowdReport(.status(condition), user: user, ride: ride, visitTimeout: visitTimeout, check: check,
                                   estimator: estimator, statusRules: statusRules)
    }

    /// When the reporter last reported (for `Retry-After`).
    public func lastReport(user: UserID, ride: RideID, status: Bool) async throws -> Date? {
        try await self.single { tx in
            try await tx.one("""
                SELECT max(at) FROM \(unescaped: status ? "status_reports" : "wait_reports") WHERE user_id = \(user.rawValue) AND ride_id = \(ride.rawValue)
                """).decode(Double?.self).map(Date.init(timeIntervalSince1970:))
        }
    }

    /// Loads a park's posted waits (replacing rows with the same ride and time). Every row must name
    /// a listed ride of the park, or nothing is written.
    ///
    /// The live status of each ride the feed names is worked out before and after in the same
    /// transaction; the changes come back in the park's ride order, at most one per listed ride of
    /// the park.
    @discardableResult
    public func loadPostedWaits(park: ParkID, _ entries: [PostedWaitEntry], estimator: WaitEstimator,
                                statusRules: RideStatusRules) async throws -> PostedWaitsLoad {
        let load: PostedWaitsLoad
        do {
            load = try await self.transaction { tx in
                let now = self.now()
                let listed = try await tx.rows("SELECT id, name FROM rides WHERE park_id = \(park.rawValue) AND listed ORDER BY position").map { row in
                    let (id, name) = try row.decode((String, String).self)
                    return (id: RideID(rawValue: id), name: name)
                }
                let rides = Set(listed.map(\.id))
                let unknown = entries.enumerated().filter { !rides.contains($0.element.ride) }.map { ($0.offset, $0.element.ride.rawValue) }
                guard unknown.isEmpty else { throw PostedWaitError.unknownRides(Array(unknown.prefix(100))) }
                let named = Set(entries.map(\.ride))
                let watched = listed.filter { named.contains($0.id) }
                guard !watched.isEmpty else { return PostedWaitsLoad(loaded: entries.count, statusChanges: []) }
                let ids = watched.map(\.id)

                // Each ride's status before, read after its lock: a report or load that committed
                // while this one waited is part of it.
                try await WaitReads.lockRides(ids, tx)
                var evidence = try await LiveEvidenceOfRides.read(ids, statusRules: statusRules, estimator: estimator, now: now, tx)
                let before = try await evidence.states(of: ids, tx)

                // Later rows of the same ride and time replace earlier ones, as SQLite's INSERT OR
                // REPLACE row by row does; one upsert may not change a row twice. A missing wait
                // (the ride shown down) is sent as NaN and stored as NULL, which is also what SQLite
                // stores for NaN.
                var seen = Set<PostedWaitKey>()
                let rows = Array(entries.reversed().filter { seen.insert(PostedWaitKey(ride: $0.ride, at: $0.at.timeIntervalSince1970)).inserted }.reversed())
                try await tx.run("""
                    INSERT INTO posted_waits (ride_id, at, minutes)
                    SELECT ride, at, NULLIF(minutes, 'NaN') FROM unnest(\(rows.map(\.ride.rawValue))::text[], \(rows.map(\.at.timeIntervalSince1970))::float8[],
                                                                \(rows.map { $0.minutes ?? .nan })::float8[]) AS e(ride, at, minutes)
                    ON CONFLICT (ride_id, at) DO UPDATE SET minutes = excluded.minutes
                    """)

                let newest = try await WaitReads.newestPosted(ids, now: now, tx)
                for id in ids { evidence.posted.updateValue(newest[id], forKey: id) }
                let after = try await evidence.states(of: ids, tx)
                var changes: [RideStatusChange] = []
                for (i, ride) in watched.enumerated() where after[i] != before[i] {
                    changes.append(RideStatusChange(ride: ride.id, name: ride.name, previous: before[i], current: after[i],
                                                    at: after[i].source == .posted ? newest[ride.id]?.at ?? now : now))
                }
                return PostedWaitsLoad(loaded: entries.count, statusChanges: changes)
            }
        } catch let error as PostedWaitError {
            throw error
        } catch {
            // A COMMIT that failed may have committed.
            self.waitBoards.committed(parks: [park])
            throw error
        }
        if !entries.isEmpty { self.waitBoards.committed(parks: [park]) }
        return load
    }

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
            let rows: [WaitBoardRow]? = try await self.read { tx in
                // One row with a NULL ride for a park without listed rides; none without the park.
                let listing = try await tx.rows("""
                    SELECT \(unescaped: Self.rideColumns("r")) FROM parks p LEFT JOIN rides r ON r.park_id = p.id AND r.listed
                    WHERE p.id = \(park.rawValue) ORDER BY r.position
                    """)
                guard !listing.isEmpty else { return nil }
                let rides = try listing.filter { try $0.makeRandomAccess()[0].decode(String?.self) != nil }.map(Self.ride)
                return try await WaitReads.boardRows(rides, estimator: estimator, statusRules: statusRules, now: now, tx)
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
        return try await self.read { tx in
            guard let row = try await tx.first("SELECT \(unescaped: Self.rideColumns("r")) FROM rides r WHERE r.id = \(ride.rawValue) AND r.listed")
            else { return nil }
            return try await Self.boardRow(try Self.ride(row), estimator: estimator, statusRules: statusRules, now: now, tx)
        }
    }

    /// The board row of `ride` at `now`: the board's, a ride's estimate's and its detail's.
    static func boardRow(_ ride: Ride, estimator: WaitEstimator, statusRules: RideStatusRules, now: Date,
                         _ tx: PostgresTransaction) async throws -> WaitBoardRow {
        try await WaitReads.boardRows([ride], estimator: estimator, statusRules: statusRules, now: now, tx)[0]
    }

    /// A ride's wait history in buckets of `bucket` seconds from `from` to `to`.
    public func waitHistory(ride: RideID, from: Date, to: Date, bucket: TimeInterval) async throws -> [WaitHistoryBucket]? {
        try await self.read { tx in
            guard try await tx.one("SELECT EXISTS (SELECT 1 FROM rides WHERE id = \(ride.rawValue))").decode(Bool.self) else {
                return nil
            }
            let start = (from.timeIntervalSince1970 / bucket).rounded(.down) * bucket
            let count = max(1, Int(((to.timeIntervalSince1970 - start) / bucket).rounded(.up)))
            var buckets = (0..<count).map { i in
                WaitHistoryBucket(start: Date(timeIntervalSince1970: start + Double(i) * bucket), reports: 0, reportedMedian: nil, posted: nil)
            }
            var values = [[Double]](repeating: [], count: count)
            for row in try await tx.rows("""
                SELECT minutes, at FROM wait_reports WHERE ride_id = \(ride.rawValue) AND at >= \(start) AND at < \(to.timeIntervalSince1970) ORDER BY at
                """) {
                let (minutes, at) = try row.decode((Double, Double).self)
                let i = Int((at - start) / bucket)
                if i >= 0 && i < count { values[i].append(minutes) }
            }
            for row in try await tx.rows("""
                SELECT minutes, at FROM posted_waits WHERE ride_id = \(ride.rawValue) AND at >= \(start) AND at < \(to.timeIntervalSince1970) ORDER BY at
                """) {
                let (minutes, at) = try row.decode((Double?, Double).self)
                let i = Int((at - start) / bucket)
                if i >= 0 && i < count { buckets[i].posted = minutes }
            }
            for i in 0..<count where !values[i].isEmpty {
                let v = values[i].sorted()
                buckets[i].reports = v.count
                buckets[i].reportedMedian = v.count % 2 == 1 ? v[v.count / 2] : (v[v.count / 2 - 1] + v[v.count / 2]) / 2
            }
            return buckets
        }
    }

    // MARK: - Reports

    /// A wait or status report, checked and recorded in one transaction under the reporter's lock
    /// (their visits, fixes and earlier reports decide the check) and the ride's (the status before
    /// must include every report committed before this one).
    private func crowdReport(_ report: CrowdReport, user: UserID, ride: RideID, visitTimeout: TimeInterval, check: @escaping WaitReportCheck,
                             estimator: WaitEstimator, statusRules: RideStatusRules) async throws -> Result<AcceptedReport, WaitReportRefusal>? {
        let outcome: (written: ParkID?, result: Result<AcceptedReport, WaitReportRefusal>?)
        do {
            outcome = try await self.transaction(locking: [user]) { tx in
                // Read inside the transaction: a report committed while this one waited is never "later".
                let now = self.now()
                guard let checked = try await WaitReads.reportCheck(report, user: user, ride: ride, check: check, visitTimeout: visitTimeout,
                                                                    now: now, tx)
                else { return (nil, nil) }
                let target: ReportTarget
                switch checked {
                case .failure(let refusal): return (nil, .failure(refusal))
                case .success(let checked): target = checked
                }
                try await WaitReads.lockRides([ride], tx)
                var evidence = try await LiveEvidenceOfRides.read([ride], statusRules: statusRules, estimator: estimator, now: now, tx)
                let before = try await evidence.states(of: [ride], tx)[0]
                let t = now.timeIntervalSince1970
                switch report {
                case .wait(let minutes):
                    try await tx.run("""
                        INSERT INTO wait_reports (user_id, ride_id, minutes, source, at, entered_at, trust)
                        VALUES (\(user.rawValue), \(ride.rawValue), \(minutes), 'crowd', \(t), \(t - minutes * 60), \(target.trust))
                        """)
                    evidence.recentWaits[ride] = true
                case .status(let condition):
                    try await tx.run("""
                        INSERT INTO status_reports (user_id, ride_id, condition, at) VALUES (\(user.rawValue), \(ride.rawValue), \(condition.rawValue), \(t))
                        """)
                    // What the status query would now return: the reporter's newest report is this one.
                    evidence.statuses[ride, default: []].removeAll { $0.user == user }
                    evidence.statuses[ride, default: []].append(StatusReport(user: user, condition: condition, at: Date(timeIntervalSince1970: t)))
                }
                let after = try await evidence.states(of: [ride], tx)[0]
                return (target.park, .success(AcceptedReport(at: now, verdict: evidence.verdict(ride),
                                                             statusChange: RideStatusChange(ride: ride, name: target.name, before, after, crowdAt: now))))
            }
        } catch {
            // A COMMIT that failed may have committed, and which park it wrote is not known here.
            self.waitBoards.invalidateAll()
            throw error
        }
        if let park = outcome.written { self.waitBoards.committed(parks: [park]) }
        return outcome.result
    }
}

/// A report a visitor makes of a ride.
private enum CrowdReport: Sendable {
    case wait(minutes: Double)
    case status(RideCondition)
}

/// The ride a report that passed its check is about, and how much the reporter's word weighs.
private struct ReportTarget: Sendable {
    var park: ParkID
    var name: String
    /// ``WaitReportPolicy/trust(accountAge:earlierVisits:)`` now.
    var trust: Double
}

/// One posted-wait row's identity (the table's primary key).
private struct PostedWaitKey: Hashable {
    var ride: RideID
    var at: Double
}

/// The wait concern's statements, for several rides at once where a board or a feed needs them:
/// one round trip each instead of one a ride.
private enum WaitReads {
    /// The class of the two-key advisory locks `pg_advisory_xact_lock(1, hashtext(ride_id))` that
    /// serialise reports and posted-wait loads of one ride. The two-key locks are a key space apart
    /// from the one-`bigint` locks of users (positive) and of the store (``PostgresLock``, negative);
    /// two rides whose ids hash alike only wait for each other.
    static let rideLockClass: Int32 = 1

    /// Takes the locks of `rides`, in key order so that two loads naming the same rides cannot deadlock.
    static func lockRides(_ rides: [RideID], _ tx: PostgresTransaction) async throws {
        try await tx.run("""
            SELECT pg_advisory_xact_lock(\(Self.rideLockClass), k)
            FROM (SELECT DISTINCT hashtext(id) AS k FROM unnest(\(rides.map(\.rawValue))::text[]) AS r(id) ORDER BY k) AS keys
            """)
    }

    /// Whether `user` may report `ride` now, in one statement: closing the reporter's stale visits,
    /// their open visit to the ride's park, the ride's zones, their last report of this kind, their
    /// latest fix, and what their trust rests on (their account's age and their visits that began
    /// over a day ago, the first few only; read for status reports too, to keep one statement). The
    /// parts of one statement share one snapshot and do not see the closing, so the open visit is
    /// read as the closing leaves it: one whose last evidence is not older than the cutoff.
    /// - Returns: `nil` if the ride is not listed (and nothing is written).
    static func reportCheck(_ report: CrowdReport, user: UserID, ride: RideID, check: WaitReportCheck, visitTimeout: TimeInterval,
                            now: Date, _ tx: PostgresTransaction) async throws -> Result<ReportTarget, WaitReportRefusal>? {
        let t = now.timeIntervalSince1970
        let cutoff = t - visitTimeout
        let (table, crowdOnly) = switch report {
        case .wait: ("wait_reports", " AND source = 'crowd'")
        case .status: ("status_reports", "")
        }
        guard let row = try await tx.first("""
            WITH ride AS (
                SELECT park_id, name FROM rides WHERE id = \(ride.rawValue) AND listed
            ), closed AS (
                UPDATE visits SET left_at = last_evidence_at
                WHERE user_id = \(user.rawValue) AND left_at IS NULL AND last_evidence_at < \(cutoff) AND EXISTS (SELECT 1 FROM ride)
            )
            SELECT ride.park_id, ride.name,
                   EXISTS (SELECT 1 FROM visits v WHERE v.user_id = \(user.rawValue) AND v.park_id = ride.park_id AND v.left_at IS NULL
                           AND v.last_evidence_at >= \(cutoff)),
                   ARRAY(SELECT id FROM zones WHERE ride_id = \(ride.rawValue) AND kind IN ('ride', 'queue')),
                   (SELECT max(at) FROM \(unescaped: table) WHERE user_id = \(user.rawValue) AND ride_id = \(ride.rawValue)\(unescaped: crowdOnly)),
                   t.lat, t.lon, t.accuracy, t.recorded_at,
                   (SELECT created_at FROM users WHERE id = \(user.rawValue)),
                   (SELECT count(*) FROM (SELECT 1 FROM visits WHERE user_id = \(user.rawValue) AND entered_at < \(t - 24 * 3600)
                                          LIMIT \(WaitReportPolicy.establishedVisits)) AS earlier)
            FROM ride LEFT JOIN track_state t ON t.user_id = \(user.rawValue)
            """)
        else { return nil }
        let (park, name, visiting, zones, last, lat, lon, accuracy, recordedAt, created, visits) =
            try row.decode((String, String, Bool, [String], Double?, Double?, Double?, Double?, Double?, Double?, Int).self)
        var latest: AcceptedFix?
        if let lat, let lon, let accuracy, let recordedAt {
            latest = AcceptedFix(position: Coordinate(lat: lat, lon: lon), accuracy: accuracy, recordedAt: Date(timeIntervalSince1970: recordedAt))
        }
        let facts = WaitReportFacts(latest: latest, visiting: visiting, zones: Set(zones.map(ZoneID.init(rawValue:))),
                                    lastReport: last.map(Date.init(timeIntervalSince1970:)))
        let trust = WaitReportPolicy.trust(accountAge: t - (created ?? t), earlierVisits: visits)
        return check(facts, now).map { ReportTarget(park: ParkID(rawValue: park), name: name, trust: trust) }
    }

    // MARK: Boards

    /// The board rows of `rides` at `now`, one a ride in their order. Four statements, whatever
    /// the number of rides.
    static func boardRows(_ rides: [Ride], estimator: WaitEstimator, statusRules: RideStatusRules, now: Date,
                          _ tx: PostgresTransaction) async throws -> [WaitBoardRow] {
        guard !rides.isEmpty else { return [] }
        let ids = rides.map(\.id)
        let observations = try await Self.observations(ids, estimator: estimator, now: now, tx)
        let posted = try await Self.newestPosted(ids, now: now, tx)
        let models = try await Self.postedModels(rides, before: now, tx)
        let statuses = try await Self.statusReports(ids, rules: statusRules, now: now, tx)
        return rides.map { ride in
            let observations = observations[ride.id] ?? [], posted = posted[ride.id], statuses = statuses[ride.id] ?? []
            let model = models[ride.id] ?? PostedModel.learn([])
            let verdict = statusRules.consensus(statuses, now: now)
            // The observations are what `recentWaits` asks for (the same rows as ``ridesWithRecentWaits`` reads).
            let status = statusRules.liveState(statuses: statuses, posted: { posted }, recentWaits: { !observations.isEmpty },
                                               estimator: estimator, now: now)
            return WaitBoardRow(ride: ride, estimate: estimator.estimate(observations: observations, posted: posted, model: model, now: now),
                                posted: posted, reportedCondition: verdict, model: model, status: status)
        }
    }

    /// Each person's newest wait report of each ride within the estimator's window, by ride, people
    /// in id order. The estimator counts no other (nor does the status consensus), and a person
    /// reporting often would make the board read all of theirs. Among a person's reports at the same
    /// newest time the first (lowest id) counts, as SQLite's bare column beside `max(at)` gives it.
    static func observations(_ rides: [RideID], estimator: WaitEstimator, now: Date, _ tx: PostgresTransaction) async throws -> [RideID: [WaitObservation]] {
        let t = now.timeIntervalSince1970
        var out: [RideID: [WaitObservation]] = [:]
        for row in try await tx.rows("""
            SELECT DISTINCT ON (ride_id, user_id) ride_id, user_id, minutes, at, source, trust FROM wait_reports
            WHERE ride_id = ANY(\(rides.map(\.rawValue))) AND at > \(t - estimator.window) AND at <= \(t)
            ORDER BY ride_id, user_id, at DESC, id
            """) {
            let (ride, user, minutes, at, source, trust) = try row.decode((String, Int64, Double, Double, String, Double).self)
            out[RideID(rawValue: ride), default: []].append(
                WaitObservation(user: UserID(user), minutes: minutes, at: Date(timeIntervalSince1970: at),
                                source: WaitObservation.Source(rawValue: source) ?? .crowd, trust: trust))
        }
        return out
    }

    /// Each person's newest status report of each ride within the rules' window (the consensus's
    /// votes), by ride, people in id order; ties as in ``observations(_:estimator:now:_:)``.
    static func statusReports(_ rides: [RideID], rules: RideStatusRules, now: Date, _ tx: PostgresTransaction) async throws -> [RideID: [StatusReport]] {
        let t = now.timeIntervalSince1970
        var out: [RideID: [StatusReport]] = [:]
        for row in try await tx.rows("""
            SELECT DISTINCT ON (ride_id, user_id) ride_id, user_id, condition, at FROM status_reports
            WHERE ride_id = ANY(\(rides.map(\.rawValue))) AND at > \(t - rules.window) AND at <= \(t)
            ORDER BY ride_id, user_id, at DESC, id
            """) {
            let (ride, user, condition, at) = try row.decode((String, Int64, String, Double).self)
            out[RideID(rawValue: ride), default: []].append(
                StatusReport(user: UserID(user), condition: RideCondition(rawValue: condition) ?? .operating, at: Date(timeIntervalSince1970: at)))
        }
        return out
    }

    /// The park's newest posted wait at or before `now` of each ride that has one. A lookup of the
    /// primary key per ride: a feed leaves many rows a ride.
    static func newestPosted(_ rides: [RideID], now: Date, _ tx: PostgresTransaction) async throws -> [RideID: PostedWait] {
        var out: [RideID: PostedWait] = [:]
        for row in try await tx.rows("""
            SELECT r.id, p.at, p.minutes FROM unnest(\(rides.map(\.rawValue))::text[]) AS r(id)
            CROSS JOIN LATERAL (SELECT at, minutes FROM posted_waits WHERE ride_id = r.id AND at <= \(now.timeIntervalSince1970)
                                ORDER BY at DESC LIMIT 1) AS p
            """) {
            let (ride, at, minutes) = try row.decode((String, Double, Double?).self)
            out[RideID(rawValue: ride)] = PostedWait(minutes: minutes, at: Date(timeIntervalSince1970: at))
        }
        return out
    }

    /// The rides among `rides` that anyone reported or timed a wait for within the estimator's
    /// window: those whose board observations are not empty.
    static func ridesWithRecentWaits(_ rides: [RideID], estimator: WaitEstimator, now: Date, _ tx: PostgresTransaction) async throws -> Set<RideID> {
        let t = now.timeIntervalSince1970
        return Set(try await tx.rows("""
            SELECT r.id FROM unnest(\(rides.map(\.rawValue))::text[]) AS r(id)
            WHERE EXISTS (SELECT 1 FROM wait_reports w WHERE w.ride_id = r.id AND w.at > \(t - estimator.window) AND w.at <= \(t))
            """).map { RideID(rawValue: try $0.decode(String.self)) })
    }

    /// Each ride's posted-to-actual model for the part of the day `now` is in (its park's time),
    /// learned from its last 100 reports in that part of the day that have a posted wait from the
    /// hour before the reporter joined the line. Rides without one come back without a model
    /// (`PostedModel.learn([])`).
    static func postedModels(_ rides: [Ride], before now: Date, _ tx: PostgresTransaction) async throws -> [RideID: PostedModel] {
        let t = now.timeIntervalSince1970
        var zones: [String?: (zone: TimeZone, bucket: Int)] = [:]
        var pairs: [RideID: [(actual: Double, posted: Double)]] = [:]
        // Without a posted wait before now no report can pair with one: skip reading up to 600
        // reports, each with its own posted-wait lookup (rides of parks without a feed). Reports
        // at the same time come newest id first, as SQLite's backward scan of (ride_id, at) gives them.
        for row in try await tx.rows("""
            SELECT r.id, k.time_zone, w.minutes, w.entered_at,
                   (SELECT p.minutes FROM posted_waits p WHERE p.ride_id = w.ride_id AND p.at < w.entered_at AND p.at > w.entered_at - 3600
                    ORDER BY p.at DESC LIMIT 1)
            FROM unnest(\(rides.map(\.id.rawValue))::text[], \(rides.map(\.park.rawValue))::text[]) WITH ORDINALITY AS r(id, park, n)
            LEFT JOIN parks k ON k.id = r.park
            CROSS JOIN LATERAL (SELECT id, ride_id, minutes, entered_at, at FROM wait_reports WHERE ride_id = r.id AND at <= \(t)
                                ORDER BY at DESC, id DESC LIMIT 600) AS w
            WHERE EXISTS (SELECT 1 FROM posted_waits p WHERE p.ride_id = r.id AND p.at < \(t))
            ORDER BY r.n, w.at DESC, w.id DESC
            """) {
            let (id, timeZone, actual, entered, posted) = try row.decode((String, String?, Double, Double, Double?).self)
            let ride = RideID(rawValue: id)
            let part: (zone: TimeZone, bucket: Int)
            if let known = zones[timeZone] {
                part = known
            } else {
                let zone = TimeZone(identifier: timeZone ?? "UTC") ?? .gmt
                part = (zone, WaitHours.bucket(now, in: zone))
                zones[timeZone] = part
            }
            guard let posted, posted > 0, pairs[ride, default: []].count < 100,
                  WaitHours.bucket(Date(timeIntervalSince1970: entered), in: part.zone) == part.bucket else { continue }
            pairs[ride, default: []].append((actual, posted))
        }
        return pairs.mapValues { PostedModel.learn($0) }
    }
}

/// What some rides' live status rests on, inside a write transaction: the status votes and the
/// posted wait (the fresher of the two settles most rides), and recent waits once the rule asks
/// for them (``RideStatusRules/liveState(statuses:posted:recentWaits:estimator:now:)``). A write
/// sets what it changed, and the status after it is worked out without reading again what it
/// did not change. What the rule asks for is read for every ride that asks at once.
private struct LiveEvidenceOfRides {
    let statusRules: RideStatusRules
    let estimator: WaitEstimator
    let now: Date
    var statuses: [RideID: [StatusReport]]
    /// A ride is absent until read; read, `nil` when it has no posted wait.
    var posted: [RideID: PostedWait?] = [:]
    var recentWaits: [RideID: Bool] = [:]

    /// What the rule has not been given yet.
    private enum Unread: Error {
        case posted, recentWaits
    }

    /// The evidence of `rides`, their status votes read.
    static func read(_ rides: [RideID], statusRules: RideStatusRules, estimator: WaitEstimator, now: Date,
                     _ tx: PostgresTransaction) async throws -> LiveEvidenceOfRides {
        LiveEvidenceOfRides(statusRules: statusRules, estimator: estimator, now: now,
                            statuses: try await WaitReads.statusReports(rides, rules: statusRules, now: now, tx))
    }

    /// The crowd's verdict on `ride`.
    func verdict(_ ride: RideID) -> RideCondition? { self.statusRules.consensus(self.statuses[ride] ?? [], now: self.now) }

    /// The live status of each of `rides`, in their order. The rule runs on what is known; when it
    /// asks for something not read yet, that is read for every ride that asked, and the rule runs
    /// again for those.
    mutating func states(of rides: [RideID], _ tx: PostgresTransaction) async throws -> [RideLiveState] {
        var states = [RideLiveState?](repeating: nil, count: rides.count)
        while true {
            var unreadPosted: [RideID] = [], unreadRecent: [RideID] = []
            for (i, ride) in rides.enumerated() where states[i] == nil {
                let posted = self.posted[ride], recent = self.recentWaits[ride]
                do {
                    states[i] = try self.statusRules.liveState(
                        statuses: self.statuses[ride] ?? [],
                        posted: {
                            guard let posted else { throw Unread.posted }
                            return posted
                        },
                        recentWaits: {
                            guard let recent else { throw Unread.recentWaits }
                            return recent
                        },
                        estimator: self.estimator, now: self.now)
                } catch Unread.posted {
                    unreadPosted.append(ride)
                } catch Unread.recentWaits {
                    unreadRecent.append(ride)
                }
            }
            if unreadPosted.isEmpty && unreadRecent.isEmpty { return states.compactMap { $0 } }
            if !unreadPosted.isEmpty {
                let read = try await WaitReads.newestPosted(unreadPosted, now: self.now, tx)
                for ride in unreadPosted { self.posted.updateValue(read[ride], forKey: ride) }
            }
            if !unreadRecent.isEmpty {
                let read = try await WaitReads.ridesWithRecentWaits(unreadRecent, estimator: self.estimator, now: self.now, tx)
                for ride in unreadRecent { self.recentWaits[ride] = read.contains(ride) }
            }
        }
    }
}
