import CoasterCore
import CoasterHTTP
import CoasterService
import CoasterStore
import Foundation
import HTTPTypes
import Hummingbird

/// Challenges among friends (docs: Challenges): create, find, join, rank, log hand entries.
/// A challenge the caller may not see answers 404, whatever the route.
struct ChallengesController {
    let challenges: Challenges
    let now: @Sendable () -> Date

    var store: any Store { self.challenges.store }
    var rules: ChallengeRules { self.challenges.rules }

    /// The largest challenge body: a description of 1,000 characters and 100 invitees fit many
    /// times over.
    static let maximumBodyBytes = 64 << 10
    /// How far back `trending` counts joins and likes.
    static let trendingWindow: TimeInterval = 7 * 86_400

    var endpoints: RouteCollection<AppRequestContext> {
        let routes = RouteCollection(context: AppRequestContext.self)
        routes.post("challenges", use: self.create)
        routes.get("challenges", use: self.list)
        routes.get("challenges/search", use: self.search)
        routes.get("challenges/trending", use: self.trending)
        routes.get("challenges/{challengeId}", use: self.show)
        routes.patch("challenges/{challengeId}", use: self.edit)
        routes.delete("challenges/{challengeId}", use: self.delete)
        routes.post("challenges/{challengeId}/invitations", use: self.invite)
        routes.post("challenges/{challengeId}/join", use: self.join)
        routes.post("challenges/{challengeId}/decline", use: self.decline)
        routes.delete("challenges/{challengeId}/members/me", use: self.leave)
        routes.get("challenges/{challengeId}/ranking", use: self.ranking)
        routes.post("challenges/{challengeId}/entries", use: self.addEntry)
        routes.delete("challenges/{challengeId}/entries/{entryId}", use: self.deleteEntry)
        routes.get("challenges/{challengeId}/gallery", use: self.gallery)
        routes.put("challenges/{challengeId}/like", use: self.like)
        routes.delete("challenges/{challengeId}/like", use: self.unlike)
        return routes
    }

    static func challengeID(_ context: AppRequestContext) throws -> Int64 {
        try context.positiveID("challengeId", "a challenge's id")
    }

    /// A challenge body (or a list's): JSON of at most `limit` bytes. A number out of a `Double`'s
    /// range (`1e400`), which the syntax check refuses before the decoder sees it, is still named
    /// by its member's pointer.
    static func decode<T: Decodable>(_ type: T.Type, _ request: Request, limit: Int = Self.maximumBodyBytes) async throws -> T {
        try request.requireJSONContentType()
        let buffer = try await request.body.collect(upTo: limit)
        do {
            return try JSONBody.decode(T.self, from: buffer)
        } catch DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty {
            guard let fault = context.underlyingError as? JSONSyntax.Fault, case .numberOutOfRange = fault.kind,
                  let pointer = ChallengeBodies.member(before: fault.offset, in: Array(buffer.readableBytesView))
            else { throw DecodingError.dataCorrupted(context) }
            let detail = "\(fault)"
            throw Problem(.malformedBody, status: .badRequest, title: "Malformed request body", detail: "\(pointer): \(detail)",
                          errors: [Problem.BodyError(pointer: pointer, feature: nil, detail: detail)])
        }
    }

    // MARK: Challenges

    @Sendable func create(_ request: Request, context: AppRequestContext) async throws -> EditedResponse<ChallengeWire> {
        let me = try context.requireIdentity()
        let body = try await Self.decode(NewChallengeBody.self, request)
        let draft = try body.draft(rules: self.rules, now: self.now()).get()
        try self.challenges.creations.take(me.id, what: "challenge creation")
        let view = try await self.store.createChallenge(draft, author: me.id, rules: self.rules, timeToLive: self.challenges.timeToLive)
        return EditedResponse(status: .created, headers: [.location: "/v1/challenges/\(view.challenge.id)"],
                              response: ChallengeWire(view, now: self.now()))
    }

    @Sendable func list(_ request: Request, context: AppRequestContext) async throws -> ChallengeListResponse {
        let me = try context.requireIdentity()
        let text = request.uri.queryParameters["status"].map(String.init) ?? ChallengeList.ongoing.rawValue
        guard let list = ChallengeList(rawValue: text) else {
            throw Problem.invalidParameter("status", "one of " + ChallengeList.allCases.map(\.rawValue).joined(separator: ", "))
        }
        let (limit, before) = try request.paging()
        let views = try await self.store.challenges(of: me.id, list: list, limit: limit, before: before)
        return self.listResponse(views)
    }

    @Sendable func search(_ request: Request, context: AppRequestContext) async throws -> ChallengeListResponse {
        let me = try context.requireIdentity()
        let query = request.uri.queryParameters
        // An empty query is no keyword filter, as one of only punctuation is (``ChallengeRules/searchWords(_:)``).
        let q = query["q"].map(String.init).flatMap { $0.isEmpty ? nil : $0 }
        if let q, ChallengeRules.query.violation(q) != nil { throw Problem.invalidParameter("q", ChallengeRules.query.rule) }
        let park = try query["park"].map { text -> ParkID in
            guard Slug.isValid(String(text)) else { throw Problem.invalidParameter("park", "a park id") }
            return ParkID(rawValue: String(text))
        }
        let offset = try Self.offset(request)
        let views = try await self.store.searchChallenges(q, park: park, viewer: me.id, limit: try request.pageLimit(), offset: offset)
        return self.listResponse(views)
    }

    @Sendable func trending(_ request: Request, context: AppRequestContext) async throws -> ChallengeListResponse {
        let me = try context.requireIdentity()
        let since = self.now().addingTimeInterval(-Self.trendingWindow)
        return self.listResponse(try await self.store.trendingChallenges(since: since, viewer: me.id, limit: try request.pageLimit()))
    }

