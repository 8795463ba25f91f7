import CoasterCore
import CoasterStore
import Foundation
import Synchronization

/// Fans friends' location changes out to their friends' live connections (`GET /v1/live`), and a
/// park's wait and ride-status changes out to its visitors'.
///
/// Each connection has a bounded buffer. Publishing never waits: when a connection's buffer is
/// full its consumer is too slow, and it is dropped (its stream finishes, the socket closes), so a
/// stalled phone can never stall the fix pipeline.
public final class Live: Sendable {
    /// Messages a connection may have waiting before it is dropped.
    public static let bufferLimit = 64

    private struct Connection {
        var continuation: AsyncStream<String>.Continuation
        /// The session the socket was opened with: its revocation closes the socket.
        var tokenHash: Data?
    }

    /// What a connection's stream carries last when its session was revoked, before it finishes.
    public static let sessionEnded = "\u{0}session-ended"

    private let connections = Mutex<[UserID: [UUID: Connection]]>([:])
    private let people: People
    private let fences: Fences
    private let policy: LocationPolicy
    private let now: @Sendable () -> Date

    public init(people: People, fences: Fences, policy: LocationPolicy, now: @escaping @Sendable () -> Date) {
        self.people = people
        self.fences = fences
        self.policy = policy
        self.now = now
    }

    /// Opens a connection's stream, for a socket opened with the session of `tokenHash`.
    public func subscribe(_ user: UserID, tokenHash: Data? = nil) -> (UUID, AsyncStream<String>) {
        let id = UUID()
        let (stream, continuation) = AsyncStream<String>.makeStream(bufferingPolicy: .bufferingOldest(Self.bufferLimit))
        self.connections.withLock { $0[user, default: [:]][id] = Connection(continuation: continuation, tokenHash: tokenHash) }
        return (id, stream)
    }

    public func unsubscribe(_ user: UserID, _ id: UUID) {
        let continuation = self.connections.withLock { c -> AsyncStream<String>.Continuation? in
            let removed = c[user]?.removeValue(forKey: id)
            if c[user]?.isEmpty == true { c[user] = nil }
            return removed?.continuation
        }
        continuation?.finish()
    }

    /// Ends the sockets a revocation ends: those of one session, or all of a user's. Each is told
    /// why (``sessionEnded``) and then finishes, whatever it had waiting.
    public func revoke(_ revocation: Revocation) {
        let ended = self.connections.withLock { c -> [AsyncStream<String>.Continuation] in
            guard let mine = c[revocation.user] else { return [] }
            var ended: [AsyncStream<String>.Continuation] = []
            for (id, connection) in mine where revocation.tokenHash == nil || connection.tokenHash == revocation.tokenHash {
                c[revocation.user]?.removeValue(forKey: id)
                ended.append(connection.continuation)
            }
            if c[revocation.user]?.isEmpty == true { c[revocation.user] = nil }
            return ended
        }
        for continuation in ended {
            continuation.yield(Self.sessionEnded)
            continuation.finish()
        }
    }

    /// Live connections now.
    public var connectionCount: Int { self.connections.withLock { $0.values.reduce(0) { $0 + $1.count } } }

    /// Sends to every connection of `user`, dropping those that cannot keep up.
    public func send(_ message: String, to user: UserID, only connection: UUID? = nil) {
        let slow = self.connections.withLock { c -> [AsyncStream<String>.Continuation] in
            guard let mine = c[user] else { return [] }
            var dropped: [AsyncStream<String>.Continuation] = []
            for (id, open) in mine where connection == nil || id == connection {
                if case .dropped = open.continuation.yield(message) {
                    c[user]?.removeValue(forKey: id)
                    dropped.append(open.continuation)
                }
            }
            if c[user]?.isEmpty == true { c[user] = nil }
            return dropped
        }
        for continuation in slow { continuation.finish() }
    }

    /// For tests of back-pressure: a bare subscription and a bare send.
    public func subscribeForTesting(_ user: UserID) -> (UUID, AsyncStream<String>) { self.subscribe(user) }
    public func sendForTesting(_ message: String, to user: UserID) { self.send(message, to: user) }

    private func hasListeners(_ users: UserIDSet) -> Bool {
        self.connections.withLock { c in users.contains { c[$0] != nil } }
    }

