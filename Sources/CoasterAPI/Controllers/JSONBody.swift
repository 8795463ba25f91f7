import Foundation
import Hummingbird
import NIOCore

extension Request {
    /// Decodes a JSON body, letting `DecodingError` through so that the problem names the JSON
    /// pointer that is wrong (Hummingbird's own `decode` flattens it into a sentence).
    func decodeJSON<T: Decodable>(as type: T.Type, context: AppRequestContext, limit: Int = 1 << 20) async throws -> T {
        try JSONBody.decode(T.self, from: try await self.body.collect(upTo: limit))
    }
}

/// Request bodies' JSON, decoded one way by every route (and the fast lane).
enum JSONBody {
    static func decode<T: Decodable>(_ type: T.Type, from buffer: ByteBuffer) throws -> T {
        try Self.decoder.decode(T.self, from: Data(buffer.readableBytesView))
    }

    private static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = RFC3339.date(text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "expected an RFC 3339 time such as 2026-11-21T14:03:00Z")
            }
            return date
        }
        return decoder
    }()
}

/// RFC 3339 times, with or without fractional seconds.
enum RFC3339 {
    static func date(_ text: String) -> Date? {
        if let date = try? Date(text, strategy: .iso8601) { return date }
        return try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}
