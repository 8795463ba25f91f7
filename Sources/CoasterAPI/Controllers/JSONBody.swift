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
        try JSONDecoding.decode(T.self, from: Data(buffer.readableBytesView))
    }
}
