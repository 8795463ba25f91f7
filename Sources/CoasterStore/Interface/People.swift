import CoasterCore
import Foundation

/// What the in-memory person directory is loaded from.
public protocol PeopleStore: Sendable {
    /// The live directory's view of users: every user, or only `ids`.
    ///
    /// Rows are read through cursors, one at a time: fetching a million users' 50 million friendship
    /// rows as an array of `Row`s first would hold gigabytes at once.
    func personStates(only ids: [UserID]?) async throws -> [PersonState]
}

extension PeopleStore {
    /// Every user's state.
    public func personStates() async throws -> [PersonState] { try await self.personStates(only: nil) }
}
