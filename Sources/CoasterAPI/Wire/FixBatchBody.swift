import CoasterCore
import CoasterHTTP
import CoasterService
import Foundation
import HTTPTypes
import NIOCore

/// The body of `POST /v1/fixes`, for the router's handler and the fast lane's.
enum FixBatchBody {
    /// The largest body `POST /v1/fixes` reads.
    static let bodyLimit = 1 << 20

    /// The fixes of a `POST /v1/fixes` body: one JSON object or an array of them, checked against
    /// the batch rules. Throws the problem the client gets.
    static func fixes(in body: ByteBuffer, policy: LocationPolicy) throws -> [IncomingFix] {
        // The plain shape read from the bytes; anything else left to the decoder (see FixBody).
        let fixes = try body.withUnsafeReadableBytes(FixBody.fixes) ?? FixWire.fixes(decoding: Data(body.readableBytesView))
        guard !fixes.isEmpty else { throw Problem.invalidField("", "the batch is empty") }
        guard fixes.count <= policy.maximumBatch else {
            throw Problem(.payloadTooLarge, status: .contentTooLarge, title: "Batch too large",
                          detail: "At most \(policy.maximumBatch) fixes a request; this one has \(fixes.count).")
        }
        for (i, fix) in fixes.enumerated() where (fix.clientID?.utf8.count ?? 0) > 64 {
            throw Problem.invalidField("/\(i)/id", "a client fix id has at most 64 bytes")
        }
        return fixes
    }
}
