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

/// The same on query parameters parsed once, for routes that read several (Hummingbird parses the
/// query string again on every `uri.queryParameters`).
extension FlatDictionary<Substring, Substring> {
    func requiredNumber(_ name: String) throws -> Double {
        guard let text = self[name[...]] else {
            throw Problem.invalidParameter(name, "required query parameter is missing")
        }
        return try Self.number(text, name: name)
    }

    func optionalNumber(_ name: String) throws -> Double? {
        guard let text = self[name[...]] else { return nil }
        return try Self.number(text, name: name)
    }

    private static func number(_ text: Substring, name: String) throws -> Double {
        guard let value = Double(text), value.isFinite else {
            throw Problem.invalidParameter(name, "\"\(text)\" is not a finite number")
        }
        return value
    }
}
