import CoasterCore
import CoasterHTTP
import CoasterService
import CoasterStore
import Foundation
import HTTPTypes
import Hummingbird
import NIOPosix

/// Photos, friends' profiles, leaderboards, badges and messages.
struct SocialController {
    let store: any Store
    let people: People
    let live: Live
    let policy: LocationPolicy
    let rates: RequestRates
    /// Leaderboard pages per user: each page is a measurement of everyone on it.
    let leaderboardRates: RequestRates
    let cursors: CursorSeal
    let now: @Sendable () -> Date
    /// Largest photo upload, bytes.
    static let maximumPhotoBytes = 10 << 20

    var endpoints: RouteCollection<AppRequestContext> {
        let routes = RouteCollection(context: AppRequestContext.self)
        routes.post("me/photos", use: self.upload)
        routes.get("me/photos", use: self.myPhotos)
        routes.put("me/photo", use: self.setProfilePhoto)
        routes.delete("me/photo", use: self.clearProfilePhoto)
        routes.get("photos/{photoId}", use: self.photoBytes)
        routes.delete("photos/{photoId}", use: self.deletePhoto)
        routes.get("users/{userId}", use: self.profile)
        routes.get("users/{userId}/photos", use: self.userPhotos)
        routes.get("users/{userId}/rides", use: self.userRides)
        routes.get("me/badges", use: self.myBadges)
        routes.get("leaderboards/{metric}", use: self.leaderboard)
        routes.get("messages", use: self.conversations)
        routes.get("messages/{userId}", use: self.conversation)
        routes.post("messages/{userId}", use: self.send)
        routes.post("messages/{userId}/read", use: self.markRead)
        return routes
    }

    // MARK: Photos

    @Sendable func upload(_ request: Request, context: AppRequestContext) async throws -> EditedResponse<PhotoWire> {
        let me = try context.requireIdentity()
        let body = try await request.body.collect(upTo: Self.maximumPhotoBytes)
        let query = request.uri.queryParameters
        let caption = query["caption"].map(String.init)
        if let caption, TextLimits.caption.violation(caption) != nil { throw Problem.invalidParameter("caption", TextLimits.caption.rule) }
        let park = try query["park"].map { text -> ParkID in
            guard Slug.isValid(String(text)) else { throw Problem.invalidParameter("park", "a park id") }
            return ParkID(rawValue: String(text))
        }
        let ride = query["ride"].map { RideID(rawValue: String($0)) }
        // On the thread pool, never an event loop: inspection is linear in the upload's size,
        // but ten megabytes of it is still milliseconds that every connection of the loop would
        // wait out.
        let bytes = Array(body.readableBytesView)
        let inspected = try await NIOThreadPool.singleton.runIfActive { () -> Result<InspectedImage, ImageRefusal> in
            Result { () throws(ImageRefusal) in try ImageInspector.inspect(bytes) }
        }
        let image: InspectedImage
        switch inspected {
        case .success(let inspected):
            image = inspected
        case .failure(.notAnImage):
            throw Problem(.unsupportedMediaType, status: .unsupportedMediaType, title: "Not an image",
                          detail: "Photos are JPEG, PNG or HEIC, judged by their bytes, whatever the Content-Type says.")
        case .failure(let error):
            var p = Problem(.invalidPhoto, status: .unprocessableContent, title: "Photo refused", detail: error.description)
            if case .embeddedLocation = error { p.reason = "embedded_location" }
            throw p
        }
        let sha = sha256Hex(image.bytes)
        let photo = try await self.store.addPhoto(owner: me.id, image: image, sha256: sha, caption: caption, park: park, ride: ride)
        return EditedResponse(status: .created, headers: [.location: "/v1/photos/\(photo.id)"], response: PhotoWire(photo, stripped: image.stripped))
    }

    @Sendable func myPhotos(_ request: Request, context: AppRequestContext) async throws -> PhotoListResponse {
        let me = try context.requireIdentity()
        let (limit, before) = try request.paging()
        let photos = try await self.store.photos(of: me.id, viewer: me.id, limit: limit, before: before) ?? []
        return PhotoListResponse(photos: photos.map { PhotoWire($0) })
    }

    @Sendable func userPhotos(_ request: Request, context: AppRequestContext) async throws -> PhotoListResponse {
        let me = try context.requireIdentity()
        let them = try FriendsController.userID(context)
        let (limit, before) = try request.paging()
        guard let photos = try await self.store.photos(of: them, viewer: me.id, limit: limit, before: before) else { throw FriendshipError.noSuchUser }
        return PhotoListResponse(photos: photos.map { PhotoWire($0) })
    }

