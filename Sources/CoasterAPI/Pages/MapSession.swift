import CoasterCore
import CoasterService
import Crypto
import Foundation
import HTTPTypes
import Hummingbird

/// How the map pages keep a signed-in browser: the session of `POST /v1/sessions`, held in a
/// cookie the page's scripts cannot read, and the tokens that prove a form came from a page of
/// ours (docs: Map, "Sign-in and forms").
///
/// The cookie is `HttpOnly` (no script reads the session) and `SameSite=Strict` (no other site's
/// page sends it), and it authenticates only what a page of ours does: GET requests, which change
/// nothing (the pages' scripts read the JSON API with it), the `/v1/live` socket when its `Origin`
/// is this host, and the `/map` forms, each of which carries a CSRF token. A POST, PUT or DELETE
/// of the JSON API still needs its bearer header, so a forged form can never reach one.
enum MapSession {
    /// The session token (the cookie's value is the bearer token itself).
    static let cookie = "coasterlife_session"
    /// Before sign-in there is no session to bind a form to: the login form's token is also set
    /// as this cookie, and the two must match (a "double-submit" token, which another site can
    /// neither read nor set).
    static let loginCookie = "coasterlife_login"

    /// The value of cookie `name` in a request's `Cookie` header(s), if there is exactly one.
    static func cookie(_ name: String, in headers: HTTPFields) -> String? {
        var found: String?
        for field in headers[values: .cookie] {
            // Bounded: a cookie header is at most what the server's header limit let through.
            for pair in field.split(separator: ";") {
                let trimmed = pair.drop(while: { $0 == " " })
                guard let equals = trimmed.firstIndex(of: "="), trimmed[..<equals] == name else { continue }
                if found != nil { return nil }
                found = String(trimmed[trimmed.index(after: equals)...])
            }
        }
        return found.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Whether the cookie may authenticate this request (see the type's comment). `authority` is the
    /// request's host; the `Origin` header must name it: a WebSocket upgrade from a page of another site is refused by it.
    static func authenticates(method: HTTPRequest.Method, path: String, authority: String?, headers: HTTPFields) -> Bool {
        if path == "/map" || path.hasPrefix("/map/") { return true }
        guard method == .get || method == .head else { return false }
        if path == LiveController.path {
            guard let origin = headers[.origin], let host = authority else { return false }
            return origin == "http://\(host)" || origin == "https://\(host)"
        }
        return path.hasPrefix("/v1/")
    }

    /// The `Set-Cookie` value that signs the browser in for `lifetime` seconds. `secure` when the
    /// page was reached over HTTPS (a trusted proxy said so), so the cookie never travels in clear.
    static func setCookie(token: String, lifetime: TimeInterval, secure: Bool) -> String {
        "\(Self.cookie)=\(token); Path=/; Max-Age=\(Int(lifetime)); HttpOnly; SameSite=Strict" + (secure ? "; Secure" : "")
    }

    static func clearCookie(_ name: String, path: String = "/") -> String {
        "\(name)=; Path=\(path); Max-Age=0; HttpOnly; SameSite=Strict"
    }

    static func setLoginCookie(_ token: String, secure: Bool) -> String {
        // Ten minutes to fill in the form; the login page sets a fresh one each time it is shown.
        "\(Self.loginCookie)=\(token); Path=/map/login; Max-Age=600; HttpOnly; SameSite=Strict" + (secure ? "; Secure" : "")
    }

    /// A fresh random token for the login form.
    static func newLoginToken() -> String {
        Data(SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }).base64URLEncoded
    }

    /// The CSRF token of a signed-in page: derived from the session token, so it needs no
    /// storage, works on every node, and dies with the session. Another site knows neither.
    static func formToken(session token: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Data("coasterlife map form".utf8), using: SymmetricKey(data: Data(token.utf8)))
        return Data(mac).base64URLEncoded
    }

    /// Whether `given` is the form token of `session`, compared in constant time.
    static func formTokenMatches(_ given: String?, session token: String) -> Bool {
        guard let given else { return false }
        return Self.constantTimeEqual(given, Self.formToken(session: token))
    }

    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for i in x.indices { difference |= x[i] ^ y[i] }
        return difference == 0
    }

    /// Whether the request reached us over HTTPS, as a trusted proxy says (`serve --trusted-proxy`):
    /// then cookies are `Secure`.
    static func overHTTPS(_ request: Request, context: AppRequestContext) -> Bool {
        context.forwardedFor != nil && request.headers[Self.forwardedProto]?.lowercased() == "https"
    }

    static let forwardedProto = HTTPField.Name("X-Forwarded-Proto")!
}
