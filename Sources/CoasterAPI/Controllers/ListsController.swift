import CoasterCore
import CoasterHTTP
import CoasterService
import CoasterStore
import Foundation
import HTTPTypes
import Hummingbird

/// Ride lists (docs: Lists): make, read, share, fill, order, check, like, follow and copy them.
/// A list the caller may not read answers 404, whatever the route; one they may read but do not
/// own answers 403 to a change.
struct ListsController {
    let lists: Lists
    /// Shared-list reads per client address: a share token is the only credential of that route.
    let sharedReads: RequestRates

    var store: any Store { self.lists.store }
    var rules: ListRules { self.lists.rules }
    var privacy: LocationPrivacy { self.lists.privacy }

    /// The largest list body: a title, a description of 2,000 characters and a note fit many
    /// times over.
    static let maximumBodyBytes = 64 << 10
    /// Items a list page holds at most (a list holds at most 1,000), and by default.
    static let largestItemPage = 1_000
    static let defaultItemPage = 200

    /// Routes for signed-in users.
    var endpoints: RouteCollection<AppRequestContext> {
        let routes = RouteCollection(context: AppRequestContext.self)
        routes.post("lists", use: self.create)
        routes.get("lists", use: self.index)
        routes.get("lists/following/changes", use: self.changes)
        routes.get("lists/{listId}", use: self.show)
        routes.patch("lists/{listId}", use: self.edit)
        routes.delete("lists/{listId}", use: self.delete)
        routes.post("lists/{listId}/items", use: self.addItem)
        routes.patch("lists/{listId}/items/{itemId}", use: self.editItem)
        routes.delete("lists/{listId}/items/{itemId}", use: self.removeItem)
        routes.put("lists/{listId}/like", use: self.like)
        routes.delete("lists/{listId}/like", use: self.unlike)
        routes.put("lists/{listId}/follow", use: self.follow)
        routes.delete("lists/{listId}/follow", use: self.unfollow)
        routes.post("lists/{listId}/copy", use: self.copy)
        routes.put("users/{userId}/lists/follow", use: self.followUser)
        routes.delete("users/{userId}/lists/follow", use: self.unfollowUser)
        return routes
    }

    /// The one route anyone may call: the share token is the credential.
    var publicEndpoints: RouteCollection<AppRequestContext> {
        let routes = RouteCollection(context: AppRequestContext.self)
        routes.get("shared-lists/{token}", use: self.shared)
        return routes
    }

    static func listID(_ context: AppRequestContext) throws -> Int64 {
        try context.positiveID("listId", "a list's id")
    }

    /// A list body: JSON of at most ``maximumBodyBytes``, read as the challenge bodies are (a
    /// number out of a `Double`'s range is named by its member's pointer).
    static func decode<T: Decodable>(_ type: T.Type, _ request: Request) async throws -> T {
        try await ChallengesController.decode(T.self, request, limit: Self.maximumBodyBytes)
    }

    // MARK: Lists

    @Sendable func create(_ request: Request, context: AppRequestContext) async throws -> EditedResponse<ListWire> {
        let me = try context.requireIdentity()
        let draft = try (try await Self.decode(NewListBody.self, request)).draft(rules: self.rules).get()
        try self.lists.creations.take(me.id, what: "list creation")
        let view = try await self.store.createList(draft, owner: me.id, rules: self.rules, privacy: self.privacy)
        return EditedResponse(status: .created, headers: [.location: "/v1/lists/\(view.id)"], response: ListWire(view))
    }

    /// `owner=me` (the default) or a user's id: their lists the caller may read, newest first.
    @Sendable func index(_ request: Request, context: AppRequestContext) async throws -> ListsResponse {
        let me = try context.requireIdentity()
        var owner = me.id
        if let text = request.uri.queryParameters["owner"], text != "me" {
            guard let id = Int64(text), id > 0 else { throw Problem.invalidParameter("owner", "me, or a user's id") }
            owner = UserID(id)
        }
        let (limit, before) = try request.paging()
        let views = try await self.store.lists(of: owner, viewer: me.id, privacy: self.privacy, limit: limit, before: before)
        return ListsResponse(lists: views.map(ListWire.init))
    }

