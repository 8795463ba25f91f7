import CoasterCore
import CoasterHTTP
import CoasterService
import Foundation
import HTTPTypes
import Hummingbird

/// Reads `Authorization: Bearer <token>` (or, for what a map page does, the map's session cookie:
/// ``MapSession``) and, when the token is live, puts the caller's identity in the context. It
/// refuses nothing itself: ``RequireUser`` and ``RequireAdmin`` do.
struct BearerAuthentication: RouterMiddleware {
    typealias Context = AppRequestContext
    let sessions: Sessions

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        if let header = request.headers[.authorization] {
            if let token = Self.token(header) {
                if let identity = try await self.sessions.authenticate(token: token) {
                    context.identity = identity
                } else {
                    context.authenticationFailure = "The bearer token is unknown, expired or revoked; log in again."
                }
            } else {
                context.authenticationFailure = "Use an Authorization: Bearer <token> header from POST /v1/sessions."
            }
        } else if let token = MapSession.cookie(MapSession.cookie, in: request.headers),
                  MapSession.authenticates(method: request.method, path: request.uri.path, authority: request.head.authority, headers: request.headers) {
            // A signed-in map page (``MapSession``): the same session, held in a cookie.
            if let identity = try await self.sessions.authenticate(token: token) {
                context.identity = identity
                context.cookieSession = token
            } else {
                context.authenticationFailure = "The session has ended; sign in again."
            }
        }
        return try await next(request, context)
    }

    /// The token of an `Authorization: Bearer <token>` header, or `nil` if the header is not one:
    /// the scheme in any case after any spaces, one space, then the token with spaces and tabs
    /// trimmed (`nil` if nothing follows the space).
    ///
    /// Read in place: splitting the header into an array and lower-casing the scheme allocated
    /// twice on every authenticated request. A header of printable ASCII and tabs, which is what
    /// clients send, is read byte by byte (its characters are its bytes); reading characters, which
    /// must find where each grapheme ends, was a microsecond of every authenticated fast-lane request.
    static func token(_ header: String) -> String? {
        if let read = header.utf8.withContiguousStorageIfAvailable(Self.token(ascii:)), let token = read { return token }
        var rest = Substring(header)
        while rest.first == " " { rest.removeFirst() }
        guard let space = rest.firstIndex(of: " ") else { return nil }
        let scheme = rest[..<space].utf8
        guard scheme.count == 6, scheme.elementsEqual("bearer".utf8, by: { $0 | 0x20 == $1 }) else { return nil }
        let token = rest[rest.index(after: space)...]
        guard !token.isEmpty else { return nil }
        return String(token.trimmingSpacesAndTabs)
    }

    /// ``token(_:)`` for a header's bytes, if they are all printable ASCII or tabs (`.some(nil)`:
    /// not a bearer header); `nil` for any other byte, which leaves the header to the reading by
    /// characters.
    private static func token(ascii bytes: UnsafeBufferPointer<UInt8>) -> String?? {
        let space = UInt8(ascii: " "), tab = UInt8(ascii: "\t")
        for byte in bytes where (byte < space && byte != tab) || byte > 0x7E { return nil }
        var start = bytes.startIndex
        while start < bytes.endIndex, bytes[start] == space { start += 1 }
        guard let gap = bytes[start...].firstIndex(of: space) else { return .some(nil) }
        guard gap - start == 6, zip(bytes[start..<gap], "bearer".utf8).allSatisfy({ $0 | 0x20 == $1 }) else { return .some(nil) }
        var first = gap + 1, end = bytes.endIndex
        guard first < end else { return .some(nil) }
        while first < end, bytes[first] == space || bytes[first] == tab { first += 1 }
        while end > first, bytes[end - 1] == space || bytes[end - 1] == tab { end -= 1 }
        return .some(String(decoding: UnsafeBufferPointer(rebasing: bytes[first..<end]), as: UTF8.self))
    }
}

/// Refuses anonymous callers with 401.
struct RequireUser: RouterMiddleware {
    typealias Context = AppRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        _ = try context.requireIdentity()
        return try await next(request, context)
    }
}

/// Refuses anonymous callers with 401 and members with 403.
struct RequireAdmin: RouterMiddleware {
    typealias Context = AppRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard try context.requireIdentity().role == .admin else {
            throw Problem(.forbidden, status: .forbidden, title: "Forbidden", detail: "Only park admins may do this.")
        }
        return try await next(request, context)
    }
}
