import CoasterCore
import CoasterService
import CoasterStore
import Foundation
import HTTPTypes
import Hummingbird

/// The friend graph: requests, friends, sharing per friend, and blocks.
struct FriendsController {
    let store: any Store
    let people: People
    /// Friend requests sent, per user.
    let rates: RequestRates
    let now: @Sendable () -> Date
    /// Seen within this many seconds counts as online.
    static let onlineWindow: TimeInterval = 5 * 60

    var endpoints: RouteCollection<AppRequestContext> {
        let routes = RouteCollection(context: AppRequestContext.self)
        routes.get("friends", use: self.list)
        routes.get("friends/requests", use: self.requests)
        routes.post("friends/requests", use: self.request)
        routes.post("friends/requests/{userId}/accept", use: self.accept)
        routes.post("friends/requests/{userId}/decline", use: self.decline)
        routes.delete("friends/requests/{userId}", use: self.cancel)
        routes.delete("friends/{userId}", use: self.remove)
        routes.put("friends/{userId}/sharing", use: self.setSharing)
        routes.delete("friends/{userId}/sharing", use: self.clearSharing)
        routes.get("blocks", use: self.blocks)
        routes.put("blocks/{userId}", use: self.block)
        routes.delete("blocks/{userId}", use: self.unblock)
        return routes
    }

    /// The `{userId}` of every route that names a user in its path. Text that cannot be a user's
    /// id is the caller's mistake (400 naming the parameter), not an unknown user: `GET
    /// /v1/users/search` is not a search.
    static func userID(_ context: AppRequestContext) throws -> UserID {
        UserID(try context.positiveID("userId", "a user's id"))
    }

    @Sendable func list(_ request: Request, context: AppRequestContext) async throws -> FriendListResponse {
        let now = self.now()
        let me = try context.requireIdentity()
        let limit = try request.pageLimit()
        let after = try request.pageAfter(NamePosition.init(cursor:))
        let friends = try await self.store.friends(of: me.id, limit: limit, after: after)
        return FriendListResponse(friends: friends.map { f in
            FriendWire(id: f.user.id, username: f.user.username, displayName: f.user.displayName, since: f.since,
                       lastSeen: f.lastSeen, online: f.lastSeen.map { now.timeIntervalSince($0) < Self.onlineWindow } ?? false)
        }, next: friends.count == limit ? friends.last?.position.cursor : nil)
    }

    @Sendable func requests(_ request: Request, context: AppRequestContext) async throws -> FriendRequestListResponse {
        let me = try context.requireIdentity()
        let limit = try request.pageLimit()
        let after = try request.pageAfter(ListPosition.init(cursor:))
        let (incoming, outgoing) = try await self.store.friendRequests(of: me.id, limit: limit, after: after)
        let item = { (r: FriendRequestListing) in FriendRequestListResponse.Item(user: UserWire(r.user), sentAt: r.sentAt) }
        return FriendRequestListResponse(incoming: incoming.map(item), outgoing: outgoing.map(item),
                                         next: incoming.count == limit ? incoming.last?.position.cursor : nil)
    }

    @Sendable func request(_ request: Request, context: AppRequestContext) async throws -> EditedResponse<FriendRequestResponse> {
        let me = try context.requireIdentity()
        let body = try await request.decodeJSON(as: FriendRequestBody.self, context: context)
        // Before the name is looked at: asking after a name that does not exist counts too.
        try self.rates.take(me.id, what: "friend request")
        let username: String
        do {
            username = try AccountRules.username(body.username)
        } catch {
            throw FriendshipError.noSuchUser
        }
        let outcome = try await self.store.requestFriend(from: me.id, to: username)
        if case .accepted(let them) = outcome { try await self.people.refresh(me.id, them.id) }
        switch outcome {
        case .requested(let user): return EditedResponse(status: .created, response: .init(status: .requested, user: UserWire(user)))
        case .accepted(let user): return EditedResponse(status: .ok, response: .init(status: .accepted, user: UserWire(user)))
        case .alreadyFriends(let user): return EditedResponse(status: .ok, response: .init(status: .alreadyFriends, user: UserWire(user)))
        case .alreadyRequested(let user): return EditedResponse(status: .ok, response: .init(status: .alreadyRequested, user: UserWire(user)))
        }
    }

    @Sendable func accept(_ request: Request, context: AppRequestContext) async throws -> FriendRequestResponse {
        let me = try context.requireIdentity()
        let user = try await self.store.answerRequest(of: me.id, from: try Self.userID(context), accept: true)
        try await self.people.refresh(me.id, user.id)
        return FriendRequestResponse(status: .accepted, user: UserWire(user))
    }

    @Sendable func decline(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        _ = try await self.store.answerRequest(of: try context.requireIdentity().id, from: try Self.userID(context), accept: false)
        return .noContent
    }

    @Sendable func cancel(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        try await self.store.cancelRequest(of: try context.requireIdentity().id, to: try Self.userID(context))
        return .noContent
    }

    @Sendable func remove(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        let (me, them) = (try context.requireIdentity().id, try Self.userID(context))
        try await self.store.removeFriend(of: me, them)
        try await self.people.refresh(me, them)
        return .noContent
    }

    @Sendable func setSharing(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        // The path before the body, as every route naming a user: a bad id is told as such,
        // whatever the body holds.
        let them = try Self.userID(context)
        let body = try await request.decodeJSON(as: SharingOverrideRequest.self, context: context)
        let override = SharingOverride(precision: body.precision, hidden: body.hidden ?? false)
        let me = try context.requireIdentity().id
        try await self.store.setSharingOverride(of: me, for: them, override)
        try await self.people.refresh(me)
        return .noContent
    }

    @Sendable func clearSharing(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        let me = try context.requireIdentity().id
        try await self.store.setSharingOverride(of: me, for: try Self.userID(context), nil)
        try await self.people.refresh(me)
        return .noContent
    }

    @Sendable func blocks(_ request: Request, context: AppRequestContext) async throws -> BlockListResponse {
        let me = try context.requireIdentity()
        let limit = try request.pageLimit()
        let blocks = try await self.store.blocks(of: me.id, limit: limit, after: try request.pageAfter(ListPosition.init(cursor:)))
        return BlockListResponse(users: blocks.map { UserWire($0.user) }, next: blocks.count == limit ? blocks.last?.position.cursor : nil)
    }

    /// Blocks a user: 204, naming no one. Any id may be blocked (one who blocked the caller
    /// too), so the answer must not say whose it is, and blocks share the friend requests'
    /// allowance: a block list read after a block names the user, so blocking is no faster a way
    /// to learn usernames than asking for friends.
    @Sendable func block(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        let me = try context.requireIdentity().id
        let them = try Self.userID(context)
        try self.rates.take(me, what: "block")
        let user = try await self.store.block(of: me, them)
        try await self.people.refresh(me, user.id)
        return .noContent
    }

    @Sendable func unblock(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        let (me, them) = (try context.requireIdentity().id, try Self.userID(context))
        try await self.store.unblock(of: me, them)
        try await self.people.refresh(me, them)
        return .noContent
    }
}
