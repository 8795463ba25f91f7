import Hummingbird

extension Request {
    /// A required query parameter as a finite number, or a 400 problem naming it.
    func requiredNumber(_ name: String) throws -> Double {
        guard let text = self.uri.queryParameters[name[...]] else {
            throw Problem.invalidParameter(name, "required query parameter is missing")
        }
        return try Self.number(String(text), name: name)
    }

    /// An optional query parameter as a finite number, or a 400 problem naming it.
    func optionalNumber(_ name: String) throws -> Double? {
        guard let text = self.uri.queryParameters[name[...]] else { return nil }
        return try Self.number(String(text), name: name)
    }

    private static func number(_ text: String, name: String) throws -> Double {
        guard let value = Double(text), value.isFinite else {
            throw Problem.invalidParameter(name, "\"\(text)\" is not a finite number")
        }
        return value
    }
}
