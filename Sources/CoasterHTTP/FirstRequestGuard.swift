import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOHTTP1

/// Hummingbird's HTTP/1 channel with its WebSocket upgrade, and a ``FirstRequestGuard`` on each
/// connection until its first request head is read.
///
/// Until then the pipeline is NIO's upgrade negotiation, which Hummingbird sets up without error
/// handling and without an idle timeout (both come with the handlers it adds once the head is
/// read). So a first request that did not parse — a space in a header name, a bad
/// `Content-Length`, headers over the decoder's limits — got no answer, and its connection stayed
/// open until the client gave up; so did a connection that never sent a whole head.
public struct GuardedHTTPChannel<Metrics: HTTPMetricsRecording>: ServerChildChannel {
    public typealias Value = HTTP1WebSocketUpgradeChannel.Value

    let inner: HTTP1WebSocketUpgradeChannel
    /// How long a connection may take to send its first head; nil for ever.
    let idleTimeout: TimeAmount?
    /// Where the malformed requests answered are counted.
    let metrics: Metrics
    /// The `Server` header of the answers written here, as the application's configuration names it.
    let serverName: String

    public init(inner: HTTP1WebSocketUpgradeChannel, idleTimeout: TimeAmount?, metrics: Metrics, serverName: String) {
        self.inner = inner
        self.idleTimeout = idleTimeout
        self.metrics = metrics
        self.serverName = serverName
    }

    public func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        self.inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
            // Behind the upgrade handler: the handlers Hummingbird adds once the first head is
            // read go behind this one, which leaves when that head passes it.
            try channel.pipeline.syncOperations.addHandler(
                FirstRequestGuard(idleTimeout: self.idleTimeout, metrics: self.metrics, serverName: self.serverName, logger: logger))
            // In front of the upgrade handler, which must not see what it cannot upgrade to.
            let upgrades = try channel.pipeline.syncOperations.handler(
                type: NIOTypedHTTPServerUpgradeHandler<HTTP1WebSocketUpgradeChannel.UpgradeResult>.self)
            try channel.pipeline.syncOperations.addHandler(UpgradeOfferFilter(metrics: self.metrics, serverName: self.serverName),
                                                           position: .before(upgrades))
            return value
        }
    }

    public func handle(value: Value, logger: Logger) async {
        await self.inner.handle(value: value, logger: logger)
    }
}

/// Takes out of a connection's first request head the protocols it offers to upgrade to that the
/// server does not speak (any but `websocket`: `h2c`, which `curl --http2` offers on every plain
/// `http://` request, and the like), as RFC 9110 §7.8 lets a server ignore them, then leaves.
///
/// NIO's upgrade handler, given a head whose `Upgrade` names no protocol it has an upgrader for,
/// goes on as HTTP/1.1 without that head (apple/swift-nio#2632 is the same fault in a sibling
/// path): Hummingbird then read the request's end with no head before it and closed the
/// connection, so such a request got no answer at all. The request is answered now; with
/// `Connection: upgrade` as the connection's last (`Connection: close`), for NIO's decoder has
/// taken the offer then and reads nothing more from the connection.
///
/// A WebSocket offer whose handshake NIO's upgrader refuses (RFC 6455 §4.2.1: a version other
/// than 13, no single `Sec-WebSocket-Key`) used to get the connection closed with no answer; it
/// is answered here instead, as RFC 6455 §4.2.2 asks, and the connection closed
/// (``Problem/webSocketHandshake(_:)``).
final class UpgradeOfferFilter<Metrics: HTTPMetricsRecording>: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    /// Where refused handshakes are counted.
    private let metrics: Metrics
    private let serverName: String
    /// The first request was a refused handshake: what follows of it is dropped.
    private var refused = false

    init(metrics: Metrics, serverName: String) {
        self.metrics = metrics
        self.serverName = serverName
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = self.unwrapInboundIn(data) else {
            if !self.refused { context.fireChannelRead(data) }
            return
        }
        let offered = head.headers[canonicalForm: "upgrade"]
        let spoken = offered.filter { $0.lowercased() == "websocket" }
        if !spoken.isEmpty, let problem = Problem.webSocketHandshake(head.headers) {
            self.refused = true
            self.metrics.recordMalformedRequest(status: Int(problem.status.code))
            let path = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init)
            answerAndClose(BareAnswer(problem, instance: path, route: "", requestID: RequestID().description), server: self.serverName, context)
            return
        }
        if spoken.count == offered.count {
            context.fireChannelRead(data)
        } else {
            head.headers.remove(name: "upgrade")
            if spoken.isEmpty {
                if head.headers[canonicalForm: "connection"].contains(where: { $0.lowercased() == "upgrade" }) {
                    head.headers.replaceOrAdd(name: "connection", value: "close")
                }
            } else {
                head.headers.add(name: "Upgrade", value: spoken.joined(separator: ", "))
            }
            context.fireChannelRead(self.wrapInboundOut(.head(head)))
        }
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}

