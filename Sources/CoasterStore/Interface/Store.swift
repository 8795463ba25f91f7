import Foundation

/// CoasterLife's durable record, as the service uses it: every operation it asks of a store, by
/// concern. Each operation that writes reads, decides and writes in one transaction; the rules it
/// applies are CoasterCore's, handed in or called, never its own (docs: Architecture).
///
/// ``SpatiaLiteStore`` (one SQLite file with SpatiaLite) is the implementation; the protocol is
/// what a second one (PostgreSQL with PostGIS) implements, and what the service is written against.
public protocol Store: AccountStore, BackupStore, BadgeStore, BulkStore, CatalogStore, ChallengeStore, DensityStore, FixStore, FollowStore, FriendStore, LeaderboardStore, MessageStore,
    ListStore, ParkStore, PeopleStore, PhotoStore, PostStore, ProfileStore, RideStore, WaitStore {
    /// Closes every connection; the store must not be used afterwards.
    func close() throws

    /// Versions of the storage engine and its libraries, by name.
    func versions() async throws -> [String: String]
}
