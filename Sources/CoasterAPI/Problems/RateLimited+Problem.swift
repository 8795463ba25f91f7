import CoasterHTTP
import CoasterService

extension Problem {
    /// The 429 of a request its rate limit refused, with `Retry-After`.
    init(_ limited: RateLimited) {
        self = .tooManyRequests("Too many \(limited.what) requests; slow down.", retryAfter: limited.retryAfter)
    }
}
