import Foundation
import NIOCore
import Synchronization

/// The JSON body last written for each key, reused while the value it was written from is equal.
///
/// For answers that are read far more often than they change and cost more to encode than to
/// compare (a park's wait board: an array the store hands out again unchanged, which `==` matches
/// by identity before it compares anything).
final class KeptBodies<Key: Hashable & Sendable, Value: Equatable & Sendable>: Sendable {
    private let kept = Mutex<[Key: (value: Value, body: ByteBuffer)]>([:])

    /// The body for `value` under `key`: the kept one if it was written from an equal value, else
    /// `encode()`'s, which is kept.
    func body(_ key: Key, for value: Value, encode: () throws -> Data) throws -> ByteBuffer {
        if let kept = self.kept.withLock({ $0[key] }), kept.value == value { return kept.body }
        let body = ByteBuffer(bytes: try encode())
        self.kept.withLock { $0[key] = (value, body) }
        return body
    }
}
