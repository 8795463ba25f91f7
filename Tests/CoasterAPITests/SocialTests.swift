import CoasterAPI
import CoasterCore
import CoasterHTTP
@testable import CoasterStore
import CoasterService
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@Suite("Photos")
struct PhotoTests {
    static let data = TestService.repoRoot.appendingPathComponent("Tests/CoasterAPITests/Data")

    static func upload(_ client: some TestClientProtocol, _ file: String, as user: TestUser, query: String = "",
                       contentType: String = "application/octet-stream") async throws -> TestResponse {
        var headers = user.auth
        headers[.contentType] = contentType
        return try await client.execute(uri: "/v1/me/photos\(query)", method: .post, headers: headers,
                                        body: ByteBuffer(bytes: try Data(contentsOf: Self.data.appendingPathComponent(file))))
    }

    /// Every piece of GPS in the bytes: EXIF GPS tags, XMP GPS properties.
    static func hasLocation(_ bytes: Data) -> Bool {
        let b = [UInt8](bytes)
        let xmp = ImageInspectorProbe.contains(b, Array("GPSLatitude".utf8))
        let exifGPS = ImageInspectorProbe.contains(b, [0x25, 0x88]) || ImageInspectorProbe.contains(b, [0x88, 0x25])
        return xmp || exifGPS
    }

    @Test func aRealJPEGWithGPSComesBackWithoutIt() async throws {
        try await TestService.withApp { client in
            let ann = try await client.register("ann")
            let original = try Data(contentsOf: Self.data.appendingPathComponent("coaster-gps.jpg"))
            #expect(Self.hasLocation(original), "the fixture must carry GPS to prove anything")
            let response = try await Self.upload(client, "coaster-gps.jpg", as: ann, query: "?caption=Lift%20hill", contentType: "image/png")
            #expect(response.status == .created)
            let photo = try json(response.body)
            #expect(photo["contentType"] as? String == "image/jpeg")
            #expect(photo["width"] as? Int == 320 && photo["height"] as? Int == 240)
            #expect(photo["stripped"] as? Bool == true)
            #expect(photo["caption"] as? String == "Lift hill")
            let url = try #require(photo["url"] as? String)
            let fetched = try await client.execute(uri: url, method: .get, headers: ann.auth)
            #expect(fetched.status == .ok)
            #expect(fetched.headers[.contentType] == "image/jpeg")
            let bytes = Data(fetched.body.readableBytesView)
            #expect(!Self.hasLocation(bytes), "GPS survived the upload")
            #expect(bytes.starts(with: [0xFF, 0xD8, 0xFF]))
            // The orientation (6: rotate 90° clockwise) is kept so the photo still shows upright.
            #expect(ImageInspectorProbe.contains([UInt8](bytes), [0x12, 0x01, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x06, 0x00]))
            // Caching: a strong ETag; a revalidation with it is 304.
            let etag = try #require(fetched.headers[.eTag])
            #expect(fetched.headers[.cacheControl]?.contains("private") == true)
            var revalidate = ann.auth
            revalidate[.ifNoneMatch] = etag
            #expect(try await client.execute(uri: url, method: .get, headers: revalidate).status == .notModified)
        }
    }

    @Test func aPNGLosesItsEXIFChunkAndAHEICWithGPSIsRefused() async throws {
        try await TestService.withApp { client in
            let ann = try await client.register("ann")
            let png = try await Self.upload(client, "coaster.png", as: ann)
            #expect(png.status == .created)
            let url = try #require(try json(png.body)["url"] as? String)
            let bytes = Data(try await client.execute(uri: url, method: .get, headers: ann.auth).body.readableBytesView)
            #expect(!ImageInspectorProbe.contains([UInt8](bytes), Array("eXIf".utf8)))
            let heicWithGPS = try await Self.upload(client, "coaster-gps.heic", as: ann)
            #expect(try expectProblem(heicWithGPS, .unprocessableContent, .invalidPhoto)["reason"] as? String == "embedded_location")
            let heic = try await Self.upload(client, "coaster.heic", as: ann)
            #expect(heic.status == .created)
            #expect(try json(heic.body)["contentType"] as? String == "image/heic")
            let text = try await client.execute(uri: "/v1/me/photos", method: .post, headers: ann.auth, body: ByteBuffer(string: "GIF89a not really"))
            try expectProblem(text, .unsupportedMediaType, .unsupportedMediaType)
            let truncated = try Data(contentsOf: Self.data.appendingPathComponent("coaster-gps.jpg")).prefix(300)
            let broken = try await client.execute(uri: "/v1/me/photos", method: .post, headers: ann.auth, body: ByteBuffer(bytes: truncated))
            try expectProblem(broken, .unprocessableContent, .invalidPhoto)
        }
    }

