import CoasterCore
import Hummingbird
import HummingbirdCore

extension Request {
    /// A required query parameter as a finite number, or a 400 problem naming it.
    func requiredNumber(_ name: String) throws -> Double {
        try self.uri.queryParameters.requiredNumber(name)
    }

    /// An optional query parameter as a finite number, or a 400 problem naming it.
    func optionalNumber(_ name: String) throws -> Double? {
        try self.uri.queryParameters.optionalNumber(name)
    }
}

/// Query parameters by name, the first of a name given twice: Hummingbird's parsed ones, or the
/// fast lane's reading of a plain target (``TargetQuery``).
protocol QueryLookup {
    func value(named name: String) -> Substring?
}

extension FlatDictionary<Substring, Substring>: QueryLookup {
    func value(named name: String) -> Substring? { self[name[...]] }
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