    /// After a fix batch of `user`: their position and park transitions, to each friend who is
    /// listening, as that friend may see them.
    public func fixesRecorded(by user: UserID, _ batch: FixBatch) {
        guard let person = self.people.person(user), self.hasListeners(person.friends),
              batch.results.contains(where: { if case .accepted(true, _) = $0.decision { true } else { false } })
        else { return }
        let now = self.now()
        let index = self.fences.index
        let transitions = batch.results.flatMap { r -> [Transition] in
            if case .accepted(true, let t) = r.decision { return t.filter { $0.zone == nil } }
            return []
        }
        let visiting = person.visiting(at: now, timeout: self.policy.checkins.visitTimeout)
        let rules = NearbyRules(privacy: self.policy.privacy, visitTimeout: self.policy.checkins.visitTimeout)
        for friend in person.friends where !person.blocks.contains(friend) {
            guard let (shared, location) = self.location(of: person, visiting: visiting, to: friend, now: now, index: index, rules: rules)
            else { continue }
            // A transition names a park: told only to a friend who may see it (park-only sharing:
            // a friend visiting that park too).
            var messages: [LiveMessage] = transitions.compactMap {
                if case .parkOnly(let together) = shared, !together.contains($0.park) { return nil }
                return .transition(user: person, event: $0.event, park: $0.park, parkName: index.park($0.park)?.name ?? $0.park.rawValue, at: $0.at)
            }
            messages.append(location)
            for message in messages { self.send(message.json, to: friend) }
        }
    }

    /// `person`'s latest position as `viewer` may see it now, and the `location` message that says
    /// so: through ``LocationPrivacy/view(_:sharing:visiting:viewerVisiting:viewer:relationship:now:)``,
    /// named as friends nearby names it. `nil` when the viewer may see nothing.
    private func location(of person: PersonState, visiting: Set<ParkID>, to viewer: UserID, now: Date, index: FenceIndex,
                          rules: NearbyRules) -> (SharedLocation, LiveMessage)? {
        guard let fix = person.latest,
              let shared = self.policy.privacy.view(fix, sharing: person.sharing, visiting: visiting,
                                                    viewerVisiting: self.people.person(viewer)?.visiting(at: now, timeout: self.policy.checkins.visitTimeout) ?? [],
                                                    viewer: viewer, relationship: .friends, now: now)
        else { return nil }
        let place = rules.place(of: person, as: shared, now: now, index: index)
        return (shared, .location(user: person, shared: shared, at: fix.recordedAt,
                                  park: place.park.flatMap { NamedPlace.park($0, in: index) },
                                  zone: place.zone.flatMap { NamedPlace.zone(index.zoneID(at: $0), in: index) }))
    }

    /// What the map of `viewer`'s friends starts from (docs: Map, "Me and my friends"): for each
    /// friend whose position the viewer may see now, the `location` message `/v1/live` would send
    /// them, so that the page draws the first positions and the live ones by one rule.
    public func friendLocations(for viewer: UserID) -> [LiveMessage] {
        guard let me = self.people.person(viewer) else { return [] }
        let now = self.now(), index = self.fences.index
        let rules = NearbyRules(privacy: self.policy.privacy, visitTimeout: self.policy.checkins.visitTimeout)
        return me.friends.sorted { $0.rawValue < $1.rawValue }.compactMap { id in
            guard !me.blocks.contains(id), let friend = self.people.person(id), friend.friends.contains(viewer), !friend.blocks.contains(viewer)
            else { return nil }
            let visiting = friend.visiting(at: now, timeout: self.policy.checkins.visitTimeout)
            return self.location(of: friend, visiting: visiting, to: viewer, now: now, index: index, rules: rules)?.1
        }
    }
}

extension Live {
    /// The connected users on a visit to `park`: who hears of its waits and rides.
    private func listeners(visiting park: ParkID) -> [UserID] {
        // Ask about the connected users, not the park's visitors: a park has thousands of visitors
        // at a million users, and building that set on every report made reports 3x slower.
        let connected = self.connections.withLock { Array($0.keys) }
        return connected.filter { self.people.person($0)?.openVisits.includes(park) == true }
    }

    /// A ride's estimate changed: tell everyone listening who is visiting its park.
    public func waitChanged(_ row: WaitBoardRow) {
        let listeners = self.listeners(visiting: row.ride.park)
        guard !listeners.isEmpty else { return }
        let message = LiveMessage.wait(ride: row.ride.id, name: row.ride.name, estimate: row.estimate).json
        for user in listeners { self.send(message, to: user) }
    }

