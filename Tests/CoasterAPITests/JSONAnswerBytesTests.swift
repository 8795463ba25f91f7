@testable import CoasterAPI
@testable import CoasterCore
import CoasterHTTP
@testable import CoasterStore
import Foundation
import NIOCore
import Testing

/// The exact bytes of the list answers, both ways they are written (the writer the route uses and
/// the shared `JSONEncoder`), against literals: a change to how an answer's members are listed
/// or written cannot change what clients read unnoticed.
@Suite("JSON answer bytes")
struct JSONAnswerBytesTests {
    static let at = Date(timeIntervalSince1970: 1_781_092_800.75)

    func expect(_ value: some Encodable & JSONWritable, _ expected: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(String(buffer: value.jsonBuffer) == expected, sourceLocation: sourceLocation)
        #expect(String(decoding: try AppRequestContext.encoder.encode(value), as: UTF8.self) == expected, sourceLocation: sourceLocation)
    }

    @Test func rideList() throws {
        var bare = RideWire(Ride(id: RideID(rawValue: "p.r"), park: ParkID(rawValue: "p"), name: "R", type: .other, status: .closed), zone: nil)
        bare.cycleSeconds = 90
        var full = bare
        full.name = "Q \"x\" / é"
        full.land = "L"
        full.minHeightCm = 0
        full.aloneHeightCm = 120
        full.maxHeightCm = 195
        full.myCount = 3
        full.note = "n"
        full.zone = ZoneID(rawValue: "p.r")
        full.stats = .init(heightM: 93.3, speedKmh: 149.7, lengthM: 2_010.0, inversions: 0, manufacturer: "Intamin", model: "Giga",
                           opened: 2000, material: "steel", source: "https://example.com/mf")
        try self.expect(RideListResponse(park: ParkID(rawValue: "p"), rides: [bare, full]),
                        #"{"park":"p","rides":[{"cycleSeconds":90,"id":"p.r","name":"R","status":"closed","type":"other"},"#
                            + #"{"aloneHeightCm":120,"cycleSeconds":90,"id":"p.r","land":"L","maxHeightCm":195,"minHeightCm":0,"myCount":3,"#
                            + #""name":"Q \"x\" / é","note":"n","stats":{"heightM":93.3,"inversions":0,"lengthM":2010,"manufacturer":"Intamin","#
                            + #""material":"steel","model":"Giga","opened":2000,"source":"https://example.com/mf","speedKmh":149.7},"#
                            + #""status":"closed","type":"other","zone":"p.r"}]}"#)
        try self.expect(RideListResponse(park: ParkID(rawValue: "p"), rides: []), #"{"park":"p","rides":[]}"#)
        // The park file's snake_case names for the same stats.
        let stats = try ParkFile.encoder.encode(full.stats)
        #expect(String(decoding: stats, as: UTF8.self)
            == #"{"height_m":93.3,"inversions":0,"length_m":2010,"manufacturer":"Intamin","material":"steel","model":"Giga","opened":2000,"#
            + #""source":"https://example.com/mf","speed_kmh":149.7}"#)
    }

    @Test func waitHistory() throws {
        let buckets: [WaitHistoryResponse.Bucket] = [
            .init(start: Self.at, reports: 0, reportedMedian: nil, posted: nil),
            .init(start: Self.at.addingTimeInterval(900), reports: 4, reportedMedian: 12.5, posted: 20),
        ]
        try self.expect(WaitHistoryResponse(ride: RideID(rawValue: "p.r"), bucketSeconds: 900, buckets: buckets),
                        #"{"bucketSeconds":900,"buckets":[{"reports":0,"start":"2026-06-10T12:00:00Z"},"#
                            + #"{"posted":20,"reportedMedian":12.5,"reports":4,"start":"2026-06-10T12:15:00Z"}],"ride":"p.r"}"#)
    }

    @Test func leaderboard() throws {
        let ann = UserSummary(id: UserID(3), username: "ann", displayName: "Ann \"A\"")
        let first = LeaderboardResponse.Entry(LeaderboardEntry(rank: 1, user: ann, value: 40, reachedAt: 1))
        try self.expect(LeaderboardResponse(entries: [first], me: first, next: "12_1.5_42"),
                        #"{"entries":[{"rank":1,"user":{"displayName":"Ann \"A\"","id":3,"username":"ann"},"value":40}],"#
                            + #""me":{"rank":1,"user":{"displayName":"Ann \"A\"","id":3,"username":"ann"},"value":40},"next":"12_1.5_42"}"#)
        try self.expect(LeaderboardResponse(entries: [], me: nil, next: nil), #"{"entries":[]}"#)
    }

    @Test func messagesAndConversations() throws {
        let unread = MessageWire(Message(id: 7, sender: UserID(1), recipient: UserID(2), body: "hi\n\"you\"", sentAt: Self.at, readAt: nil))
        let read = MessageWire(Message(id: 8, sender: UserID(2), recipient: UserID(1), body: "", sentAt: Self.at,
                                       readAt: Self.at.addingTimeInterval(60)))
        let unreadJSON = #"{"body":"hi\n\"you\"","from":1,"id":7,"sentAt":"2026-06-10T12:00:00Z","to":2}"#
        let readJSON = #"{"body":"","from":2,"id":8,"readAt":"2026-06-10T12:01:00Z","sentAt":"2026-06-10T12:00:00Z","to":1}"#
        try self.expect(MessageListResponse(messages: [unread, read]), #"{"messages":["# + unreadJSON + "," + readJSON + "]}")
        try self.expect(MessageListResponse(messages: []), #"{"messages":[]}"#)
        // A message alone, as `POST /v1/messages` answers it.
        #expect(String(decoding: try AppRequestContext.encoder.encode(read), as: UTF8.self) == readJSON)
        let bo = UserWire(id: UserID(2), username: "bo", displayName: "Bo")
        try self.expect(ConversationListResponse(conversations: [.init(user: bo, last: unread, unread: 1)]),
                        #"{"conversations":[{"last":"# + unreadJSON + #","unread":1,"user":{"displayName":"Bo","id":2,"username":"bo"}}]}"#)
        try self.expect(ConversationListResponse(conversations: []), #"{"conversations":[]}"#)
    }

    @Test func friendList() throws {
        let friends = [
            FriendWire(id: UserID(5), username: "cy", displayName: "Cy", since: Self.at, lastSeen: nil, online: false),
            FriendWire(id: UserID(6), username: "di", displayName: "D\\i", since: Self.at, lastSeen: Self.at.addingTimeInterval(59.9), online: true),
        ]
        try self.expect(FriendListResponse(friends: friends, next: "4369_cy"),
                        #"{"friends":[{"displayName":"Cy","id":5,"online":false,"since":"2026-06-10T12:00:00Z","username":"cy"},"#
                            + #"{"displayName":"D\\i","id":6,"lastSeen":"2026-06-10T12:01:00Z","online":true,"#
                            + #""since":"2026-06-10T12:00:00Z","username":"di"}],"next":"4369_cy"}"#)
        try self.expect(FriendListResponse(friends: []), #"{"friends":[]}"#)
    }
}
