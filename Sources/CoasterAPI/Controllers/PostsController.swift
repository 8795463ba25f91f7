import CoasterCore
import CoasterHTTP
import CoasterService
import CoasterStore
import Foundation
import HTTPTypes
import Hummingbird

/// Trip reports (docs: Posts): write, read, edit and delete posts; their feeds, thumbs, comments
/// and search. A post the caller may not read answers 404 whatever the route.
struct PostsController {
    let posts: Posts

    var store: any Store { self.posts.store }
    var privacy: LocationPrivacy { self.posts.privacy }

    /// The largest post body: 5,000 characters of four bytes, JSON-escaped, and the tags.
    static let maximumBodyBytes = 128 << 10

    var endpoints: RouteCollection<AppRequestContext> {
        let routes = RouteCollection(context: AppRequestContext.self)
        routes.post("posts", use: self.create)
        routes.get("posts/{postId}", use: self.show)
        routes.patch("posts/{postId}", use: self.edit)
        routes.delete("posts/{postId}", use: self.delete)
        routes.put("posts/{postId}/reaction", use: self.react)
        routes.delete("posts/{postId}/reaction", use: self.unreact)
        routes.get("posts/{postId}/comments", use: self.comments)
        routes.post("posts/{postId}/comments", use: self.comment)
        routes.delete("comments/{commentId}", use: self.deleteComment)
        routes.get("feed/home", use: { try await self.feed(.home, $0, $1) })
        routes.get("feed/public", use: { try await self.feed(.public, $0, $1) })
        routes.get("feed/park/{parkId}", use: { request, context in
            try await self.feed(.park(try ParksController.parkID(context)), request, context)
        })
        routes.get("feed/ride/{rideId}", use: { request, context in
            try await self.feed(.ride(try Self.rideID(context)), request, context)
        })
        routes.get("feed/user/{userId}", use: { request, context in
            try await self.feed(.user(UserID(try context.positiveID("userId", "a user's id"))), request, context)
        })
        routes.get("feed/tag/{hashtag}", use: { request, context in
            let raw = context.parameters.get("hashtag") ?? ""
            guard let tag = PostRules.hashtag(raw.removingPercentEncoding ?? raw) else {
                throw Problem.invalidPathParameter("hashtag", "a hashtag: 1…\(PostRules.hashtagLength.upperBound) letters, digits or _, with or without #")
            }
            return try await self.feed(.tag(tag), request, context)
        })
        routes.get("search/posts", use: self.search)
        return routes
    }

    static func postID(_ context: AppRequestContext) throws -> Int64 { try context.positiveID("postId", "a post's id") }

    static func rideID(_ context: AppRequestContext) throws -> RideID {
        let raw = context.parameters.get("rideId") ?? ""
        guard Slug.isRideID(raw) else { throw Problem.invalidPathParameter("rideId", "a ride's id, <park>.<slug>") }
        return RideID(rawValue: raw)
    }

    static func decode<T: Decodable>(_ type: T.Type, _ request: Request) async throws -> T {
        try await ChallengesController.decode(T.self, request, limit: Self.maximumBodyBytes)
    }

    // MARK: Posts

    @Sendable func create(_ request: Request, context: AppRequestContext) async throws -> EditedResponse<PostWire> {
        let me = try context.requireIdentity()
        let draft = try (try await Self.decode(NewPostBody.self, request)).draft().get()
        try self.posts.posts.take(me.id, what: "post")
        let view = try await self.store.createPost(draft, author: me.id, now: self.posts.now(), privacy: self.privacy)
        return EditedResponse(status: .created, headers: [.location: "/v1/posts/\(view.id)"], response: PostWire(view))
    }

    @Sendable func show(_ request: Request, context: AppRequestContext) async throws -> PostWire {
        let me = try context.requireIdentity()
        guard let view = try await self.store.post(try Self.postID(context), viewer: me.id, now: self.posts.now(), privacy: self.privacy)
        else { throw PostError.noSuchPost }
        return PostWire(view)
    }

    @Sendable func edit(_ request: Request, context: AppRequestContext) async throws -> PostWire {
        let me = try context.requireIdentity()
        let id = try Self.postID(context)
        let edit = try (try await Self.decode(PostPatchBody.self, request)).edit().get()
        try self.posts.posts.take(me.id, what: "post")
        return PostWire(try await self.store.editPost(id, author: me.id, edit: edit, now: self.posts.now(), privacy: self.privacy))
    }

