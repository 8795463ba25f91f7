@testable import CoasterAPI
import CoasterCore
import CoasterHTTP
import CoasterService
import CoasterStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// The map pages (docs: Map): sign-in with its cookie and CSRF tokens, what the cookie may and may
/// not authenticate, the park, me and admin pages, and their bad input. Drawing in a browser is
/// tools/browser/run's.
@Suite struct MapPageTests {
    /// A browser's cookie jar, as far as these pages use one.
    struct Browser {
        var cookies: [String: String] = [:]

        mutating func keep(_ response: TestResponse) {
            for field in response.headers[values: .setCookie] {
                let pair = field.split(separator: ";")[0].split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = String(pair[0]), value = pair.count > 1 ? String(pair[1]) : ""
                if value.isEmpty || field.contains("Max-Age=0") { self.cookies[name] = nil } else { self.cookies[name] = value }
            }
        }

        var header: HTTPFields {
            self.cookies.isEmpty ? [:] : [.cookie: self.cookies.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: "; ")]
        }
    }

    static func form(_ fields: [String: String]) -> ByteBuffer {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return ByteBuffer(string: fields.map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: allowed)!)" }.joined(separator: "&"))
    }

    static func hidden(_ name: String, in html: String) -> String? {
        guard let range = html.range(of: "name=\"\(name)\" value=\"") else { return nil }
        let rest = html[range.upperBound...]
        return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
    }

    /// Signs `username` in through the form, as a browser does.
    static func signIn(_ username: String, password: String = TestUser.password, on client: some TestClientProtocol) async throws -> (Browser, TestResponse) {
        var browser = Browser()
        let page = try await client.execute(uri: "/map/login", method: .get)
        browser.keep(page)
        let csrf = try #require(Self.hidden("csrf", in: String(buffer: page.body)))
        var headers = browser.header
        headers[.contentType] = "application/x-www-form-urlencoded"
        let response = try await client.execute(uri: "/map/login", method: .post, headers: headers,
                                                body: Self.form(["csrf": csrf, "username": username, "password": password]))
        browser.keep(response)
        return (browser, response)
    }

    static func csrf(_ browser: Browser, on client: some TestClientProtocol) async throws -> String {
        let page = try await client.execute(uri: "/map", method: .get, headers: browser.header)
        return try #require(Self.hidden("csrf", in: String(buffer: page.body)))
    }

    @Test func signingInSetsAStrictHttpOnlyCookieAndSignedOutVisitorsAreSentToSignIn() async throws {
        try await TestService.withApp { client in
            let anonymous = try await client.execute(uri: "/map/parks/cedar-point", method: .get)
            #expect(anonymous.status == .seeOther)
            #expect(anonymous.headers[.location] == "/map/login?next=/map/parks/cedar-point")

            let form = try await client.execute(uri: "/map/login", method: .get)
            #expect(form.status == .ok)
            #expect(form.headers[.contentType] == "text/html; charset=utf-8")
            let policy = try #require(form.headers[.contentSecurityPolicy])
            #expect(policy.contains("script-src 'self'") && !policy.contains("unsafe-inline") && policy.contains("frame-ancestors 'none'"))
            #expect(form.headers[values: .setCookie].contains { $0.hasPrefix("coasterlife_login=") && $0.contains("HttpOnly") && $0.contains("SameSite=Strict") })

            _ = try await client.register("rider")
            let (browser, signedIn) = try await Self.signIn("rider", on: client)
            #expect(signedIn.status == .seeOther)
            #expect(signedIn.headers[.location] == "/map")
            let cookie = try #require(signedIn.headers[values: .setCookie].first { $0.hasPrefix("coasterlife_session=") })
            #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && cookie.contains("Path=/"))
            let parks = try await client.execute(uri: "/map", method: .get, headers: browser.header)
            #expect(parks.status == .ok)
            let html = String(buffer: parks.body)
            #expect(html.contains("href=\"/map/parks/cedar-point\""))
            #expect(html.contains("id=\"logout\""))
        }
    }

    @Test func aWrongPasswordOrAFormWithoutItsTokenIsRefused() async throws {
        try await TestService.withApp { client in
            _ = try await client.register("rider")
            let (browser, wrong) = try await Self.signIn("rider", password: "not the password", on: client)
            #expect(wrong.status == .unauthorized)
            #expect(String(buffer: wrong.body).contains("role=\"alert\""))
            #expect(browser.cookies["coasterlife_session"] == nil)

            // No token, or a token without its cookie (another site's form).
            let bare = try await client.execute(uri: "/map/login", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
                                                body: Self.form(["username": "rider", "password": TestUser.password]))
            #expect(bare.status == .forbidden)
            #expect(String(buffer: bare.body).contains("Form expired"))
            let forged = try await client.execute(uri: "/map/login", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
                                                  body: Self.form(["csrf": "made-up", "username": "rider", "password": TestUser.password]))
            #expect(forged.status == .forbidden)
        }
    }

    @Test func theCookieAuthenticatesReadsAndThePagesFormsButNoWriteOfTheJSONAPI() async throws {
        try await TestService.withApp { client in
            _ = try await client.register("rider")
            let (browser, _) = try await Self.signIn("rider", on: client)
            let read = try await client.execute(uri: "/v1/parks/cedar-point/waits", method: .get, headers: browser.header)
            #expect(read.status == .ok)
            // A write with the cookie alone is anonymous: a forged form could not reach it.
            var headers = browser.header
            headers[.contentType] = "application/json"
            let write = try await client.execute(uri: "/v1/fixes", method: .post, headers: headers,
                                                 body: ByteBuffer(string: "[{\"lat\":41.48,\"lon\":-82.68,\"accuracy\":5,\"recordedAt\":\"2026-11-28T12:00:00Z\"}]"))
            #expect(write.status == .unauthorized)
            // The live socket takes the cookie only from a page of this host.
            let live = try await client.execute(uri: "/v1/live", method: .get, headers: browser.header)
            #expect(live.status == .unauthorized)
        }
    }

    @Test func signingOutNeedsTheFormTokenAndEndsTheSession() async throws {
        try await TestService.withApp { client in
            _ = try await client.register("rider")
            let (browser, _) = try await Self.signIn("rider", on: client)
            var headers = browser.header
            headers[.contentType] = "application/x-www-form-urlencoded"
            let forged = try await client.execute(uri: "/map/logout", method: .post, headers: headers, body: Self.form(["csrf": "guess"]))
            #expect(forged.status == .forbidden)
            let csrf = try await Self.csrf(browser, on: client)
            let out = try await client.execute(uri: "/map/logout", method: .post, headers: headers, body: Self.form(["csrf": csrf]))
            #expect(out.status == .seeOther)
            #expect(out.headers[values: .setCookie].contains { $0.hasPrefix("coasterlife_session=;") && $0.contains("Max-Age=0") })
            // The old cookie no longer signs anyone in.
            let after = try await client.execute(uri: "/map", method: .get, headers: browser.header)
            #expect(after.status == .seeOther)
        }
    }

    @Test func aParkPageListsEveryZoneAndAMissingParkIsA404Page() async throws {
        try await TestService.withService { service, client in
            _ = try await client.register("rider")
            let (browser, _) = try await Self.signIn("rider", on: client)
            let page = try await client.execute(uri: "/map/parks/cedar-point", method: .get, headers: browser.header)
            #expect(page.status == .ok)
            let html = String(buffer: page.body)
            let definition = try #require(try await service.service.store.park(ParkID(rawValue: "cedar-point")))
            let rideZones = definition.zones.filter { $0.kind == .ride }.count
            #expect(rideZones > 0)
            #expect(html.components(separatedBy: "data-kind=\"ride\"").count - 1 == rideZones)
            #expect(html.contains("<script type=\"application/json\" id=\"page-data\">"))
            #expect(html.contains("\"park\":\"cedar-point\""))
            #expect(!html.contains("nativeZoom"), "a park page shows nobody: every zoom of tiles")
            #expect(!html.contains("<script>"), "no inline script")

            let missing = try await client.execute(uri: "/map/parks/no-such-park", method: .get, headers: browser.header)
            #expect(missing.status == .notFound)
            #expect(missing.headers[.contentType] == "text/html; charset=utf-8")
            #expect(String(buffer: missing.body).contains("role=\"alert\""))
        }
    }

    @Test func meShowsAFriendOnlyAsTheirSharingAllows() async throws {
        try await TestService.withApp { client in
            let me = try await client.register("viewer")
            let friend = try await client.register("friend")
            let stranger = try await client.register("stranger")
            try await client.befriend(me, friend)
            let now = Date()
            _ = try await client.postFixes([fixJSON(41.4822, -82.6835, at: now)], as: friend)
            _ = try await client.postFixes([fixJSON(41.4830, -82.6840, at: now)], as: stranger)
            _ = try await client.postFixes([fixJSON(41.4810, -82.6820, at: now)], as: me)
            let (browser, _) = try await Self.signIn("viewer", on: client)
            let state = try await client.execute(uri: "/map/me/state.json", method: .get, headers: browser.header)
            #expect(state.status == .ok)
            let body = try json(state.body)
            let mine = try #require(body["me"] as? [String: Any])
            #expect(abs((mine["lat"] as? Double ?? 0) - 41.4810) < 1e-9)
            let friends = try #require(body["friends"] as? [String])
            #expect(friends.count == 1, "only the friend, never the stranger")
            let message = try json(ByteBuffer(string: try #require(friends.first)))
            #expect((message["user"] as? [String: Any])?["id"] as? Int64 == friend.id || ((message["user"] as? [String: Any])?["id"] as? NSNumber)?.int64Value == friend.id)
            #expect(message["type"] as? String == "location")

            let page = try await client.execute(uri: "/map/me", method: .get, headers: browser.header)
            #expect(page.status == .ok)
            #expect(String(buffer: page.body).contains("data-user-id=\"\(friend.id)\""))
            #expect(!String(buffer: page.body).contains("data-user-id=\"\(stranger.id)\""))
            // Where friends are shown, the tile server is asked for no tile finer than a park.
            #expect(String(buffer: page.body).contains("\"nativeZoom\":\(TilesData.zoomAroundPeople)"))
        }
    }

    /// A multipart body of the upload form.
    static func upload(_ file: Data, csrf: String?, boundary: String = "coaster-test-boundary") -> ByteBuffer {
        var body = Data()
        if let csrf { body += Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\n\(csrf)\r\n".utf8) }
        body += Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"park\"; filename=\"park.geojson\"\r\nContent-Type: application/geo+json\r\n\r\n".utf8)
        body += file
        body += Data("\r\n--\(boundary)--\r\n".utf8)
        return ByteBuffer(bytes: body)
    }

    @Test func anAdminPreviewsABrokenParkFileWithItsProblemsPlacedAndLoadsAValidOne() async throws {
        try await TestService.withService { service, client in
            _ = try await service.admin("keeper", on: client)
            _ = try await client.register("member")
            let (member, _) = try await Self.signIn("member", on: client)
            let refused = try await client.execute(uri: "/map/admin/parks", method: .get, headers: member.header)
            #expect(refused.status == .forbidden)

            let (admin, _) = try await Self.signIn("keeper", on: client)
            let csrf = try await Self.csrf(admin, on: client)
            var headers = admin.header
            headers[.contentType] = "multipart/form-data; boundary=coaster-test-boundary"

            // A ride a kilometre outside the park, where the page must put its marker.
            let original = try Data(contentsOf: TestService.repoRoot.appendingPathComponent("data/parks/cedar-point.geojson"))
            var document = try #require(try JSONSerialization.jsonObject(with: original) as? [String: Any])
            var features = try #require(document["features"] as? [[String: Any]])
            let index = try #require(features.firstIndex { ($0["properties"] as? [String: Any])?["kind"] as? String == "ride" })
            features[index]["geometry"] = ["type": "Point", "coordinates": [-82.70, 41.50]]
            document["features"] = features
            let broken = try JSONSerialization.data(withJSONObject: document)
            let preview = try await client.execute(uri: "/map/admin/parks", method: .post, headers: headers, body: Self.upload(broken, csrf: csrf))
            #expect(preview.status == .unprocessableContent)
            let html = String(buffer: preview.body)
            #expect(html.contains("<li data-feature=\"\(index)\""))
            #expect(html.contains("\"at\":[41.5,-82.7]"), "the problem's place, for the map")
            #expect(html.contains("id=\"park-document\""))
            #expect(!html.contains("id=\"load\""))

            // Without the form token: refused, nothing read.
            let forged = try await client.execute(uri: "/map/admin/parks", method: .post, headers: headers, body: Self.upload(original, csrf: nil))
            #expect(forged.status == .forbidden)
            // Not JSON: said on the page.
            let text = try await client.execute(uri: "/map/admin/parks", method: .post, headers: headers,
                                                body: Self.upload(Data("name,lat,lon\n".utf8), csrf: csrf))
            #expect(text.status == .unprocessableContent)
            #expect(String(buffer: text.body).contains("role=\"alert\""))
            #expect(String(buffer: text.body).contains("is not GeoJSON"))

            // The valid file: a load form, and the load writes it.
            let valid = try await client.execute(uri: "/map/admin/parks", method: .post, headers: headers, body: Self.upload(original, csrf: csrf))
            #expect(valid.status == .ok)
            let validHTML = String(buffer: valid.body)
            #expect(validHTML.contains("id=\"load\""))
            let token = try #require(Self.hidden("preview", in: validHTML))
            var formHeaders = admin.header
            formHeaders[.contentType] = "application/x-www-form-urlencoded"
            let load = try await client.execute(uri: "/map/admin/parks", method: .post, headers: formHeaders,
                                                body: Self.form(["csrf": csrf, "action": "load", "preview": token]))
            #expect(load.status == .ok, "cedar-point existed: replaced")
            #expect(String(buffer: load.body).contains("Cedar Point is loaded"))
            // A preview loads once.
            let again = try await client.execute(uri: "/map/admin/parks", method: .post, headers: formHeaders,
                                                 body: Self.form(["csrf": csrf, "action": "load", "preview": token]))
            #expect(again.status == .conflict)
        }
    }

    @Test func anAdminSeesADaysDensityWithSmallCellsWithheld() async throws {
        try await TestService.withService { service, client in
            _ = try await service.admin("keeper", on: client)
            // Four riders in one spot, one alone elsewhere, three hours ago (older than what the
            // privacy rule holds back): one cell shown, the other not, nor a count of it.
            let at = Date().addingTimeInterval(-3 * 3600)
            let zone = try #require(TimeZone(identifier: "America/New_York"))
            let day = CalendarDay(at, in: zone)
            for i in 0..<4 {
                let rider = try await client.register("rider\(i)")
                _ = try await client.postFixes([fixJSON(41.4822, -82.6835, at: at)], as: rider)
            }
            let loner = try await client.register("loner")
            _ = try await client.postFixes([fixJSON(41.4790, -82.6800, at: at)], as: loner)
            let (admin, _) = try await Self.signIn("keeper", on: client)
            let page = try await client.execute(uri: "/map/admin/parks/cedar-point/density?day=\(day)", method: .get, headers: admin.header)
            #expect(page.status == .ok)
            let html = String(buffer: page.body)
            #expect(html.contains("id=\"withheld\">Cells with fewer than 3 people are never shown"), "\(html.prefix(3000))")
            #expect(html.contains("\"people\":4"))
            #expect(!html.contains("\"people\":1"))
            #expect(!html.contains("The day has more fixes"), "the whole day was read")
            // The day's hours after the privacy rule's end of the past are held back, and the page
            // says so (whether the day asked still has any depends on the hour the test runs).
            let heldBack = day.interval(in: zone).end > LocationPrivacy().placesShownBefore(Date())
            #expect(html.contains("id=\"held-back\"") == heldBack, "\(html.prefix(3000))")

            let bad = try await client.execute(uri: "/map/admin/parks/cedar-point/density?day=2026-02-30", method: .get, headers: admin.header)
            #expect(bad.status == .badRequest)
            #expect(String(buffer: bad.body).contains("role=\"alert\""))
            let missing = try await client.execute(uri: "/map/admin/parks/atlantis/density", method: .get, headers: admin.header)
            #expect(missing.status == .notFound)
        }
    }

    @Test func anUploadOverTheLimitIsRefusedOnThePage() async throws {
        try await TestService.withService { service, client in
            _ = try await service.admin("keeper", on: client)
            let (admin, _) = try await Self.signIn("keeper", on: client)
            let csrf = try await Self.csrf(admin, on: client)
            var headers = admin.header
            headers[.contentType] = "multipart/form-data; boundary=coaster-test-boundary"
            let huge = Data(repeating: UInt8(ascii: " "), count: MapController.uploadLimit + MapController.formLimit + 1)
            let response = try await client.execute(uri: "/map/admin/parks", method: .post, headers: headers, body: Self.upload(huge, csrf: csrf))
            #expect(response.status == .contentTooLarge)
            #expect(String(buffer: response.body).contains("larger than 16 MB"))
        }
    }

    @Test func assetsAreServedWithTheirTypesAndNothingElseIs() async throws {
        try await TestService.withApp { client in
            let script = try await client.execute(uri: "/map/assets/map.js", method: .get)
            #expect(script.status == .ok)
            #expect(script.headers[.contentType] == "text/javascript; charset=utf-8")
            let style = try await client.execute(uri: "/map/assets/map.css", method: .get)
            #expect(style.headers[.contentType] == "text/css; charset=utf-8")
            let leaflet = try await client.execute(uri: "/map/assets/leaflet/leaflet.js", method: .get)
            #expect(leaflet.status == .ok, "tools/setup installs libjs-leaflet")
            let escape = try await client.execute(uri: "/map/assets/..%2F..%2Fopenapi.json", method: .get)
            #expect(escape.status == .notFound)
        }
    }

    @Test func valuesInThePageDataCannotCloseTheirScriptElement() {
        let escaped = escapeForScript("{\"name\":\"</script><script>alert(1)</script>&\\u2028\u{2028}\"}")
        #expect(!escaped.contains("<") && !escaped.contains(">") && !escaped.contains("&") && !escaped.contains("\u{2028}"))
        #expect(escaped.contains("\\u003c/script\\u003e"))
    }

    @Test func aSignInReturnsOnlyToAPageOfTheMap() {
        #expect(MapController.safeNext("/map/parks/cedar-point") == "/map/parks/cedar-point")
        #expect(MapController.safeNext("//evil.example/map") == nil)
        #expect(MapController.safeNext("https://evil.example/map") == nil)
        #expect(MapController.safeNext("/v1/admin/parks") == nil)
        #expect(MapController.safeNext("/map\\@evil.example") == nil)
    }

    @Test func formsAreReadWithinTheirBounds() throws {
        #expect(HTMLForm.urlEncoded(Data("a=1+2&b=%C3%A9%zz&a=second&c".utf8)) == ["a": "1 2", "b": "é%zz", "c": ""])
        #expect(HTMLForm.boundary("multipart/form-data; boundary=\"abc\"") == "abc")
        #expect(HTMLForm.boundary("multipart/form-data") == nil)
        #expect(HTMLForm.boundary("multipart/form-data; boundary=\(String(repeating: "x", count: 71))") == nil)
        let body = Data("--b\r\nContent-Disposition: form-data; name=\"f\"; filename=\"x.json\"\r\n\r\n{}\r\n--b--\r\n".utf8)
        let parts = try HTMLForm.multipart(body, boundary: "b")
        #expect(parts.count == 1 && parts[0].name == "f" && parts[0].filename == "x.json" && parts[0].body == Data("{}".utf8))
        #expect(throws: HTMLForm.MultipartError.self) { try HTMLForm.multipart(Data("--b\r\nno end".utf8), boundary: "b") }
        let many = Data((String(repeating: "--b\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\n1\r\n", count: 20) + "--b--").utf8)
        #expect(throws: HTMLForm.MultipartError.self) { try HTMLForm.multipart(many, boundary: "b") }
    }
}
