import CoasterCore
import Crypto
import Foundation

/// Makes page cursors opaque: a cursor that must carry something its reader may not see (a
/// leaderboard's place holds when a rider last rode) is sealed with ChaChaPoly under a secret of
/// the database, so every process serving it reads the others' cursors, and nobody else can read
/// or forge one. A cursor that does not open is a bad parameter, never an error of the server.
struct CursorSeal: Sendable {
    private let key: SymmetricKey

    init(key: Data) {
        self.key = SymmetricKey(data: key)
    }

    /// `text` sealed, as base64url without padding.
    func seal(_ text: String) -> String {
        // Sealing with a fresh random nonce cannot fail for a 256-bit key.
        let box = try! ChaChaPoly.seal(Data(text.utf8), using: self.key)
        return box.combined.base64URLEncoded
    }

    /// The text of a cursor this seal made, or `nil` for anything else.
    func open(_ cursor: Substring) -> String? {
        // A sealed cursor of the longest place is well under 200 characters.
        guard cursor.utf8.count <= 256 else { return nil }
        var base64 = cursor.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64), let box = try? ChaChaPoly.SealedBox(combined: data),
              let opened = try? ChaChaPoly.open(box, using: self.key)
        else { return nil }
        return String(data: opened, encoding: .utf8)
    }
}
