import CoasterCore
import Foundation
import GRDB

/// What the store knows of one friend's whereabouts, before the privacy rules are applied.
public struct FriendPosition: Hashable, Sendable {
    public var user: UserSummary
    public var latest: AcceptedFix?
    /// The friend's sharing settings, with only the override they set for the viewer.
    public var sharing: SharingSettings
    /// Parks the friend is on an open visit to.
    public var visiting: Set<ParkID>
    /// Zones the friend's latest fix is inside.
    public var zones: Set<ZoneID>
}

extension Store {
    /// Every accepted friend of `viewer` with their latest fix, sharing settings and open visits.
    /// The caller applies ``CoasterCore/LocationPrivacy`` before showing anything.
    public func friendPositions(of viewer: UserID, visitTimeout: TimeInterval) async throws -> [FriendPosition] {
        let since = self.now().timeIntervalSince1970 - visitTimeout
        return try await self.pool.read { db in
            let rows = try Row.fetchAll(db, sql: """
                SELECT u.id, u.username, u.display_name, u.ghost, u.ghost_until, u.precision,
                       t.lat, t.lon, t.accuracy, t.recorded_at, t.zones,
                       o.precision AS override_precision, o.hidden AS override_hidden,
                       (SELECT group_concat(v.park_id, char(10)) FROM visits v
                        WHERE v.user_id = u.id AND v.left_at IS NULL AND v.last_evidence_at >= :since) AS visiting
                FROM friendships f
                JOIN users u ON u.id = CASE WHEN f.requester = :me THEN f.addressee ELSE f.requester END
                LEFT JOIN track_state t ON t.user_id = u.id
                LEFT JOIN sharing_overrides o ON o.user_id = u.id AND o.friend_id = :me
                WHERE (f.requester = :me OR f.addressee = :me) AND f.status = 'accepted'
                ORDER BY u.id
                """, arguments: ["me": viewer.rawValue, "since": since])
            return rows.map { row in
                let ghost = Self.ghostMode(row)
                var overrides: [UserID: SharingOverride] = [:]
                if let hidden = row["override_hidden"] as Bool? {
                    overrides[viewer] = SharingOverride(
                        precision: (row["override_precision"] as String?).flatMap(Precision.init(rawValue:)), hidden: hidden)
                }
                let latest: AcceptedFix? = (row["recorded_at"] as Double?).map {
                    AcceptedFix(position: Coordinate(lat: row["lat"], lon: row["lon"]), accuracy: row["accuracy"],
                                recordedAt: Date(timeIntervalSince1970: $0))
                }
                func ids(_ text: String?) -> [String] { (text ?? "").split(separator: "\n").map(String.init) }
                return FriendPosition(
                    user: Self.summary(row), latest: latest,
                    sharing: SharingSettings(ghost: ghost, precision: Precision(rawValue: row["precision"]) ?? .exact, overrides: overrides),
                    visiting: Set(ids(row["visiting"]).map(ParkID.init(rawValue:))),
                    zones: Set(ids(row["zones"]).map(ZoneID.init(rawValue:))))
            }
        }
    }
}
