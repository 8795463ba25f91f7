import CoasterHTTP
import CoasterStore
import HTTPTypes

extension Problem {
    /// 503 with `Retry-After`: the database gave no connection in time or a statement ran out of
    /// its time; the request may be tried again (a use case that got its connection is answered
    /// with its outcome, never this, so a 503 is not a commit answered as a failure).
    init(_ unavailable: StoreUnavailable) {
        self.init(.storeUnavailable, status: .serviceUnavailable, title: "Store unavailable",
                  detail: "The database did not answer in time; try again shortly.")
        self.headers[.retryAfter] = "1"
    }
}
