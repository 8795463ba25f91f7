import Foundation
import HTTPTypes
import Hummingbird

/// Takes the client's address from `X-Forwarded-For` when, and only when, the request came from
/// the configured reverse proxy (`serve --trusted-proxy`). The proxy appends the address it saw
/// last, so that entry is the one to believe: anything before it is what the client itself sent.
/// Without this, every client behind the proxy shares the proxy's address, and one attacker's
/// failed logins would throttle them all; with the header believed from anyone, an attacker would
/// pick a fresh address for each guess.
struct TrustedProxyMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let proxy: String
    static let forwardedFor = HTTPField.Name("X-Forwarded-For")!

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard context.peerAddress == self.proxy, let client = Self.client(request.headers[values: Self.forwardedFor]) else {
            return try await next(request, context)
        }
        var context = context
        context.forwardedFor = client
        return try await next(request, context)
    }

    /// The last address of the last `X-Forwarded-For` field, if it is an IP address.
    static func client(_ fields: [String]) -> String? {
        fields.last?.split(separator: ",").last.flatMap { IPAddressText.normalized(String($0)) }
    }
}

/// An IP address as text, checked and normalised.
public enum IPAddressText {
    /// `text` without surrounding spaces and lower-cased, if it is made of what IPv4 and IPv6
    /// addresses are made of (digits, hexadecimal letters, dots, colons) and at most 45 bytes;
    /// else `nil`.
    public static func normalized(_ text: String) -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed.utf8.count <= 45, trimmed.contains(where: { $0.isNumber }),
              trimmed.utf8.allSatisfy({ $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: ":") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                  || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0 | 0x20) })
        else { return nil }
        return trimmed.lowercased()
    }
}