    @Test func onlyTheOwnerAndFriendsSeeAPhotoAndDeletingRemovesTheFile() async throws {
        try await TestService.withService { service, client in
            let ann = try await client.register("ann")
            let bob = try await client.register("bob")
            let eve = try await client.register("eve")
            try await client.befriend(ann, bob)
            let photo = try json(try await Self.upload(client, "coaster.png", as: ann).body)
            let id = try #require(photo["id"] as? Int)
            #expect(try await client.get("/v1/photos/\(id)", as: bob).status == .ok)
            try expectProblem(try await client.get("/v1/photos/\(id)", as: eve), .notFound, .noSuchPhoto)
            #expect((try json(try await client.get("/v1/users/\(ann.id)/photos", as: bob).body)["photos"] as? [Any])?.count == 1)
            try expectProblem(try await client.get("/v1/users/\(ann.id)/photos", as: eve), .notFound, .noSuchUser)
            #expect(try await client.send(.put, "/v1/me/photo", as: ann, json: ["photoId": id]).status == .noContent)
            #expect((try json(try await client.get("/v1/users/\(ann.id)", as: bob).body)["photo"] as? String) == "/v1/photos/\(id)")
            try expectProblem(try await client.send(.put, "/v1/me/photo", as: bob, json: ["photoId": id]), .notFound, .noSuchPhoto)
            // Bob sees the photo, so is told it is not his; Eve, who does not, is told it does not exist.
            try expectProblem(try await client.send(.delete, "/v1/photos/\(id)", as: bob), .forbidden, .forbidden)
            try expectProblem(try await client.send(.delete, "/v1/photos/\(id)", as: eve), .notFound, .noSuchPhoto)

            let files = { () -> [String] in
                (FileManager.default.enumerator(atPath: service.service.store.photoDirectory.path)?.allObjects as? [String] ?? [])
                    .filter { $0.hasSuffix(".png") }
            }
            #expect(files().count == 1)
            #expect(try await client.send(.delete, "/v1/photos/\(id)", as: ann).status == .noContent)
            #expect(files().isEmpty)
            #expect((try json(try await client.get("/v1/users/\(ann.id)", as: bob).body)["photo"]) == nil)
        }
    }

    /// Files are shared by rows with the same bytes. Two people uploading the same picture and
    /// deleting it, at once and over and over: a photo whose upload was answered always has its
    /// file until its owner deletes it (the race to catch: a delete of the other row removing the
    /// file between an upload finding it and the upload's row committing), and once every row is
    /// gone, so is the file.
    @Test func sharedBytesUploadedAndDeletedAtOnceKeepTheirFile() async throws {
        try await TestService.withService { service, client in
            let people = [try await client.register("ann"), try await client.register("bob")]
            let store = service.service.store
            let problems = try await withThrowingTaskGroup(of: [String].self) { group in
                for person in people {
                    group.addTask {
                        var problems: [String] = []
                        for round in 0..<40 {
                            let photo = try json(try await Self.upload(client, "coaster.png", as: person).body)
                            let id = try #require(photo["id"] as? Int)
                            let sha = try #require(try await store.photo(Int64(id), viewer: UserID(rawValue: person.id))).sha256
                            let file = PhotoFiles.url(sha, .png, under: store.photoDirectory)
                            if !FileManager.default.fileExists(atPath: file.path) { problems.append("\(person.username), round \(round): no file") }
                            #expect(try await client.send(.delete, "/v1/photos/\(id)", as: person).status == .noContent)
                        }
                        return problems
                    }
                }
                return try await group.reduce([], +)
            }
            #expect(problems.isEmpty, "\(problems.count) answered uploads without their file: \(problems.prefix(5))")
            let left = FileManager.default.enumerator(atPath: store.photoDirectory.path)?.allObjects as? [String] ?? []
            #expect(left.filter { $0.hasSuffix(".png") }.isEmpty, "\(left)")
        }
    }