    /// The list and a page of its items in `sort` order, as the caller may see them.
    @Sendable func show(_ request: Request, context: AppRequestContext) async throws -> ListPageResponse {
        let me = try context.requireIdentity()
        let id = try Self.listID(context)
        let sort = try Self.sort(request)
        let (limit, offset) = try Self.itemPage(request)
        guard let view = try await self.store.list(id, viewer: me.id, privacy: self.privacy),
              let items = try await self.store.items(of: id, viewer: me.id, sort: sort, privacy: self.privacy, limit: limit, offset: offset)
        else { throw ListError.noSuchList }
        return ListPageResponse(list: ListWire(view), items: items.map(ListItemWire.init))
    }

    @Sendable func edit(_ request: Request, context: AppRequestContext) async throws -> ListWire {
        let me = try context.requireIdentity()
        let id = try Self.listID(context)
        let edit = try (try await Self.decode(ListPatchBody.self, request)).edit(rules: self.rules).get()
        return ListWire(try await self.store.editList(id, owner: me.id, edit: edit, privacy: self.privacy))
    }

    @Sendable func delete(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        let me = try context.requireIdentity()
        try await self.store.deleteList(try Self.listID(context), owner: me.id)
        return .noContent
    }

    /// A `link` list read by its share token, signed in or not. A token of the wrong shape is
    /// refused as one that names nothing, before the store is asked; every read is counted
    /// against the client's address, so that tokens (128 random bits) cannot be tried in bulk.
    @Sendable func shared(_ request: Request, context: AppRequestContext) async throws -> ListPageResponse {
        try self.sharedReads.take(key: context.clientAddress, what: "shared list")
        let token = context.parameters.get("token") ?? ""
        let sort = try Self.sort(request)
        guard Self.isShareToken(token), let shared = try await self.store.sharedList(token: token, sort: sort, privacy: self.privacy) else {
            throw ListError.noSuchList
        }
        return ListPageResponse(list: ListWire(shared.list), items: shared.items.map(ListItemWire.init))
    }

