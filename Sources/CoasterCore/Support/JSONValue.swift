import Foundation

/// Any JSON value, for documents whose shape is checked by hand so that errors can name
/// the exact JSON pointer that is wrong (GeoJSON imports).
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

extension JSONValue: Codable {
    /// Each kind is tried in turn, and each miss is a thrown error (a `DecodingError` with its
    /// coding path, and under the test runner a backtrace): the kinds go in the order they are
    /// common in the documents read here. GeoJSON is mostly numbers, then arrays of them, so a
    /// number costs no miss and an array one (bools were tried first, which cost every number
    /// one miss and every array three). The decoder never reads one kind as another.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

/// Builds RFC 6901 JSON pointers ("/features/3/geometry") one step at a time.
public struct JSONPointer: Hashable, Sendable, CustomStringConvertible {
    public private(set) var description: String

    public init(_ text: String = "") {
        self.description = text
    }

    public func appending(_ key: String) -> JSONPointer {
        let escaped = key.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
        return JSONPointer(self.description + "/" + escaped)
    }

    public func appending(_ index: Int) -> JSONPointer {
        JSONPointer(self.description + "/" + String(index))
    }
}

extension JSONValue {
    /// `data` read as JSON, held to RFC 8259 first (``JSONSyntax``), so that what is not JSON is
    /// refused with what is wrong and where: a ``JSONSyntax/Fault``. What passes, Foundation's
    /// decoder reads; its own `DecodingError` is left only for the few numbers it refuses that
    /// RFC 8259 allows (a zero with some exponents, `0e1`).
    public static func strict(_ data: Data) throws -> JSONValue {
        if let fault = JSONSyntax.fault(in: data) { throw fault }
        return try JSONDecoder().decode(JSONValue.self, from: data)
    }
}