    /// A crash between writing a photo's file and committing its row leaves a file no row uses,
    /// and one during the write half a file: a server starting on the store removes both, and
    /// nothing else.
    @Test func aStartingServerRemovesWhatACrashedUploadLeft() async throws {
        let first = try await TestService()
        defer { first.remove() }
        let root = first.service.store.photoDirectory
        try await first.app().test(.router) { client in
            let ann = try await client.register("ann")
            #expect(try await Self.upload(client, "coaster.png", as: ann).status == .created)
        }
        let kept = FileManager.default.enumerator(atPath: root.path)?.allObjects as? [String] ?? []
        let photo = try #require(kept.first { $0.hasSuffix(".png") })
        let orphan = "ab/ab" + String(repeating: "0", count: 62) + ".jpg"
        let partial = "ab/.upload-0F8B2C5E-crashed"
        let foreign = "ab/notes.txt"
        try FileManager.default.createDirectory(at: root.appendingPathComponent("ab"), withIntermediateDirectories: true)
        for name in [orphan, partial, foreign] {
            #expect(FileManager.default.createFile(atPath: root.appendingPathComponent(name).path, contents: Data("x".utf8)))
        }
        first.close()
        let restarted = try await TestService(directory: first.directory)
        defer { restarted.close() }
        let now = Set(FileManager.default.enumerator(atPath: root.path)?.allObjects as? [String] ?? [])
        #expect(now.contains(photo), "the used photo's file went")
        #expect(!now.contains(orphan) && !now.contains(partial), "\(now.sorted())")
        #expect(now.contains(foreign), "a file the store did not name went")
        #expect(try await restarted.service.store.sweepPhotoFiles() == PhotoSweep(), "a second sweep found more")
    }

    @Test func tagsMustBeParksTheOwnerVisited() async throws {
        try await TestService.withApp { client in
            let ann = try await client.register("ann")
            let refused = try await Self.upload(client, "coaster.png", as: ann, query: "?park=cedar-point")
            try expectProblem(refused, .unprocessableContent, .photoTagNotVisited)
            _ = try await client.postFixes([fixJSON(41.4822, -82.6835, at: Date())], as: ann)
            let ok = try await Self.upload(client, "coaster.png", as: ann, query: "?ride=cedar-point.millennium-force")
            #expect(ok.status == .created)
            #expect(try json(ok.body)["park"] as? String == "cedar-point")
        }
    }
}

/// Byte search for tests.
enum ImageInspectorProbe {
    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { i in haystack[i] == needle[0] && Array(haystack[i..<(i + needle.count)]) == needle }
    }
}

@Suite("Friends' profiles, badges, leaderboards and messages")
struct SocialTests {
    static let station = Coordinate(lat: 41.481656, lon: -82.688132)

    /// Logs `count` rides of a ride, moving the clock past each cooldown.
    static func ride(_ client: some TestClientProtocol, _ user: TestUser, _ ride: String, times count: Int, clock: TestClock) async throws {
        for _ in 0..<count {
            let r = try await client.send(.post, "/v1/rides/\(ride)/rides", as: user)
            #expect(r.status == .created, "\(String(buffer: r.body))")
            clock.advance(301)
        }
    }

