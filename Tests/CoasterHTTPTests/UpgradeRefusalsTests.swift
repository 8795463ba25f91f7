@testable import CoasterHTTP
import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import Testing

/// The writer that puts a refused upgrade's kept answer in place of hummingbird-websocket's bare
/// 400 replaces that answer only: a refusal left behind by a connection that closed early, whose
/// identity a new connection took, must not replace the new connection's own answers.
@Suite("Upgrade refusals")
struct UpgradeRefusalsTests {
    static let problem = ByteBuffer(string: #"{"type":"/problems/unauthorized"}"#)

    static func refusal() -> UpgradeRefusals.Refusal {
        UpgradeRefusals.Refusal(status: .unauthorized, headers: [.contentType: "application/problem+json"], body: Self.problem, at: .now)
    }

    /// The parts written out of a channel whose writer took `refusals`' answer for it.
    static func written(_ parts: [HTTPResponsePart], kept: Bool) throws -> [HTTPResponsePart] {
        let channel = EmbeddedChannel()
        let refusals = UpgradeRefusals()
        if kept { refusals.keep(Self.refusal(), for: ObjectIdentifier(channel)) }
        try channel.pipeline.syncOperations.addHandler(UpgradeRefusals.Writer(refusals))
        // Written without waiting for each write's promise: `writeOutbound` waited for ever here.
        for part in parts { channel.write(part, promise: nil) }
        channel.flush()
        channel.embeddedEventLoop.run()
        var out: [HTTPResponsePart] = []
        while let part = try channel.readOutbound(as: HTTPResponsePart.self) { out.append(part) }
        #expect(refusals.take(for: ObjectIdentifier(channel)) == nil, "the writer took the refusal")
        return out
    }

    @Test func replacesTheBareRefusalWithTheKeptAnswer() throws {
        let bare = HTTPResponse(status: .badRequest, headerFields: [.connection: "close", .contentLength: "0"])
        let out = try Self.written([.head(bare), .end(nil)], kept: true)
        guard out.count == 3, case .head(let head) = out[0], case .body(let body) = out[1], case .end = out[2] else {
            Issue.record("\(out)")
            return
        }
        #expect(head.status == .unauthorized)
        #expect(head.headerFields[.contentType] == "application/problem+json")
        #expect(head.headerFields[.connection] == "close")
        #expect(head.headerFields[.contentLength] == String(Self.problem.readableBytes))
        #expect(body == Self.problem)
    }

    @Test func leavesEveryOtherAnswerAlone() throws {
        let problem400 = HTTPResponse(status: .badRequest, headerFields: [.contentType: "application/problem+json", .contentLength: "2"])
        let ok = HTTPResponse(status: .ok, headerFields: [.contentLength: "2"])
        for head in [problem400, ok] {
            let parts: [HTTPResponsePart] = [.head(head), .body(ByteBuffer(string: "{}")), .end(nil)]
            for kept in [true, false] {
                #expect(try Self.written(parts, kept: kept) == parts, "\(head.status), kept \(kept)")
            }
        }
    }
}
