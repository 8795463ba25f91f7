import Crypto
import Foundation
import Hummingbird

extension Request {
    /// Whether the request's `If-None-Match` names `etag` or is `*`: the client's copy is
    /// current, and a `304 Not Modified` answers it (RFC 9110 §13.1.2, weak comparison: `W/"x"`
    /// matches `"x"`).
    func hasCurrentCopy(_ etag: String) -> Bool {
        guard let header = self.headers[.ifNoneMatch] else { return false }
        return header.split(separator: ",").contains { tag in
            let tag = tag.trimmingCharacters(in: .whitespaces)
            return tag == "*" || tag == etag || (tag.hasPrefix("W/") && tag.dropFirst(2) == etag)
        }
    }
}

/// A strong entity tag for a body: its SHA-256, quoted.
func entityTag(of data: Data) -> String {
    "\"" + sha256Hex(data) + "\""
}

/// The SHA-256 of `bytes` in lowercase hex: a photo's content address, a body's entity tag.
func sha256Hex(_ bytes: some DataProtocol) -> String {
    SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
}
