import Foundation

extension Data {
    /// Base64url without padding (RFC 4648 §5): session tokens and sealed cursors.
    public var base64URLEncoded: String {
        self.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
