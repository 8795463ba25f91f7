import CoasterCore
import CoasterHTTP
import CoasterService
import CoasterStore
import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// OwnTracks HTTP mode, so the OwnTracks apps work unchanged: `POST /owntracks` with the account's
/// credentials as HTTP Basic auth.
///
/// Identity comes from the credentials only, never from `X-Limit-U`, `X-Limit-D` or a topic.
/// Locations go through the same fix pipeline as `POST /v1/fixes`; region transitions are recorded.
/// The answer is a JSON array: the caller's own location and each friend's, as the privacy rules
/// allow, with `card` objects carrying names. The apps drop a message on 4xx and retry 5xx
/// forever, so a malformed or unsupported body gets `200 []` and is stored nowhere.
struct OwnTracksController {
    let store: any Store
    let fences: Fences
    let sessions: Sessions
    let people: People
    let recorder: FixRecorder
    let policy: LocationPolicy
    let rates: RequestRates
    let now: @Sendable () -> Date

    var endpoints: RouteCollection<AppRequestContext> {
        let routes = RouteCollection(context: AppRequestContext.self)
        routes.post("owntracks", use: self.post)
        return routes
    }

    @Sendable func post(_ request: Request, context: AppRequestContext) async throws -> Response {
        let me = try await self.authenticate(request, context: context)
        let body = try await request.body.collect(upTo: 1 << 20)
        let messages: [OwnTracksMessage]
        switch OwnTracksPayload.decode(Data(body.readableBytesView)) {
        case .success(let decoded):
            messages = decoded
        case .failure(let malformed):
            context.logger.debug("owntracks: malformed payload ignored", metadata: ["reason": "\(malformed)"])
            return Self.json([])
        }
        // As `POST /v1/fixes`: at most a batch's worth of messages, and one request's token of
        // the fix rate for any that is stored (transitions too).
        guard messages.count <= self.policy.maximumBatch else {
            throw Problem(.payloadTooLarge, status: .contentTooLarge, title: "Too many messages",
                          detail: "At most \(self.policy.maximumBatch) OwnTracks messages a request; this one has \(messages.count).")
        }
        if messages.contains(where: { if case .unsupported = $0 { false } else { true } }) {
            try self.rates.take(me.id, what: "fix")
        }
        var fixes: [IncomingFix] = []
        var acted = false
        for message in messages {
            switch message {
            case .location(let lat, let lon, let at, let acc, let alt, let vel):
                // OwnTracks sends -1 (or nothing) when it has no accuracy: the pipeline refuses those.
                fixes.append(IncomingFix(lat: lat, lon: lon, accuracy: acc.flatMap { $0 >= 0 ? $0 : nil }, recordedAt: at,
                                         speed: vel.map { $0 / 3.6 }, altitude: alt))
                acted = true
            case .transition(let event, let lat, let lon, let acc, let at, let region, let regionID):
                guard let position = try? Coordinate.validated(lat: lat, lon: lon) else { continue }
                try await self.store.recordOwnTracksTransition(user: me.id, event: event, region: region, regionID: regionID,
                                                               position: position, accuracy: acc, at: at)
                acted = true
            case .unsupported:
                continue
            }
        }
        guard acted else { return Self.json([]) }
        if !fixes.isEmpty {
            _ = try await self.recorder.record(fixes, for: me.id, source: .owntracks)
        }
        return Self.json(try await self.locations(for: me))
    }

    /// The caller's own location and their friends', as OwnTracks location and card objects.
    func locations(for me: Identity) async throws -> [[String: Any]] {
        let now = self.now()
        // From the in-memory directory, like nearby and live: no database read on this path.
        guard let mutual = try await self.people.friends(of: me.id) else { return [] }
        let friends = mutual.people
        let own = mutual.viewer.latest
        let tids = TrackerIDs.assign([me.username] + friends.map(\.username))
        var out: [[String: Any]] = []
        if let own, now.timeIntervalSince(own.recordedAt) <= self.policy.privacy.timeToLive {
            out.append(Self.location(own.position, accuracy: own.accuracy, at: own.recordedAt, tid: tids[0], username: me.username))
        }
        let index = self.fences.index
        let mine = mutual.viewer.visiting(at: now, timeout: self.policy.checkins.visitTimeout)
        for (friend, tid) in zip(friends, tids.dropFirst()) {
            let visiting = friend.visiting(at: now, timeout: self.policy.checkins.visitTimeout)
            let shared = self.policy.privacy.view(friend.latest, sharing: friend.sharing, visiting: visiting, viewerVisiting: mine,
                                                  viewer: me.id, relationship: .friends, now: now)
            guard let shared, let fix = friend.latest else { continue }
            switch shared {
            case .exact(let c, let acc), .approximate(let c, let acc):
                out.append(Self.location(c, accuracy: acc, at: fix.recordedAt, tid: tid, username: friend.username))
            case .parkOnly(let parks):
                // Only the park: its centre, with an accuracy covering the whole park.
                guard let park = parks.sorted().first, let box = index.park(park)?.bounds else { continue }
                let radius = Geodesy.distance(box.center, Coordinate(lat: box.maxLat, lon: box.maxLon))
                out.append(Self.location(box.center, accuracy: radius, at: fix.recordedAt, tid: tid, username: friend.username))
            }
            out.append(["_type": "card", "name": friend.displayName, "tid": tid, "topic": Self.topic(friend.username)])
        }
        return out
    }

    private func authenticate(_ request: Request, context: AppRequestContext) async throws -> Identity {
        guard let header = request.headers[.authorization], header.lowercased().hasPrefix("basic "),
              let decoded = Data(base64Encoded: String(header.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
              let text = String(data: decoded, encoding: .utf8), let colon = text.firstIndex(of: ":")
        else { throw Self.unauthorized() }
        let username = String(text[..<colon])
        let password = String(text[text.index(after: colon)...])
        switch try await self.sessions.verify(username: username, password: password, clientAddress: context.clientAddress) {
        case .success(_, let identity, _): return identity
        case .invalidCredentials: throw Self.unauthorized()
        case .throttled(let wait): throw Problem.tooManyRequests("Too many failed logins; try again later.", retryAfter: wait)
        }
    }

    static func unauthorized() -> Problem {
        var problem = Problem.unauthorized("Send the account's username and password as HTTP Basic credentials.")
        problem.headers[.wwwAuthenticate] = "Basic realm=\"coasterlife\""
        return problem
    }

    static func topic(_ username: String) -> String { "owntracks/\(username)/coasterlife" }

    static func location(_ c: Coordinate, accuracy: Double, at: Date, tid: String, username: String) -> [String: Any] {
        ["_type": "location", "lat": c.lat, "lon": c.lon, "acc": Int(accuracy.rounded(.up)), "tst": Int(at.timeIntervalSince1970),
         "tid": tid, "topic": Self.topic(username)]
    }

    static func json(_ objects: [[String: Any]]) -> Response {
        let data = (try? JSONSerialization.data(withJSONObject: objects, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("[]".utf8)
        return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