    @Sendable func show(_ request: Request, context: AppRequestContext) async throws -> ChallengeWire {
        let me = try context.requireIdentity()
        guard let view = try await self.store.challenge(try Self.challengeID(context), viewer: me.id) else { throw ChallengeError.noSuchChallenge }
        return ChallengeWire(view, now: self.now())
    }

    @Sendable func edit(_ request: Request, context: AppRequestContext) async throws -> ChallengeWire {
        let me = try context.requireIdentity()
        let id = try Self.challengeID(context)
        let change = try (try await Self.decode(ChallengePatchBody.self, request)).change().get()
        let view = change.end
            ? try await self.store.endChallenge(id, author: me.id, timeToLive: self.challenges.timeToLive)
            : try await self.store.editChallenge(id, author: me.id, name: change.name, description: change.description)
        return ChallengeWire(view, now: self.now())
    }

    @Sendable func delete(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        let me = try context.requireIdentity()
        try await self.store.deleteChallenge(try Self.challengeID(context), author: me.id)
        return .noContent
    }

    // MARK: Membership

    @Sendable func invite(_ request: Request, context: AppRequestContext) async throws -> InvitationsResponse {
        let me = try context.requireIdentity()
        let id = try Self.challengeID(context)
        let users = try (try await Self.decode(InvitationsBody.self, request)).users(rules: self.rules).get()
        try self.challenges.invitations.take(me.id, what: "challenge invitation")
        let invited = try await self.store.invite(id, author: me.id, users: users)
        return InvitationsResponse(invited: invited.map(UserWire.init))
    }

    @Sendable func join(_ request: Request, context: AppRequestContext) async throws -> ChallengeWire {
        let me = try context.requireIdentity()
        let view = try await self.store.join(try Self.challengeID(context), user: me.id, rules: self.rules)
        return ChallengeWire(view, now: self.now())
    }

    @Sendable func decline(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        let me = try context.requireIdentity()
        try await self.store.decline(try Self.challengeID(context), user: me.id)
        return .noContent
    }

    @Sendable func leave(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        let me = try context.requireIdentity()
        try await self.store.leave(try Self.challengeID(context), user: me.id)
        return .noContent
    }

    // MARK: Ranking and entries

    @Sendable func ranking(_ request: Request, context: AppRequestContext) async throws -> ChallengeRankingResponse {
        let me = try context.requireIdentity()
        let id = try Self.challengeID(context)
        let limit = try request.pageLimit()
        let offset = try Self.offset(request)
        guard let ranking = try await self.store.ranking(id, viewer: me.id, limit: limit, offset: offset) else { throw ChallengeError.noSuchChallenge }
        return ChallengeRankingResponse(ranking, now: self.now())
    }

    @Sendable func addEntry(_ request: Request, context: AppRequestContext) async throws -> EditedResponse<ChallengeEntryResponse> {
        let me = try context.requireIdentity()
        let id = try Self.challengeID(context)
        let body = try (try await Self.decode(ChallengeEntryBody.self, request)).checked(rules: self.rules).get()
        try self.challenges.entries.take(me.id, what: "challenge entry")
        let (entry, move) = try await self.store.addEntry(id, user: me.id, amount: body.amount, note: body.note, photo: body.photoId, rules: self.rules)
        await self.challenges.entryMoved(move)
        return EditedResponse(status: .created, response: ChallengeEntryResponse(entry: ChallengeEntryWire(entry), progress: move.progress, rank: move.rank))
    }

    @Sendable func deleteEntry(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        let me = try context.requireIdentity()
        let id = try Self.challengeID(context)
        let entry = try context.positiveID("entryId", "an entry's id")
        let move = try await self.store.deleteEntry(id, entry: entry, user: me.id)
        await self.challenges.entryMoved(move)
        return .noContent
    }

    @Sendable func gallery(_ request: Request, context: AppRequestContext) async throws -> ChallengeGalleryResponse {
        let me = try context.requireIdentity()
        let id = try Self.challengeID(context)
        let (limit, before) = try request.paging()
        guard let entries = try await self.store.gallery(id, viewer: me.id, limit: limit, before: before) else { throw ChallengeError.noSuchChallenge }
        return ChallengeGalleryResponse(entries: entries.map(ChallengeEntryWire.init))
    }

    @Sendable func like(_ request: Request, context: AppRequestContext) async throws -> ChallengeWire {
        try await self.setLike(true, context)
    }

    @Sendable func unlike(_ request: Request, context: AppRequestContext) async throws -> ChallengeWire {
        try await self.setLike(false, context)
    }

    private func setLike(_ liked: Bool, _ context: AppRequestContext) async throws -> ChallengeWire {
        let me = try context.requireIdentity()
        let id = try Self.challengeID(context)
        try self.challenges.likes.take(me.id, what: "challenge like")
        return ChallengeWire(try await self.store.setChallengeLike(id, user: me.id, liked: liked), now: self.now())
    }

    // MARK: Helpers

    /// `offset`, 0…100000 (0 unless given): each skipped line costs the server a step.
    static func offset(_ request: Request) throws -> Int {
        guard let text = request.uri.queryParameters["offset"] else { return 0 }
        guard let n = Int(text), (0...100_000).contains(n) else { throw Problem.invalidParameter("offset", "a whole number in 0…100000") }
        return n
    }

    private func listResponse(_ views: [ChallengeView]) -> ChallengeListResponse {
        let now = self.now()
        return ChallengeListResponse(challenges: views.map { ChallengeWire($0, now: now) })
    }
}