    @Sendable func delete(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        let me = try context.requireIdentity()
        try await self.store.deletePost(try Self.postID(context), author: me.id)
        return .noContent
    }

    // MARK: Feeds

    /// A page of a feed, newest first: `after` (the `next` of the page before) for older posts,
    /// `since` (the `newest` a client holds) for newer ones; `limit` 1…100, 20 unless given.
    func feed(_ feed: Feed, _ request: Request, _ context: AppRequestContext) async throws -> FeedResponse {
        let me = try context.requireIdentity()
        let query = request.uri.queryParameters
        let limit = try Self.limit(query)
        let after = try Self.cursor(query, "after")
        let since = try Self.cursor(query, "since")
        guard after == nil || since == nil else { throw Problem.invalidParameter("since", "give after (older posts) or since (newer ones), not both") }
        let views = try await self.store.feed(feed, viewer: me.id, after: after, since: since, limit: limit, now: self.posts.now(), privacy: self.privacy)
        let next = since == nil && views.count == limit ? views.last.map { PageCursor(position: $0.id).encoded } : nil
        let newest = (views.first?.id ?? since).map { PageCursor(position: $0).encoded }
        return FeedResponse(posts: views.map(PostWire.init), next: next, newest: newest)
    }

    static func limit(_ query: some QueryLookup) throws -> Int {
        guard let text = query.value(named: "limit") else { return PostRules.defaultPage }
        guard let n = Int(text), (1...PostRules.largestPage).contains(n) else {
            throw Problem.invalidParameter("limit", "a whole number in 1…\(PostRules.largestPage)")
        }
        return n
    }

    /// A cursor this service issued, or a 400 naming the parameter: never a 500.
    static func cursor(_ query: some QueryLookup, _ name: String) throws -> Int64? {
        guard let text = query.value(named: name) else { return nil }
        guard let cursor = PageCursor(decoding: String(text)) else {
            throw Problem.invalidParameter(name, "a cursor from an earlier page (its next or newest), as it was given")
        }
        return cursor.position
    }

    // MARK: Thumbs and comments

    @Sendable func react(_ request: Request, context: AppRequestContext) async throws -> PostWire {
        let me = try context.requireIdentity()
        let id = try Self.postID(context)
        let reaction = try (try await Self.decode(ReactionBody.self, request)).reaction().get()
        try self.posts.reactions.take(me.id, what: "reaction")
        return PostWire(try await self.store.setReaction(reaction, post: id, user: me.id, now: self.posts.now(), privacy: self.privacy))
    }

    @Sendable func unreact(_ request: Request, context: AppRequestContext) async throws -> PostWire {
        let me = try context.requireIdentity()
        let id = try Self.postID(context)
        try self.posts.reactions.take(me.id, what: "reaction")
        return PostWire(try await self.store.setReaction(nil, post: id, user: me.id, now: self.posts.now(), privacy: self.privacy))
    }

    /// `order` newest (the default) or oldest, `after` the `next` of the page before.
    @Sendable func comments(_ request: Request, context: AppRequestContext) async throws -> CommentsResponse {
        let me = try context.requireIdentity()
        let id = try Self.postID(context)
        let query = request.uri.queryParameters
        var order = CommentOrder.newest
        if let text = query["order"] {
            guard let named = CommentOrder(rawValue: String(text)) else {
                throw Problem.invalidParameter("order", "one of " + CommentOrder.allCases.map(\.rawValue).joined(separator: ", "))
            }
            order = named
        }
        let limit = try Self.limit(query)
        let after = try Self.cursor(query, "after")
        guard let comments = try await self.store.comments(on: id, viewer: me.id, order: order, after: after, limit: limit) else {
            throw PostError.noSuchPost
        }
        return CommentsResponse(comments: comments.map(CommentWire.init),
                                next: comments.count == limit ? comments.last.map { PageCursor(position: $0.id).encoded } : nil)
    }

    @Sendable func comment(_ request: Request, context: AppRequestContext) async throws -> EditedResponse<CommentWire> {
        let me = try context.requireIdentity()
        let id = try Self.postID(context)
        let text = try (try await Self.decode(NewCommentBody.self, request)).checked().get()
        try self.posts.comments.take(me.id, what: "comment")
        let comment = try await self.store.addComment(to: id, author: me.id, text: text, now: self.posts.now())
        return EditedResponse(status: .created, response: CommentWire(comment))
    }

    @Sendable func deleteComment(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        let me = try context.requireIdentity()
        try await self.store.deleteComment(try context.positiveID("commentId", "a comment's id"), user: me.id)
        return .noContent
    }