    /// 22 characters of base64url: what ``ListRules/newShareToken()`` makes of 16 bytes.
    static func isShareToken(_ text: String) -> Bool {
        text.utf8.count == 22 && text.utf8.allSatisfy { b in
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(b) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(b)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b) || b == UInt8(ascii: "-") || b == UInt8(ascii: "_")
        }
    }

    // MARK: Items

    @Sendable func addItem(_ request: Request, context: AppRequestContext) async throws -> EditedResponse<ListItemWire> {
        let me = try context.requireIdentity()
        let id = try Self.listID(context)
        let body = try (try await Self.decode(NewItemBody.self, request)).checked(rules: self.rules).get()
        try self.lists.items.take(me.id, what: "list item")
        let item = try await self.store.addItem(to: id, owner: me.id, target: body.target, note: body.note, position: body.position,
                                                rules: self.rules, privacy: self.privacy)
        await self.lists.changed()
        return EditedResponse(status: .created, response: ListItemWire(item))
    }

    @Sendable func editItem(_ request: Request, context: AppRequestContext) async throws -> ListItemWire {
        let me = try context.requireIdentity()
        let id = try Self.listID(context)
        let itemID = try context.positiveID("itemId", "an item's id")
        let edit = try (try await Self.decode(ItemPatchBody.self, request)).edit(rules: self.rules).get()
        try self.lists.items.take(me.id, what: "list item")
        let item = try await self.store.editItem(itemID, in: id, owner: me.id, edit: edit, privacy: self.privacy)
        if edit.checked == true { await self.lists.changed() }
        return ListItemWire(item)
    }

    @Sendable func removeItem(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        let me = try context.requireIdentity()
        let id = try Self.listID(context)
        let itemID = try context.positiveID("itemId", "an item's id")
        try self.lists.items.take(me.id, what: "list item")
        try await self.store.removeItem(itemID, from: id, owner: me.id)
        return .noContent
    }

    // MARK: Social

    @Sendable func like(_ request: Request, context: AppRequestContext) async throws -> ListWire { try await self.setLike(true, context) }
    @Sendable func unlike(_ request: Request, context: AppRequestContext) async throws -> ListWire { try await self.setLike(false, context) }

    private func setLike(_ liked: Bool, _ context: AppRequestContext) async throws -> ListWire {
        let me = try context.requireIdentity()
        let id = try Self.listID(context)
        try self.lists.social.take(me.id, what: "list like")
        return ListWire(try await self.store.setListLike(id, user: me.id, liked: liked, privacy: self.privacy))
    }

    @Sendable func follow(_ request: Request, context: AppRequestContext) async throws -> ListWire { try await self.setFollow(true, context) }
    @Sendable func unfollow(_ request: Request, context: AppRequestContext) async throws -> ListWire { try await self.setFollow(false, context) }

    private func setFollow(_ following: Bool, _ context: AppRequestContext) async throws -> ListWire {
        let me = try context.requireIdentity()
        let id = try Self.listID(context)
        try self.lists.social.take(me.id, what: "list follow")
        return ListWire(try await self.store.setListFollow(id, user: me.id, following: following, rules: self.rules, privacy: self.privacy))
    }

    @Sendable func followUser(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        try await self.setUserFollow(true, context)
    }

    @Sendable func unfollowUser(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        try await self.setUserFollow(false, context)
    }

    /// Follows every list of a user the caller may read, present and future.
    private func setUserFollow(_ following: Bool, _ context: AppRequestContext) async throws -> HTTPResponse.Status {
        let me = try context.requireIdentity()
        let owner = UserID(try context.positiveID("userId", "a user's id"))
        try self.lists.social.take(me.id, what: "list follow")
        try await self.store.setListsFollow(of: owner, user: me.id, following: following, rules: self.rules)
        return .noContent
    }

    /// "Make it mine": a private copy of a list the caller may read, checked by their own evidence.
    @Sendable func copy(_ request: Request, context: AppRequestContext) async throws -> EditedResponse<ListWire> {
        let me = try context.requireIdentity()
        let id = try Self.listID(context)
        try self.lists.creations.take(me.id, what: "list creation")
        let view = try await self.store.copyList(id, user: me.id, rules: self.rules, privacy: self.privacy)
        return EditedResponse(status: .created, headers: [.location: "/v1/lists/\(view.id)"], response: ListWire(view))
    }

    /// Changes to the lists the caller follows, newest first, once they may see them.
    @Sendable func changes(_ request: Request, context: AppRequestContext) async throws -> ListChangesResponse {
        let me = try context.requireIdentity()
        let (limit, before) = try request.paging()
        let changes = try await self.store.listChanges(for: me.id, privacy: self.privacy, limit: limit, before: before)
        return ListChangesResponse(changes: changes.map(ListChangeWire.init))
    }

    // MARK: Helpers

    /// `sort`: the owner's order (`custom`) unless given.
    static func sort(_ request: Request) throws -> ListSort {
        guard let text = request.uri.queryParameters["sort"] else { return .custom }
        guard let sort = ListSort(rawValue: String(text)) else {
            throw Problem.invalidParameter("sort", "one of " + ListSort.allCases.map(\.rawValue).joined(separator: ", "))
        }
        return sort
    }

    /// `limit` (1…1000, 200 unless given) and `offset` (0…1000) of a list's items.
    static func itemPage(_ request: Request) throws -> (limit: Int, offset: Int) {
        let query = request.uri.queryParameters
        var limit = Self.defaultItemPage, offset = 0
        if let text = query["limit"] {
            guard let n = Int(text), (1...Self.largestItemPage).contains(n) else {
                throw Problem.invalidParameter("limit", "a whole number in 1…\(Self.largestItemPage)")
            }
            limit = n
        }
        if let text = query["offset"] {
            guard let n = Int(text), (0...Self.largestItemPage).contains(n) else {
                throw Problem.invalidParameter("offset", "a whole number in 0…\(Self.largestItemPage)")
            }
            offset = n
        }
        return (limit, offset)
    }
}
