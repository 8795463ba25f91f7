import CoasterCore
import Foundation
import HTTPTypes
import Hummingbird

/// Reads `Authorization: Bearer <token>` and, when the token is live, puts the caller's identity in
/// the context. It refuses nothing itself: ``RequireUser`` and ``RequireAdmin`` do.
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
        }
        return try await next(request, context)
    }

    /// The token of an `Authorization: Bearer <token>` header, or `nil` if the header is not one:
    /// the scheme in any case after any spaces, one space, then the token with spaces and tabs
    /// trimmed (`nil` if nothing follows the space).
    ///
    /// Read in place: splitting the header into an array and lower-casing the scheme allocated
    /// twice on every authenticated request.
    static func token(_ header: String) -> String? {
        var rest = Substring(header)
        while rest.first == " " { rest.removeFirst() }
        guard let space = rest.firstIndex(of: " ") else { return nil }
        let scheme = rest[..<space].utf8
        guard scheme.count == 6, scheme.elementsEqual("bearer".utf8, by: { $0 | 0x20 == $1 }) else { return nil }
        let token = rest[rest.index(after: space)...]
        guard !token.isEmpty else { return nil }
        return String(token.trimmingSpacesAndTabs)
    }
}

extension Substring {
    /// Without the spaces and tabs at either end (HTTP's optional whitespace). By hand:
    /// Foundation's `trimmingCharacters(in:)` went through NSString and cost 3 % of a locate request.
    var trimmingSpacesAndTabs: Substring {
        var trimmed = self
        while let c = trimmed.first, c == " " || c == "\t" { trimmed.removeFirst() }
        while let c = trimmed.last, c == " " || c == "\t" { trimmed.removeLast() }
        return trimmed
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