    // MARK: Search

    /// `q` (required) and the filters `park`, `ride`, `author`, `tag`, `from`, `to` (a date,
    /// `2026-07-04`, or a time, `2026-07-04T12:00:00Z`; `to` is exclusive), `sort` relevance or
    /// newest, `limit`, `after`.
    @Sendable func search(_ request: Request, context: AppRequestContext) async throws -> PostSearchResponse {
        let me = try context.requireIdentity()
        let parameters = request.uri.queryParameters
        let (query, limit, offset) = try Self.query(parameters)
        try self.posts.searches.take(me.id, what: "search")
        let terms = PostRules.searchTerms(query.text)
        let hits = try await self.store.searchPosts(query, terms: terms, viewer: me.id, limit: limit, offset: offset, now: self.posts.now(),
                                                    privacy: self.privacy)
        let next = hits.count == limit && offset + limit < PostRules.searchCandidates ? PageCursor(position: Int64(offset + limit)).encoded : nil
        return PostSearchResponse(query: terms.map { $0.words.joined(separator: " ") },
                                  results: hits.map { .init(post: PostWire($0.post), matchedIn: $0.inComment ? "comment" : "post") }, next: next)
    }

    /// The search a query string asks, its page length and offset, or a 422 naming every
    /// parameter out of its bounds.
    static func query(_ parameters: some QueryLookup) throws -> (PostQuery, limit: Int, offset: Int) {
        var refused: [Problem.InvalidParameter] = []
        func refuse(_ name: String, _ reason: String) { refused.append(.init(name: name, reason: reason)) }
        var query = PostQuery(text: "")
        if let q = parameters.value(named: "q").map(String.init), !q.allSatisfy(\.isWhitespace) {
            if q.utf8.count > 800 || q.count > 200 { refuse("q", "at most 200 characters") } else { query.text = q }
        } else {
            refuse("q", "words to search for")
        }
        if let park = parameters.value(named: "park").map(String.init) {
            if Slug.isValid(park) { query.park = ParkID(rawValue: park) } else { refuse("park", "a park's id: a-z, 0-9 and -, at most 64 characters") }
        }
        if let ride = parameters.value(named: "ride").map(String.init) {
            if Slug.isRideID(ride) { query.ride = RideID(rawValue: ride) } else { refuse("ride", "a ride's id, <park>.<slug>") }
        }
        if let author = parameters.value(named: "author") {
            if let id = Int64(author), id > 0 { query.author = UserID(id) } else { refuse("author", "a user's id") }
        }
        if let tag = parameters.value(named: "tag").map(String.init) {
            if let folded = PostRules.hashtag(tag) { query.hashtag = folded } else { refuse("tag", "a hashtag: letters, digits or _, with or without #") }
        }
        for name in ["from", "to"] {
            guard let text = parameters.value(named: name).map(String.init) else { continue }
            guard let date = Self.date(text) else {
                refuse(name, "a date (2026-07-04) or a time (2026-07-04T12:00:00Z)")
                continue
            }
            if name == "from" { query.from = date } else { query.to = date }
        }
        if let from = query.from, let to = query.to, to <= from { refuse("to", "after from") }
        if let sort = parameters.value(named: "sort").map(String.init) {
            if let named = PostSearchSort(rawValue: sort) { query.sort = named }
            else { refuse("sort", "one of " + PostSearchSort.allCases.map(\.rawValue).joined(separator: ", ")) }
        }
        var limit = PostRules.defaultPage
        if let text = parameters.value(named: "limit") {
            if let n = Int(text), (1...PostRules.largestPage).contains(n) { limit = n } else { refuse("limit", "a whole number in 1…\(PostRules.largestPage)") }
        }
        var offset = 0
        if let text = parameters.value(named: "after") {
            if let cursor = PageCursor(decoding: String(text)), cursor.position < Int64(PostRules.searchCandidates) { offset = Int(cursor.position) }
            else { refuse("after", "a cursor from an earlier page (its next), as it was given") }
        }
        guard refused.isEmpty else { throw Problem.invalidSearch(refused) }
        return (query, limit, offset)
    }

    /// `2026-07-04` (midnight UTC) or an RFC 3339 time.
    static func date(_ text: String) -> Date? {
        guard text.utf8.count <= 40 else { return nil }
        if text.utf8.count == 10 {
            return try? Date("\(text)T00:00:00Z", strategy: .iso8601)
        }
        if let date = try? Date(text, strategy: .iso8601) { return date }
        return try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}
