import CoasterCore
import Foundation

/// Profile pages.
public protocol ProfileStore: Sendable {
    /// The profile page of `user` as `viewer` may see it, read in one transaction (one hop to the
    /// reader pool, one snapshot: a friendship ended meanwhile cannot leave half a page): `nil`
    /// unless `user` is the viewer or an accepted friend of theirs, and exists.
    func profilePage(of user: UserID, viewer: UserID) async throws -> ProfilePage?
}