/// Answers a connection's first request when NIO's decoder cannot parse it, with a problem
/// (`/problems/malformed-request`: 400, or 431 for a header block over the limits) and
/// `Connection: close`, then closes; closes a connection that sends no whole head within the idle
/// timeout. It leaves the pipeline when the first head passes it, or when the connection is
/// upgraded to a WebSocket: from then on Hummingbird's handlers answer what does not parse (a 400)
/// and keep the idle timeout.
final class FirstRequestGuard<Metrics: HTTPMetricsRecording>: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart

    private let idleTimeout: TimeAmount?
    private let metrics: Metrics
    private let serverName: String
    private let logger: Logger
    private var timeout: Scheduled<Void>?
    /// The malformed request has been answered: the decoder's further errors are its echoes.
    private var answered = false

    init(idleTimeout: TimeAmount?, metrics: Metrics, serverName: String, logger: Logger) {
        self.idleTimeout = idleTimeout
        self.metrics = metrics
        self.serverName = serverName
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { self.startClock(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        self.startClock(context)
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.timeout?.cancel()
        self.timeout = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let first: Bool
        if case .head = self.unwrapInboundIn(data) { first = true } else { first = false }
        context.fireChannelRead(data)
        if first { self.leave(context) }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        context.fireUserInboundEventTriggered(event)
        // Upgraded: the head was the upgrade handler's, and what follows is WebSocket frames.
        if event is HTTPServerUpgradeEvents { self.leave(context) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parse = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        guard !self.answered else { return }
        self.answered = true
        self.timeout?.cancel()
        self.timeout = nil
        let answer = BareAnswer.malformedRequest(parse)
        self.logger.debug("malformed first request", metadata: ["error": "\(parse)", "hb.request.id": "\(answer.requestID)"])
        self.metrics.recordMalformedRequest(status: Int(answer.status.code))
        answerAndClose(answer, server: self.serverName, context)
    }

    private func startClock(_ context: ChannelHandlerContext) {
        guard let idleTimeout = self.idleTimeout, self.timeout == nil else { return }
        let loop = context.eventLoop.assumeIsolatedUnsafeUnchecked()
        self.timeout = loop.scheduleTask(in: idleTimeout) { [self] in
            self.timeout = nil
            self.close(context)
        }
    }

    private func leave(_ context: ChannelHandlerContext) {
        self.timeout?.cancel()
        self.timeout = nil
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    /// Closes (``closeBeforeUpgrade(_:)``); what the decoder says about the bytes it was left
    /// with is not answered.
    private func close(_ context: ChannelHandlerContext) {
        self.answered = true
        closeBeforeUpgrade(context)
    }
}

/// Writes `answer` beneath the HTTP encoder, as the fast lane writes its answers (the same bytes),
/// then closes (``closeBeforeUpgrade(_:)``): a connection's first request, answered before NIO's
/// upgrade negotiation has handed the connection to Hummingbird.
private func answerAndClose(_ answer: BareAnswer, server: String, _ context: ChannelHandlerContext) {
    guard let encoder = try? context.pipeline.syncOperations.context(handlerType: HTTPResponseEncoder.self) else {
        closeBeforeUpgrade(context)
        return
    }
    var date = HTTPDate()
    let bytes = answer.bytes(date: date.now(), server: server, allocator: context.channel.allocator)
    let written = context.eventLoop.makePromise(of: Void.self)
    encoder.writeAndFlush(NIOAny(IOData.byteBuffer(bytes)), promise: written)
    written.futureResult.assumeIsolated().whenComplete { _ in closeBeforeUpgrade(context) }
}

/// Closes as NIO's upgrade handler does when the peer stops sending before a whole head: it
/// closes the channel and ends the negotiation as `inputClosed`, which Hummingbird takes quietly
/// (a plain close ends it as a failure, which it logs as an error).
private func closeBeforeUpgrade(_ context: ChannelHandlerContext) {
    context.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
    context.close(promise: nil)
}

extension HTTP1Channel.Configuration.DecoderConfiguration {
    /// The decoder's limits on every connection of the server, named once: the problem for a
    /// header block over them (``Problem/malformedRequest(_:)``) states them.
    public static let server = Self()
}

extension Problem {
    /// A request NIO's decoder could not read (`/problems/malformed-request`), with
    /// `Connection: close`: what was wrong, in the client's terms; 431 for a header block over the
    /// server's decoder limits.
    public static func malformedRequest(_ error: HTTPParserError) -> Problem {
        let limits = HTTP1Channel.Configuration.DecoderConfiguration.server
        var problem = error == .headerOverflow
            ? Problem(.malformedRequest, status: .requestHeaderFieldsTooLarge, title: "Request header fields too large",
                      detail: "The request's header block is over the limits: \(limits.maxHeaderFieldCount) fields, "
                          + "\(limits.maxHeaderListSize / 1024) KiB in all, \(limits.maxHeaderFieldSize / 1024) KiB a field.")
            : Problem(.malformedRequest, status: .badRequest, title: "Malformed request",
                      detail: "The request could not be read as HTTP/1.1: \(Self.unreadable(error)).")
        problem.headers[.connection] = "close"
        return problem
    }

    /// What the decoder found wrong, in the client's terms.
    private static func unreadable(_ error: HTTPParserError) -> String {
        switch error {
        case .invalidHeaderToken: "a header field's name is not a token (no spaces, no separators) or has no colon"
        case .invalidContentLength, .unexpectedContentLength: "Content-Length is not a single decimal number"
        case .invalidMethod: "the method is not a token"
        case .invalidURL: "the request target has characters a URL cannot hold"
        case .invalidVersion: "the request line does not end with HTTP/1.0 or HTTP/1.1"
        case .invalidChunkSize: "a chunk's size is not hexadecimal"
        case .lfExpected, .invalidConstant, .invalidCharactersUsed, .strictModeAssertion:
            "the request line or a header line is not HTTP/1.1 (each ends with CRLF; no control characters)"
        case .unknown:
            // What NIO does not name: chiefly llhttp's invalid Transfer-Encoding and missing CR.
            "the body's framing is not HTTP/1.1 (Transfer-Encoding ends with chunked and comes without Content-Length; "
                + "each line ends with CRLF)"
        default: "\(error)"
        }
    }
}

extension FastLaneAnswer {
    /// The answer to a request that could not be read (no path, no route): its problem.
    public static func malformedRequest(_ error: HTTPParserError) -> Self {
        Self(Problem.malformedRequest(error), instance: nil, route: "", requestID: RequestID().description)
    }
}

extension Problem {
    /// What is wrong with a WebSocket opening handshake that NIO's upgrader would refuse
    /// (RFC 6455 §4.2.1), or `nil`: a version other than 13 is a 426 naming the one spoken (with
    /// `Sec-WebSocket-Version: 13`, §4.4), a `Sec-WebSocket-Key` that is not one base64 value of
    /// 16 bytes a 400 (`/problems/malformed-request`). Both close the connection.
    public static func webSocketHandshake(_ headers: HTTPHeaders) -> Problem? {
        var problem: Problem
        let versions = headers[canonicalForm: "sec-websocket-version"]
        let keys = headers[canonicalForm: "sec-websocket-key"]
        if versions != ["13"] {
            let asked = versions.isEmpty ? "none" : versions.map { "'\($0)'" }.joined(separator: ", ")
            problem = Problem(.upgradeRequired, status: .upgradeRequired, title: "Unsupported WebSocket version",
                              detail: "This server speaks WebSocket version 13 (RFC 6455); Sec-WebSocket-Version asked for \(asked).")
            problem.headers[HTTPField.Name("Sec-WebSocket-Version")!] = "13"
        } else if keys.count != 1 || Data(base64Encoded: String(keys[0]))?.count != 16 {
            problem = Problem(.malformedRequest, status: .badRequest, title: "Malformed WebSocket handshake",
                              detail: "Sec-WebSocket-Key must be one base64 value of 16 bytes (RFC 6455 §4.1); the request has "
                                  + (keys.isEmpty ? "none." : keys.count > 1 ? "\(keys.count)." : "'\(keys[0])'."))
        } else {
            return nil
        }
        problem.headers[.connection] = "close"
        return problem
    }
}