    /// `status` messages one write may send each listener. A posted feed can change every ride of
    /// a park at once (the park opens), and a message for each would fill a connection's buffer
    /// (``bufferLimit``) and drop it: past this many, the listener gets one `board` message instead.
    public static let statusBurstLimit = 16

    /// Rides of `park` changed their live status in one write (a report, or a posted feed): tell
    /// everyone listening who is visiting the park, as ``waitChanged(_:)`` tells them of waits.
    public func statusesChanged(_ changes: [RideStatusChange], in park: ParkID) {
        guard !changes.isEmpty else { return }
        let listeners = self.listeners(visiting: park)
        guard !listeners.isEmpty else { return }
        let messages = changes.count <= Self.statusBurstLimit
            ? changes.map { LiveMessage.status($0).json }
            : [LiveMessage.board(park: park, name: self.fences.index.park(park)?.name ?? park.rawValue, changedRides: changes.count,
                                 at: self.now()).json]
        for user in listeners {
            for message in messages { self.send(message, to: user) }
        }
    }
}

extension Live {
    /// A new direct message: to the recipient's live connections.
    public func messageSent(_ message: Message, from sender: Identity) {
        let object: [String: Any] = ["type": "message", "id": message.id, "from": ["id": sender.id.rawValue, "username": sender.username],
                                     "body": message.body, "sentAt": message.sentAt.formatted(.iso8601)]
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        self.send(String(decoding: data, as: UTF8.self), to: message.recipient)
    }
}

/// A park or a zone as answers and live messages name it.
public struct NamedPlace: Encodable, Hashable, Sendable {
    public var id: String
    public var name: String
    public var kind: ZoneKind?

    /// The park as answers name it, if `index` has it.
    public static func park(_ id: ParkID, in index: FenceIndex) -> NamedPlace? {
        index.park(id).map { NamedPlace(id: id.rawValue, name: $0.name, kind: nil) }
    }

    /// The zone as answers name it, if `index` has it.
    public static func zone(_ id: ZoneID, in index: FenceIndex) -> NamedPlace? {
        index.zone(id).map { NamedPlace(id: id.rawValue, name: $0.name, kind: $0.kind) }
    }
}

/// What `GET /v1/live` sends, one JSON object per text message (docs: NearbyAndPrivacy, "Live updates").
public enum LiveMessage {
    case hello(user: UserID, heartbeat: TimeInterval)
    case heartbeat(at: Date)
    /// `park` and `zone` as friends nearby shows them to this viewer (``NearbyRules/place(of:as:now:index:)``).
    case location(user: PersonState, shared: SharedLocation, at: Date, park: NamedPlace?, zone: NamedPlace?)
    case transition(user: PersonState, event: Transition.Event, park: ParkID, parkName: String, at: Date)
    case wait(ride: RideID, name: String, estimate: WaitEstimate)
    case status(RideStatusChange)
    /// Too many rides changed status at once to send each: read the park's board again.
    case board(park: ParkID, name: String, changedRides: Int, at: Date)
    /// A participant's progress and rank in a challenge: `own`, as they see it themselves; else as
    /// everyone else sees it (counted progress once older than the location time-to-live).
    case challenge(ChallengeMove, own: Bool)
    /// A change to a list the receiver follows, once others may see it (docs: Lists, "Live").
    case listChange(ListChange)

