import CoasterCore
import CoasterHTTP
import Hummingbird
import HummingbirdCore

extension AppRequestContext {
    /// A path parameter naming a row by its id: a whole number in 1…Int64.max, or a 400 problem
    /// naming the parameter (`thing`: "a user's id"), never a 404 that says no such row exists.
    func positiveID(_ name: String, _ thing: String) throws -> Int64 {
        let raw = self.parameters.get(name) ?? ""
        guard let id = Int64(raw), id > 0 else {
            throw Problem.invalidPathParameter(name, "\(thing) is a whole number in 1…\(Int64.max), not \"\(raw.prefix(64))\"")
        }
        return id
    }
}

extension Request {
    /// A required query parameter as a finite number, or a 400 problem naming it.
    func requiredNumber(_ name: String) throws -> Double {
        try self.uri.queryParameters.requiredNumber(name)
    }

    /// An optional query parameter as a finite number, or a 400 problem naming it.
    func optionalNumber(_ name: String) throws -> Double? {
        try self.uri.queryParameters.optionalNumber(name)
    }

    /// `limit` (1…200, default 50) and `before` (an id) query parameters for newest-first lists.
    func paging() throws -> (limit: Int, before: Int64?) {
        let limit = try self.pageLimit()
        var before: Int64?
        if let text = self.uri.queryParameters["before"] {
            guard let n = Int64(text), n > 0 else { throw Problem.invalidParameter("before", "an id from an earlier page") }
            before = n
        }
        return (limit, before)
    }

    /// Where a page starts: `after`, the `next` of an earlier page, read by `place`; `nil` if not given.
    func pageAfter<Place>(_ place: (Substring) -> Place?) throws -> Place? {
        guard let text = self.uri.queryParameters["after"] else { return nil }
        guard let after = place(text) else { throw Problem.invalidParameter("after", "the next cursor of an earlier page") }
        return after
    }

    /// A page's length: `limit`, 50 unless given, 1…200.
    func pageLimit() throws -> Int {
        guard let text = self.uri.queryParameters["limit"] else { return 50 }
        guard let n = Int(text), (1...200).contains(n) else { throw Problem.invalidParameter("limit", "a whole number in 1…200") }
        return n
    }
}

/// The same on query parameters parsed once, for routes that read several (Hummingbird parses the
/// query string again on every `uri.queryParameters`).
extension QueryLookup {
    func requiredNumber(_ name: String) throws -> Double {
        guard let text = self.value(named: name) else {
            throw Problem.invalidParameter(name, "required query parameter is missing")
        }
        return try Self.number(text, name: name)
    }

    func optionalNumber(_ name: String) throws -> Double? {
        guard let text = self.value(named: name) else { return nil }
        return try Self.number(text, name: name)
    }

    private static func number(_ text: Substring, name: String) throws -> Double {
        // Coordinates come as short decimals, read without `strtod` (``ShortDecimal``).
        let short = text.utf8.withContiguousStorageIfAvailable(ShortDecimal.parse) ?? nil
        guard let value = short ?? Double(text), value.isFinite else {
            throw Problem.invalidParameter(name, "\"\(text)\" is not a finite number")
        }
        return value
    }
}
