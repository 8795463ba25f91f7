import CoasterCore
import Foundation
import PostgresNIO

extension PostgresStore: PeopleStore {
    /// The live directory's view of users: every user, or only `ids`.
    ///
    /// Rows are streamed, one at a time, into the directory being built: collecting a million
    /// users' 24 million friendship rows first would hold gigabytes at once. Every user is one
    /// read with no deadline (it takes as long as the database is large, as starting a node does);
    /// a few users are an ordinary bounded read. One snapshot either way.
    public func personStates(only ids: [UserID]? = nil) async throws -> [PersonState] {
        let bindings = {
            var bindings = PostgresBindings()
            if let ids { bindings.append(ids.map(\.rawValue)) }
            return bindings
        }()
        let filter: @Sendable (String) -> String = { column in ids == nil ? "true" : "\(column) = ANY($1::bigint[])" }
        let states: @Sendable (PostgresTransaction) async throws -> [PersonState] = { tx in
            func each(_ sql: String, _ body: (PostgresRow) throws -> Void) async throws {
                for try await row in try await tx.connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: tx.logger) {
                    try body(row)
                }
            }
            var people = PersonStatesAssembly(everyone: ids == nil)
            try await each("""
                SELECT u.id, u.username, u.display_name, u.ghost, u.ghost_until, u.precision, u.discoverable,
                       t.lat, t.lon, t.accuracy, t.recorded_at, t.zones
                FROM users u LEFT JOIN track_state t ON t.user_id = u.id WHERE \(filter("u.id"))
                """) { row in
                let (id, username, displayName, ghost, ghostUntil, precision, discoverable, lat, lon, accuracy, recordedAt, zones) =
                    try row.decode((Int64, String, String, String, Double?, String, Bool, Double?, Double?, Double?, Double?, String?).self)
                let latest = recordedAt.map {
                    AcceptedFix(position: Coordinate(lat: lat ?? 0, lon: lon ?? 0), accuracy: accuracy ?? 0, recordedAt: Date(timeIntervalSince1970: $0))
                }
                people.addUser(UserID(id), username: username, displayName: displayName, latest: latest, zones: zones,
                               sharing: SharingSettings(ghost: Self.ghostMode(ghost, until: ghostUntil), precision: Precision(rawValue: precision) ?? .exact),
                               discoverable: discoverable)
            }
            try await each("SELECT user_id, park_id, last_evidence_at FROM visits WHERE left_at IS NULL AND \(filter("user_id"))") { row in
                let (user, park, lastEvidence) = try row.decode((Int64, String, Double).self)
                people.addOpenVisit(UserID(user), park: ParkID(rawValue: park), lastEvidence: Date(timeIntervalSince1970: lastEvidence))
            }
            try await each("SELECT user_id, friend_id, precision, hidden FROM sharing_overrides WHERE \(filter("user_id"))") { row in
                let (user, friend, precision, hidden) = try row.decode((Int64, Int64, String?, Bool).self)
                people.addOverride(UserID(user), friend: UserID(friend),
                                   SharingOverride(precision: precision.flatMap(Precision.init(rawValue:)), hidden: hidden))
            }
            try await each("""
                SELECT requester, addressee FROM friendships WHERE status = 'accepted' AND (\(filter("requester")) OR \(filter("addressee")))
                """) { row in
                let (a, b) = try row.decode((Int64, Int64).self)
                people.addFriendship(UserID(a), UserID(b))
            }
            people.linkFriends()
            try await each("SELECT blocker, blocked FROM blocks WHERE \(filter("blocker")) OR \(filter("blocked"))") { row in
                let (blocker, blocked) = try row.decode((Int64, Int64).self)
                people.addBlock(blocker: UserID(blocker), blocked: UserID(blocked))
            }
            return people.states
        }
        if ids == nil {
            return try await self.unbounded(begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", states)
        }
        return try await self.read(states)
    }

    /// Ghost mode from a users row's `ghost` and `ghost_until` columns.
    private static func ghostMode(_ ghost: String, until: Double?) -> GhostMode {
        switch ghost {
        case "on": .on
        case "until": .until(Date(timeIntervalSince1970: until ?? 0))
        default: .off
        }
    }
}
