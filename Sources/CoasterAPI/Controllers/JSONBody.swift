import Foundation
import Hummingbird

extension Request {
    /// Decodes a JSON body, letting `DecodingError` through so that the problem names the JSON
    /// pointer that is wrong (Hummingbird's own `decode` flattens it into a sentence).
    func decodeJSON<T: Decodable>(as type: T.Type, context: AppRequestContext, limit: Int = 1 << 20) async throws -> T {
        let buffer = try await self.body.collect(upTo: limit)
        return try Self.decoder.decode(T.self, from: Data(buffer.readableBytesView))
    }

    private static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()
}