    /// The bytes, to the owner and their friends only, with a strong ETag (the content hash).
    @Sendable func photoBytes(_ request: Request, context: AppRequestContext) async throws -> Response {
        let me = try context.requireIdentity()
        let photo = try await self.visiblePhoto(context, viewer: me.id)
        let etag = "\"\(photo.sha256)\""
        var headers: HTTPFields = [.eTag: etag, .cacheControl: "private, max-age=31536000, immutable", .contentType: photo.format.contentType]
        if request.hasCurrentCopy(etag) {
            return Response(status: .notModified, headers: headers)
        }
        let data = try self.store.photoBytes(photo)
        headers[.contentLength] = String(data.count)
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    @Sendable func deletePhoto(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        let me = try context.requireIdentity()
        let id = try Self.photoID(context)
        do {
            try await self.store.deletePhoto(id, owner: me.id)
        } catch PhotoError.noSuchPhoto {
            // A friend's photo the caller may see: theirs to delete, not the caller's. Anything
            // else stays "no such photo", so ids cannot be probed.
            guard try await self.store.photo(id, viewer: me.id) != nil else { throw PhotoError.noSuchPhoto }
            throw Problem(.forbidden, status: .forbidden, title: "Not your photo", detail: "Only its owner may delete a photo.")
        }
        return .noContent
    }

    struct ProfilePhotoBody: Decodable { var photoId: Int64 }

    @Sendable func setProfilePhoto(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        let me = try context.requireIdentity()
        let body = try await request.decodeJSON(as: ProfilePhotoBody.self, context: context)
        try await self.store.setProfilePhoto(body.photoId, owner: me.id)
        return .noContent
    }

    @Sendable func clearProfilePhoto(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        try await self.store.setProfilePhoto(nil, owner: try context.requireIdentity().id)
        return .noContent
    }

    static func photoID(_ context: AppRequestContext) throws -> Int64 {
        try context.positiveID("photoId", "a photo's id")
    }

    /// A photo the viewer owns or a friend owns; anything else is "no such photo".
    func visiblePhoto(_ context: AppRequestContext, viewer: UserID) async throws -> Photo {
        guard let photo = try await self.store.photo(try Self.photoID(context), viewer: viewer) else { throw PhotoError.noSuchPhoto }
        return photo
    }

    // MARK: Profiles

    /// One read of the store (it read four times, relationship, user, statistics and badges, the
    /// rider's facts twice among them).
    @Sendable func profile(_ request: Request, context: AppRequestContext) async throws -> FriendProfileResponse {
        let me = try context.requireIdentity()
        let them = try FriendsController.userID(context)
        guard let page = try await self.store.profilePage(of: them, viewer: me.id, privacy: self.policy.privacy) else { throw FriendshipError.noSuchUser }
        let stats = page.stats
        // A badge is earned by a ride or a visit, at its time: to anyone else it is shown once that
        // time says nothing of where its earner is now (the rule of every revealed place).
        let now = self.now()
        let badges = them == me.id ? page.badges : page.badges.filter { self.policy.privacy.revealsPlace(at: $0.earnedAt, now: now) }
        return FriendProfileResponse(
            user: UserWire(page.summary), bio: page.bio, description: page.bio, status: page.card.status.map(StatusWire.init),
            homePark: page.card.homePark.map(CatalogParkWire.init), favouriteRides: page.card.favouriteRides.map(CatalogRideWire.init),
            photo: page.photo.map { "/v1/photos/\($0)" }, stats: RiderStatsResponse(stats),
            badges: badges.map { BadgeWire(badge: $0.badge, earnedAt: $0.earnedAt, progress: 1) },
            followers: page.follows.followers, following: page.follows.following, followedByYou: page.followedByViewer)
    }

    /// A friend's ride log. Rides from the last two hours say where the friend is now, so they are
    /// shown only to a viewer who may see the friend's exact position.
    @Sendable func userRides(_ request: Request, context: AppRequestContext) async throws -> RideHistoryResponse {
        let me = try context.requireIdentity()
        let them = try FriendsController.userID(context)
        let (limit, before) = try request.paging()
        guard var rides = try await self.store.rideHistory(of: them, viewer: me.id, limit: limit, before: before) else { throw FriendshipError.noSuchUser }
        if them != me.id {
            let now = self.now()
            let friend = try await self.people.person(loading: them)
            let visiting = friend?.visiting(at: now, timeout: self.policy.checkins.visitTimeout) ?? []
            // Without a position (none yet, or gone), nothing says the friend may be seen exactly.
            let view = friend.flatMap { f in
                f.latest.flatMap { self.policy.privacy.view($0, sharing: f.sharing, visiting: visiting, viewerVisiting: [], viewer: me.id,
                                                            relationship: .friends, now: now) }
            }
            let exact: Bool = if case .exact? = view { true } else { false }
            if !exact {
                rides.removeAll { !self.policy.privacy.revealsPlace(at: $0.riddenAt, now: now) }
            }
        }
        return RideHistoryResponse(rides: rides.map(RideLogWire.init))
    }

    @Sendable func myBadges(_ request: Request, context: AppRequestContext) async throws -> BadgesResponse {
        let (earned, facts) = try await self.store.badges(of: try context.requireIdentity().id)
        let have = Set(earned.map(\.badge.id))
        return BadgesResponse(
            earned: earned.map { BadgeWire(badge: $0.badge, earnedAt: $0.earnedAt, progress: 1) },
            available: Badge.all.filter { !have.contains($0.id) }.map { BadgeWire(badge: $0, earnedAt: nil, progress: $0.progress(facts)) })
    }

    // MARK: Leaderboards

    @Sendable func leaderboard(_ request: Request, context: AppRequestContext) async throws -> LeaderboardResponse {
        let me = try context.requireIdentity()
        try self.leaderboardRates.take(me.id, what: "leaderboard")
        let query = request.uri.queryParameters
        let metric: LeaderboardQuery.Metric
        switch try context.parameters.require("metric") {
        case "rides": metric = .rides
        case "credits": metric = .credits
        case "ride":
            guard let ride = query["ride"] else { throw Problem.invalidParameter("ride", "the ride leaderboard needs ?ride=<rideId>") }
            metric = .ride(RideID(rawValue: String(ride)))
        default: throw Problem.notFound("Leaderboards are rides, credits and ride.")
        }
        let scope: LeaderboardQuery.Scope
        switch query["scope"].map(String.init) ?? "global" {
        case "global": scope = .global
        case "friends": scope = .friends
        case "park":
            guard let park = query["park"], Slug.isValid(String(park)) else { throw Problem.invalidParameter("park", "scope=park needs ?park=<parkId>") }
            scope = .park(ParkID(rawValue: String(park)))
        default: throw Problem.invalidParameter("scope", "one of global, friends, park")
        }
        guard let window = LeaderboardQuery.Window(rawValue: query["window"].map(String.init) ?? "all-time") else {
            throw Problem.invalidParameter("window", "one of all-time, year, week")
        }
        var offset = 0
        if let text = query["offset"] {
            guard let n = Int(text), (0...100_000).contains(n) else { throw Problem.invalidParameter("offset", "0…100000") }
            offset = n
        }
        // A page after a place costs its length however deep; an offset walks every entry before it.
        if query["after"] != nil, query["offset"] != nil { throw Problem.invalidParameter("after", "give offset or after, not both") }
        // Sealed: a place holds when its rider last rode, which no reader may see.
        let after = try request.pageAfter { self.cursors.open($0).flatMap(LeaderboardPosition.init(cursor:)) }
        let limit = try request.pageLimit()
        let (entries, mine) = try await self.store.leaderboard(LeaderboardQuery(metric: metric, scope: scope, window: window), viewer: me.id,
                                                               limit: limit, offset: offset, after: after)
        return LeaderboardResponse(entries: entries.map(LeaderboardResponse.Entry.init), me: mine.map(LeaderboardResponse.Entry.init),
                                   next: entries.count == limit ? entries.last.map { self.cursors.seal($0.position.cursor) } : nil)
    }

    // MARK: Messages

    struct MessageBody: Decodable { var body: String }

    @Sendable func send(_ request: Request, context: AppRequestContext) async throws -> EditedResponse<MessageWire> {
        let me = try context.requireIdentity()
        let to = try FriendsController.userID(context)
        try self.rates.take(me.id, what: "message")
        let sent = try await request.decodeJSON(as: MessageBody.self, context: context).body
        // Bytes first: trimming walks the whole text.
        guard sent.utf8.count <= 2 * TextLimits.message.bytes else { throw Problem.invalidField("/body", "a message has \(TextLimits.message.rule)") }
        let body = sent.trimmingCharacters(in: .whitespacesAndNewlines)
        guard TextLimits.message.violation(body) == nil else { throw Problem.invalidField("/body", "a message has \(TextLimits.message.rule)") }
        let message = try await self.store.sendMessage(from: me.id, to: to, body: body)
        self.live.messageSent(message, from: me)
        return EditedResponse(status: .created, response: MessageWire(message))
    }

    @Sendable func conversations(_ request: Request, context: AppRequestContext) async throws -> ConversationListResponse {
        let me = try context.requireIdentity()
        let (limit, before) = try request.paging()
        let list = try await self.store.conversations(of: me.id, limit: limit, before: before)
        return ConversationListResponse(conversations: list.map { .init(user: UserWire($0.with), last: MessageWire($0.last), unread: $0.unread) })
    }

    @Sendable func conversation(_ request: Request, context: AppRequestContext) async throws -> MessageListResponse {
        let me = try context.requireIdentity()
        let other = try FriendsController.userID(context)
        let (limit, before) = try request.paging()
        guard let page = try await self.store.messages(of: me.id, with: other, limit: limit, before: before) else { throw FriendshipError.noSuchUser }
        return MessageListResponse(messages: page.map(MessageWire.init))
    }

    @Sendable func markRead(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        try await self.store.markRead(of: try context.requireIdentity().id, from: try FriendsController.userID(context))
        return .noContent
    }
}
