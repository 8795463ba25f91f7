import CoasterCore
import CoasterHTTP
import CoasterService
import Foundation
import HTTPTypes
import Hummingbird

/// What a map page answers when something is wrong: the same problem the JSON API would give
/// (``ProblemMiddleware``'s mapping, one place), as a page a person can read. A signed-out
/// visitor is sent to sign in and brought back; the page's JSON (`….json`) keeps its problem.
struct PageErrors: RouterMiddleware {
    typealias Context = AppRequestContext
    let pages: Pages

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            if request.uri.path.hasSuffix(".json") { throw error }
            let problem = ProblemMiddleware<Context>.problem(for: error, request: request, context: context)
            if problem.status == .unauthorized, request.method == .get || request.method == .head {
                let next = MapController.safeNext(request.uri.description).map { "?next=" + Self.queryEscaped($0) } ?? ""
                return self.pages.redirect("/map/login" + next)
            }
            var content = PageContent(title: problem.title, page: "error")
            if let me = context.identity {
                content.user = .init(id: me.id.rawValue, username: me.username)
                content.csrf = context.cookieSession.map(MapSession.formToken(session:)) ?? ""
                content.isAdmin = me.role == .admin
            }
            content.view = ["status": problem.status.code, "title": problem.title, "detail": problem.detail,
                            "errors": problem.errors.map { ["pointer": $0.pointer, "detail": $0.detail] }, "hasErrors": !problem.errors.isEmpty,
                            "requestId": context.id]
            var headers = problem.headers
            headers[.requestID] = context.id
            return self.pages.render("error", content, status: problem.status, headers: headers)
        }
    }

    static func queryEscaped(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~/")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }
}