    public var json: String {
        var object: [String: Any]
        switch self {
        case .hello(let user, let heartbeat):
            object = ["type": "hello", "user": user.rawValue, "heartbeatSeconds": heartbeat]
        case .heartbeat(let at):
            object = ["type": "heartbeat", "at": at.formatted(.iso8601)]
        case .location(let user, let shared, let at, let park, let zone):
            object = ["type": "location", "user": Self.user(user), "at": at.formatted(.iso8601)]
            if let park { object["park"] = Self.place(park) }
            if let zone { object["zone"] = Self.place(zone) }
            switch shared {
            case .exact(let c, let acc):
                object.merge(["precision": "exact", "lat": c.lat, "lon": c.lon, "accuracy": acc]) { $1 }
            case .approximate(let c, let acc):
                object.merge(["precision": "approximate", "lat": c.lat, "lon": c.lon, "accuracy": acc.rounded()]) { $1 }
            case .parkOnly(let parks):
                object.merge(["precision": "park-only", "parks": parks.map(\.rawValue).sorted()]) { $1 }
            }
        case .wait(let ride, let name, let e):
            object = ["type": "wait", "ride": ["id": ride.rawValue, "name": name], "status": e.minutes == nil ? "unknown" : "estimated",
                      "reports": e.reports, "trustedReports": e.trustedReports]
            if let m = e.minutes, let low = e.low, let high = e.high { object.merge(["minutes": m, "low": low, "high": high]) { $1 } }
        case .status(let change):
            object = ["type": "status", "ride": ["id": change.ride.rawValue, "name": change.name], "status": change.current.status.rawValue,
                      "previous": change.previous.status.rawValue, "at": change.at.formatted(.iso8601)]
            if let source = change.current.source { object["source"] = source.rawValue }
        case .board(let park, let name, let changedRides, let at):
            object = ["type": "board", "park": ["id": park.rawValue, "name": name], "changedRides": changedRides, "at": at.formatted(.iso8601)]
        case .challenge(let move, let own):
            object = ["type": "challenge", "challenge": ["id": move.challenge, "name": move.name],
                      "user": ["id": move.user.id.rawValue, "username": move.user.username, "displayName": move.user.displayName],
                      "progress": own ? move.progress : move.shownProgress, "rank": own ? move.rank : move.shownRank]
        case .listChange(let change):
            object = Self.listChange(change)
            object["type"] = "list-change"
        case .transition(let user, let event, let park, let name, let at):
            object = ["type": "transition", "user": Self.user(user), "event": event.rawValue, "park": ["id": park.rawValue, "name": name],
                      "at": at.formatted(.iso8601)]
        }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// A list change as `GET /v1/lists/following/changes` writes one (the live message adds `type`).
    public static func listChange(_ change: ListChange) -> [String: Any] {
        var object: [String: Any] = [
            "id": change.id, "kind": change.kind.rawValue, "list": ["id": change.list, "title": change.listTitle],
            "owner": ["id": change.owner.id.rawValue, "username": change.owner.username, "displayName": change.owner.displayName],
            "item": ["id": change.item, "kind": change.target.kind, "targetId": change.target.id, "name": change.itemName],
            "at": change.at.formatted(.iso8601),
        ]
        if let source = change.source { object["how"] = source.rawValue }
        return object
    }

    private static func user(_ p: PersonState) -> [String: Any] {
        ["id": p.id.rawValue, "username": p.username, "displayName": p.displayName]
    }

    private static func place(_ p: NamedPlace) -> [String: Any] {
        var object: [String: Any] = ["id": p.id, "name": p.name]
        if let kind = p.kind { object["kind"] = kind.rawValue }
        return object
    }
}

extension Live {
    /// Whether `user` has a live connection now.
    public func isListening(_ user: UserID) -> Bool {
        self.connections.withLock { $0[user] != nil }
    }

    /// The users with a live connection now.
    public var listeningUsers: [UserID] {
        self.connections.withLock { Array($0.keys) }
    }

    /// Progress moved in challenges (an entry, or credits the settling sweep showed): to each mover
    /// their own progress and rank; to every other participant listening, the mover's progress and
    /// rank as everyone sees them. One store read per challenge, and none when no one listens.
    public func challengesMoved(_ moves: [ChallengeMove], store: any ChallengeStore) async throws {
        guard !moves.isEmpty else { return }
        self.ownProgress(moves)
        let listening = self.listeningUsers
        guard !listening.isEmpty else { return }
        var byChallenge: [Int64: [ChallengeMove]] = [:]
        for move in moves { byChallenge[move.challenge, default: []].append(move) }
        for (challenge, moved) in byChallenge.sorted(by: { $0.key < $1.key }) {
            let members = try await store.challengeMembers(challenge, among: listening)
            for move in moved {
                let message = LiveMessage.challenge(move, own: false).json
                for member in members where member != move.user.id { self.send(message, to: member) }
            }
        }
    }

    /// Changes that just became visible, each to its followers who listen here.
    public func listChanges(_ deliveries: [ListChangeDelivery]) {
        guard !deliveries.isEmpty else { return }
        for delivery in deliveries {
            let listening = delivery.followers.filter { self.isListening($0) }
            guard !listening.isEmpty else { continue }
            let message = LiveMessage.listChange(delivery.change).json
            for follower in listening { self.send(message, to: follower) }
        }
    }

    /// Each mover's own progress and rank, to their own connections only.
    public func ownProgress(_ moves: [ChallengeMove]) {
        for move in moves where self.isListening(move.user.id) {
            self.send(LiveMessage.challenge(move, own: true).json, to: move.user.id)
        }
    }
}
