import CoasterHTTP
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

extension Request {
    /// Decodes a JSON body, letting `DecodingError` through so that the problem names the JSON
    /// pointer that is wrong (Hummingbird's own `decode` flattens it into a sentence).
    func decodeJSON<T: Decodable>(as type: T.Type, context: AppRequestContext, limit: Int = 1 << 20) async throws -> T {
        try self.requireJSONContentType()
        return try JSONBody.decode(T.self, from: try await self.body.collect(upTo: limit))
    }

    /// A `415` problem unless the body is said to be JSON or its type is not given (read as JSON,
    /// as clients that send none expect). A form or plain text read as JSON would earn a 400 that
    /// names a syntax error the client never wrote.
    func requireJSONContentType() throws {
        guard let given = self.headers[.contentType], !MediaType.isJSON(given) else { return }
        throw JSONBody.unsupported(given, expected: ["application/json"])
    }
}

/// Request bodies' JSON, decoded one way by every route (and the fast lane).
enum JSONBody {
    static func decode<T: Decodable>(_ type: T.Type, from buffer: ByteBuffer) throws -> T {
        try JSONDecoding.decode(T.self, from: Data(buffer.readableBytesView))
    }

    /// The `415` for a body of type `given` where one of `expected` was wanted.
    static func unsupported(_ given: String, expected: [String]) -> Problem {
        Problem(.unsupportedMediaType, status: .unsupportedMediaType, title: "Unsupported media type",
                detail: "The body is \(given.prefix(100)); this route reads \(expected.joined(separator: " or ")).")
    }
}

/// `Content-Type` values, as routes that read bodies judge them.
enum MediaType {
    /// The type and subtype alone, lowercased: `text/csv` of `Text/CSV; charset=utf-8` (what the
    /// WHATWG MIME standard calls its essence).
    static func essence(_ value: String) -> String {
        (value.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? "").trimmingSpacesAndTabs.lowercased()
    }

    /// Whether `value` names JSON: `application/json`, or a type with the `+json` suffix (RFC 6839:
    /// `application/geo+json`), in any case, with any parameters.
    static func isJSON(_ value: String) -> Bool {
        let type = Self.essence(value)
        return type == "application/json" || (type.hasPrefix("application/") && type.hasSuffix("+json"))
    }
}