    /// A Wednesday noon (UTC): the test's two hours of rides stay in one ISO week and one year. From
    /// the real time it failed when run on a Sunday after 22:00 UTC (the weekly board then held
    /// only the rides after midnight).
    static let midweek = Date(timeIntervalSince1970: 1_781_092_800)  // 2026-06-10T12:00:00Z

    @Test func badgesLeaderboardsAndAFriendsProfile() async throws {
        let clock = TestClock(Self.midweek)
        try await TestService.withService(clock: clock) { s, client in
            let ann = try await client.register("ann")
            let bob = try await client.register("bob")
            let eve = try await client.register("eve")
            try await client.befriend(ann, bob)
            for user in [ann, bob, eve] {
                _ = try await client.postFixes([fixJSON(41.4822, -82.6835, at: clock.now())], as: user)
            }
            try await Self.ride(client, ann, "cedar-point.millennium-force", times: 10, clock: clock)
            try await Self.ride(client, bob, "cedar-point.gatekeeper", times: 2, clock: clock)
            // Eve rides while Bob walks the 700 m from Gatekeeper to Millennium Force.
            try await Self.ride(client, eve, "cedar-point.valravn", times: 12, clock: clock)
            try await Self.ride(client, bob, "cedar-point.millennium-force", times: 1, clock: clock)

            let badges = try json(try await client.get("/v1/me/badges", as: ann).body)
            let earned = Set((badges["earned"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String })
            #expect(earned == ["first-park", "first-ride", "first-coaster", "same-ride-10"])
            let credits10 = (badges["available"] as? [[String: Any]])?.first { $0["id"] as? String == "credits-10" }
            #expect(credits10?["progress"] as? Double == 0.1)

            // The boards count rides once they are older than the location time-to-live
            // (SecurityTests); here, all of them at once.
            try await s.service.store.settleTallies(through: clock.now(), limit: 100_000)
            // Rides, global: eve 12, ann 10, bob 3.
            let global = try json(try await client.get("/v1/leaderboards/rides?scope=global&window=week", as: ann).body)
            let entries = try #require(global["entries"] as? [[String: Any]])
            #expect(entries.map { ($0["user"] as? [String: Any])?["username"] as? String } == ["eve", "ann", "bob"])
            #expect(entries.map { $0["rank"] as? Int } == [1, 2, 3])
            #expect((global["me"] as? [String: Any])?["rank"] as? Int == 2)
            // Credits among friends: bob 2 (GateKeeper, Millennium Force), ann 1.
            let credits = try json(try await client.get("/v1/leaderboards/credits?scope=friends", as: ann).body)
            #expect((credits["entries"] as? [[String: Any]])?.map { $0["value"] as? Int } == [2, 1])
            // One ride's counts, in Cedar Point: ann 10, bob 1.
            let mf = try json(try await client.get("/v1/leaderboards/ride?ride=cedar-point.millennium-force&window=year", as: bob).body)
            #expect((mf["entries"] as? [[String: Any]])?.map { $0["value"] as? Int } == [10, 1])
            let park = try json(try await client.get("/v1/leaderboards/rides?scope=park&park=cedar-point&limit=1&offset=1", as: bob).body)
            #expect((park["entries"] as? [[String: Any]])?.first?["rank"] as? Int == 2)
            try expectProblem(try await client.get("/v1/leaderboards/rides?window=decade", as: bob), .badRequest, .invalidParameter)
            // Walked one entry a page, each after the page before's `next`: the same entries and
            // ranks; the last page is short and has no next.
            var walked: [[String: Any]] = []
            var next: String? = nil
            repeat {
                let target = "/v1/leaderboards/rides?scope=global&window=week&limit=1" + (next.map { "&after=\($0)" } ?? "")
                let page = try json(try await client.get(target, as: ann).body)
                walked += try #require(page["entries"] as? [[String: Any]])
                next = page["next"] as? String
                #expect((page["me"] as? [String: Any])?["rank"] as? Int == 2)
            } while next != nil
            #expect(walked.map { ($0["user"] as? [String: Any])?["username"] as? String } == ["eve", "ann", "bob"])
            #expect(walked.map { $0["rank"] as? Int } == [1, 2, 3])
            for bad in ["x", "1_2", "1_2_3_4", "1_nan_3", "1_inf_3", "_1_2", "1.5_2_3", "1_2_x", "1_2_3&offset=0"] {
                let response = try await client.get("/v1/leaderboards/rides?after=\(bad)", as: ann)
                let problem = try expectProblem(response, .badRequest, .invalidParameter)
                #expect((problem["detail"] as? String)?.contains("after") == true, "\(bad)")
            }
            // Blocking removes the blocked from the blocker's boards.
            _ = try await client.send(.put, "/v1/blocks/\(eve.id)", as: ann)
            let after = try json(try await client.get("/v1/leaderboards/rides", as: ann).body)
            #expect((after["entries"] as? [[String: Any]])?.count == 2)

            // A friend's profile: stats and badges; a stranger's: no such user. Ann rode at 0, 301 …
            // 2709 s and it is now 7525 s. Each ride and her tenth of Millennium Force, which
            // earned "same-ride-10", say where she was: to others they count, and show, once
            // they are two hours old.
            let stats = { (profile: [String: Any]) in (profile["stats"] as? [String: Any])?["totalRides"] as? Int }
            let profile = try json(try await client.get("/v1/users/\(ann.id)", as: bob).body)
            #expect(stats(profile) == 2)
            #expect(stats(try json(try await client.get("/v1/users/\(ann.id)", as: ann).body)) == 10, "her own, all of them")
            let shown = { (profile: [String: Any]) in Set((profile["badges"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }) }
            #expect(shown(profile) == ["first-park", "first-ride", "first-coaster"])
            #expect(shown(try json(try await client.get("/v1/users/\(ann.id)", as: ann).body)).count == 4, "her own, all of them")
            try expectProblem(try await client.get("/v1/users/\(ann.id)", as: eve), .notFound, .noSuchUser)
            // The ride log of the last two hours says where a friend is: only with exact sharing of a
            // fresh position. Ann rode at 0, 301 … 2709 s; it is now 7525 s: two rides are older than 2 h.
            _ = try await client.postFixes([fixJSON(41.4822, -82.6835, at: clock.now())], as: ann)
            #expect((try json(try await client.get("/v1/users/\(ann.id)/rides?limit=100", as: bob).body)["rides"] as? [Any])?.count == 10)
            _ = try await client.send(.patch, "/v1/me", as: ann, json: ["sharing": ["precision": "approximate"]])
            #expect((try json(try await client.get("/v1/users/\(ann.id)/rides?limit=100", as: bob).body)["rides"] as? [Any])?.count == 2)
            #expect((try json(try await client.get("/v1/users/\(ann.id)/rides?limit=100", as: ann).body)["rides"] as? [Any])?.count == 10)
            clock.advance(2400)
            let later = try json(try await client.get("/v1/users/\(ann.id)", as: bob).body)
            #expect(shown(later).count == 4 && stats(later) == 10)
        }
    }

    /// Each user may send a burst of messages, then waits (`serve --message-rate`): a 429 problem,
    /// which leaves their friend's sending alone.
    @Test func messagesBeyondTheBurstAreRefused() async throws {
        let s = try await TestService { configuration in
            configuration.limits.messages = RateLimit(perSecond: 0.001, burst: 3)
        }
        defer { s.remove() }
        try await s.app().test(.router) { client in
            let ann = try await client.register("ann")
            let bob = try await client.register("bob")
            try await client.befriend(ann, bob)
            var statuses: [HTTPResponse.Status] = []
            for n in 0..<5 {
                let sent = try await client.send(.post, "/v1/messages/\(bob.id)", as: ann, json: ["body": "message \(n)"])
                statuses.append(sent.status)
                if sent.status == .tooManyRequests { try expectProblem(sent, .tooManyRequests, .tooManyRequests) }
            }
            #expect(statuses == [.created, .created, .created, .tooManyRequests, .tooManyRequests])
            #expect(try await client.send(.post, "/v1/messages/\(ann.id)", as: bob, json: ["body": "Yes!"]).status == .created)
        }
    }

    @Test func messagesBetweenFriendsOnly() async throws {
        try await TestService.withApp { client in
            let ann = try await client.register("ann")
            let bob = try await client.register("bob")
            let eve = try await client.register("eve")
            try await client.befriend(ann, bob)
            #expect(try await client.send(.post, "/v1/messages/\(bob.id)", as: ann, json: ["body": "Front row on Maverick?"]).status == .created)
            #expect(try await client.send(.post, "/v1/messages/\(bob.id)", as: ann, json: ["body": "Meet at the exit"]).status == .created)
            #expect(try await client.send(.post, "/v1/messages/\(ann.id)", as: bob, json: ["body": "Yes!"]).status == .created)
            try expectProblem(try await client.send(.post, "/v1/messages/\(ann.id)", as: eve, json: ["body": "hi"]), .notFound, .notFriends)
            try expectProblem(try await client.send(.post, "/v1/messages/\(bob.id)", as: ann, json: ["body": "   "]), .badRequest, .invalidField)

            let list = try #require(try json(try await client.get("/v1/messages", as: bob).body)["conversations"] as? [[String: Any]])
            #expect(list.count == 1)
            #expect(list.first?["unread"] as? Int == 2)
            #expect((list.first?["last"] as? [String: Any])?["body"] as? String == "Yes!")
            let page = try #require(try json(try await client.get("/v1/messages/\(ann.id)?limit=2", as: bob).body)["messages"] as? [[String: Any]])
            #expect(page.map { $0["body"] as? String } == ["Yes!", "Meet at the exit"])
            let older = try json(try await client.get("/v1/messages/\(ann.id)?limit=2&before=\(page.last?["id"] as? Int ?? 0)", as: bob).body)
            #expect((older["messages"] as? [[String: Any]])?.map { $0["body"] as? String } == ["Front row on Maverick?"])
            #expect(try await client.send(.post, "/v1/messages/\(ann.id)/read", as: bob).status == .noContent)
            #expect((try json(try await client.get("/v1/messages", as: bob).body)["conversations"] as? [[String: Any]])?.first?["unread"] as? Int == 0)
            // The list in pages, newest first, each after the last message of the one before.
            let cat = try await client.register("cat")
            try await client.befriend(bob, cat)
            #expect(try await client.send(.post, "/v1/messages/\(bob.id)", as: cat, json: ["body": "Lunch?"]).status == .created)
            func people(_ query: String) async throws -> [Int] {
                let list = try #require(try json(try await client.get("/v1/messages" + query, as: bob).body)["conversations"] as? [[String: Any]])
                return list.compactMap { ($0["user"] as? [String: Any])?["id"] as? Int }
            }
            #expect(try await people("") == [cat.id, ann.id].map { Int($0) })
            let first = try #require(try json(try await client.get("/v1/messages?limit=1", as: bob).body)["conversations"] as? [[String: Any]])
            #expect(first.compactMap { ($0["user"] as? [String: Any])?["id"] as? Int } == [Int(cat.id)])
            let after = try #require((first.first?["last"] as? [String: Any])?["id"] as? Int)
            #expect(try await people("?limit=1&before=\(after)") == [Int(ann.id)])
            #expect(try await people("?limit=5&before=\(after)") == [Int(ann.id)])
            try expectProblem(try await client.get("/v1/messages?limit=0", as: bob), .badRequest, .invalidParameter)
            try expectProblem(try await client.get("/v1/messages?before=soon", as: bob), .badRequest, .invalidParameter)
            // Blocking stops delivery and hides the conversation.
            _ = try await client.send(.put, "/v1/blocks/\(ann.id)", as: bob)
            try expectProblem(try await client.send(.post, "/v1/messages/\(bob.id)", as: ann, json: ["body": "?"]), .notFound, .notFriends)
            #expect((try json(try await client.get("/v1/messages", as: ann).body)["conversations"] as? [Any])?.isEmpty == true)
        }
    }
}
