import Foundation

extension Data {
    /// Base64url without padding (RFC 4648 §5): session tokens and sealed cursors.
    public var base64URLEncoded: String {
        self.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// Decodes base64url with or without padding; `nil` for anything else.
    public init?(base64URLEncoded text: String) {
        guard text.utf8.allSatisfy({ $0 == 0x2D || $0 == 0x5F || ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x3D })
        else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/").replacingOccurrences(of: "=", with: "")
        guard base64.utf8.count % 4 != 1 else { return nil }
        base64 += String(repeating: "=", count: (4 - base64.utf8.count % 4) % 4)
        self.init(base64Encoded: base64)
    }
}
