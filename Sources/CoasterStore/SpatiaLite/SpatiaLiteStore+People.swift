import CoasterCore
import Foundation
import GRDB

extension SpatiaLiteStore {
    /// The live directory's view of users: every user, or only `ids`.
    ///
    /// Rows are read through cursors, one at a time: fetching a million users' 50 million friendship
    /// rows as an array of `Row`s first would hold gigabytes at once.
    public func personStates(only ids: [UserID]? = nil) async throws -> [PersonState] {
        try await self.pool.read { db in
            let filter: (String) -> String = { column in
                guard let ids else { return "1" }
                return ids.isEmpty ? "0" : "\(column) IN (\(ids.map { String($0.rawValue) }.joined(separator: ",")))"
            }
            var people = PersonStatesAssembly(everyone: ids == nil)
            try Row.fetchCursor(db, sql: """
                SELECT u.id, u.username, u.display_name, u.ghost, u.ghost_until, u.precision, u.discoverable,
                       t.lat, t.lon, t.accuracy, t.recorded_at, t.zones
                FROM users u LEFT JOIN track_state t ON t.user_id = u.id WHERE \(filter("u.id"))
                """).forEach { row in
                let latest: AcceptedFix? = (row["recorded_at"] as Double?).map {
                    AcceptedFix(position: Coordinate(lat: row["lat"], lon: row["lon"]), accuracy: row["accuracy"], recordedAt: Date(timeIntervalSince1970: $0))
                }
                people.addUser(UserID(row["id"] as Int64), username: row["username"], displayName: row["display_name"], latest: latest,
                               zones: row["zones"], sharing: Self.sharing(row), discoverable: row["discoverable"])
            }
            try Row.fetchCursor(db, sql: "SELECT user_id, park_id, last_evidence_at FROM visits WHERE left_at IS NULL AND \(filter("user_id"))").forEach { row in
                people.addOpenVisit(UserID(row["user_id"] as Int64), park: ParkID(rawValue: row["park_id"]),
                                    lastEvidence: Date(timeIntervalSince1970: row["last_evidence_at"]))
            }
            try Row.fetchCursor(db, sql: "SELECT user_id, friend_id, precision, hidden FROM sharing_overrides WHERE \(filter("user_id"))").forEach { row in
                people.addOverride(UserID(row["user_id"] as Int64), friend: UserID(row["friend_id"] as Int64), Self.override(row))
            }
            try Row.fetchCursor(db, sql: """
                SELECT requester, addressee FROM friendships WHERE status = 'accepted' AND (\(filter("requester")) OR \(filter("addressee")))
                """).forEach { row in
                people.addFriendship(UserID(row[0] as Int64), UserID(row[1] as Int64))
            }
            people.linkFriends()
            try Row.fetchCursor(db, sql: "SELECT blocker, blocked FROM blocks WHERE \(filter("blocker")) OR \(filter("blocked"))").forEach { row in
                people.addBlock(blocker: UserID(row["blocker"] as Int64), blocked: UserID(row["blocked"] as Int64))
            }
            return people.states
        }
    }
}
