import CoasterCore
import CoasterHTTP
import CoasterService
import CoasterStore
import Foundation
import HTTPTypes
import Hummingbird

/// Registration, sessions and the caller's own profile.
struct AccountsController {
    let store: any Store
    let sessions: Sessions
    let accounts: Accounts
    let people: People
    /// Registrations per client address: each account is a voice in the crowd's wait estimates
    /// and a name that can send friend requests.
    let registrations: RequestRates
    let now: @Sendable () -> Date

    /// Routes anyone may call.
    var publicEndpoints: RouteCollection<AppRequestContext> {
        let routes = RouteCollection(context: AppRequestContext.self)
        routes.post("users", use: self.register)
        routes.post("sessions", use: self.login)
        return routes
    }

    /// Routes for a logged-in user.
    var userEndpoints: RouteCollection<AppRequestContext> {
        let routes = RouteCollection(context: AppRequestContext.self)
        routes.delete("sessions/current", use: self.logout)
        routes.get("me", use: self.me)
        routes.patch("me", use: self.updateMe)
        return routes
    }

    @Sendable func register(_ request: Request, context: AppRequestContext) async throws -> EditedResponse<ProfileResponse> {
        let body = try await request.decodeJSON(as: RegisterRequest.self, context: context)
        try self.registrations.take(key: context.clientAddress, what: "registration")
        let profile = try await self.accounts.register(username: body.username, password: body.password, displayName: body.displayName)
        try await self.people.refresh(profile.id)
        return EditedResponse(status: .created, headers: [.location: "/v1/me"], response: ProfileResponse(profile))
    }

    @Sendable func login(_ request: Request, context: AppRequestContext) async throws -> EditedResponse<SessionResponse> {
        let body = try await request.decodeJSON(as: LoginRequest.self, context: context)
        switch try await self.sessions.login(username: body.username, password: body.password, clientAddress: context.clientAddress) {
        case .success(let token, let identity, let expiresAt):
            return EditedResponse(status: .created, response: SessionResponse(
                token: token, expiresAt: expiresAt,
                user: UserWire(id: identity.id, username: identity.username, displayName: identity.username)))
        case .invalidCredentials:
            throw Problem(.invalidCredentials, status: .unauthorized, title: "Invalid credentials",
                          detail: "The username or the password is wrong.")
        case .throttled(let wait):
            throw Problem.tooManyRequests("Too many failed logins; try again later.", retryAfter: wait)
        }
    }

    @Sendable func logout(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        let me = try context.requireIdentity()
        if let hash = me.tokenHash {
            try await self.sessions.logout(tokenHash: hash, user: me.id)
        }
        return .noContent
    }

    @Sendable func me(_ request: Request, context: AppRequestContext) async throws -> ProfileResponse {
        guard let profile = try await self.store.profile(try context.requireIdentity().id) else { throw Problem.unauthorized() }
        return ProfileResponse(profile)
    }

    @Sendable func updateMe(_ request: Request, context: AppRequestContext) async throws -> ProfileResponse {
        let me = try context.requireIdentity()
        let patch = try await request.decodeJSON(as: ProfilePatch.self, context: context)
        var changes = try patch.profile.changes().get()
        changes.ghost = try patch.sharing?.ghost?.ghostMode(at: "/sharing/ghost", now: self.now())
        changes.precision = patch.sharing?.precision
        changes.discoverable = patch.sharing?.discoverable
        let profile = try await self.store.updateProfile(me.id, changes)
        try await self.people.refresh(me.id)
        return ProfileResponse(profile)
    }
}
