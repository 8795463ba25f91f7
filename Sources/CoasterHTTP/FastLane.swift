import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// Answers the hot routes (its ``FastLaneRoutes``: a service's reads, and batches it records) on
/// the event loop that read the request, in the channel's pipeline, and passes every other request
/// on to the router unchanged.
///
/// It reads NIO's request parts, one per connection, in front of the codec that turns them into
/// `HTTPTypes` ones for Hummingbird (``CodecFrontInstaller`` puts it there). Requests it answers
/// never reach the router: no task is started, nothing hops to the concurrency pool (a body the
/// routes record goes to their writer, and its answer comes back when it is committed), and their
/// heads are not converted: the conversion copied every header into new fields and parsed the target
/// with `URLComponents`, whose answer an origin-form target never uses (2.1 µs of a 37 µs read
/// under `perf`).
/// Three things the router's side would otherwise do for every request are kept here:
/// - **Order.** HTTP/1.1 lets a client send requests before earlier answers arrive; answers must
///   leave in the order requests came. While any request passed to the router has not had the end
///   of its response written, every request goes to the router too; while a body read here is
///   being committed, what arrives is held, and nothing more read, until its answer is written.
/// - **The idle timeout.** Hummingbird's connection handler never sees the requests answered here,
///   so it would close a busy connection as idle; the server gives it no timeout and this handler
///   keeps the same one over every request (``idleTimeout``).
/// - **Shutting down.** A request being read or committed here when the server asks connections to
///   quiesce is answered before the connection handler hears of it.
///
/// Its answers are written as the bytes the HTTP encoder would write for them, straight to the
/// socket's end of the pipeline (``WireOut``): turning a response into `HTTPTypes` parts, then
/// NIO's, then bytes, was a tenth of a `/health` request's CPU.
public final class FastLane<Routes: FastLaneRoutes>: ChannelDuplexHandler, RemovableChannelHandler {
    public typealias InboundIn = HTTPServerRequestPart
    public typealias InboundOut = HTTPServerRequestPart
    public typealias OutboundIn = HTTPServerResponsePart
    public typealias OutboundOut = HTTPServerResponsePart

    private let routes: Routes
    /// The `Server` header's value, as the application's configuration names it.
    private let serverName: String
    /// Close a connection that has been idle this long: no request being read, none being answered.
    private let idleTimeout: TimeAmount?
    /// Requests passed to the router whose response has not ended.
    private var routed = 0
    /// Between a request's head and its end.
    private var reading = false
    /// The answer to the request being read, sent when its end arrives.
    private var pending: (answer: FastLaneAnswer<Routes.Series>, start: ContinuousClock.Instant)?
    /// A request whose body is being read here (``FastLaneRoutes/bodyRequest(_:start:)``), its body so far.
    private var bodyRequest: Routes.BodyRequest?
    /// A request read here waits for the routes (its body is being committed). Until its answer
    /// is written, what arrives is held in order (``held``) and nothing more is read (``readHeld``).
    private var awaiting = false
    private var held: [HTTPServerRequestPart] = []
    /// The channel asked for a read while ``awaiting``: passed on once the answer is written.
    private var readHeld = false
    private var removed = false
    /// A quiesce event held back until the pending answer is sent.
    private var heldQuiesce: Any?
    private var lastActive = NIODeadline.now()
    private var idleCheck: Scheduled<Void>?
    private var date = HTTPDate()
    /// Where the answers' bytes are written: the pipeline's first handler, below the codec.
    private let wire = WireOut()

    /// A request the decoder could not read, behind a body being committed or requests the
    /// router is answering: answered after them.
    private var heldError: HTTPParserError?
    /// A malformed request was answered and the connection is closing: the decoder's further
    /// errors are its echoes.
    private var closing = false

    /// - Parameters:
    ///   - routes: What the lane answers.
    ///   - idleTimeout: Close a connection idle this long; `nil` never (give Hummingbird's
    ///     connection handler none: it does not see the requests answered here).
    ///   - serverName: The `Server` header's value, as the application's configuration names it.
    public init(routes: Routes, idleTimeout: TimeAmount?, serverName: String) {
        self.routes = routes
        self.idleTimeout = idleTimeout
        self.serverName = serverName
    }

    public func handlerAdded(context: ChannelHandlerContext) {
        do {
            try context.pipeline.syncOperations.addHandler(self.wire, position: .first)
        } catch {
            // Only if the channel is already closing: nothing will be answered here.
            self.routes.logger.debug("fast lane: no place for its writer", metadata: ["error": "\(error)"])
        }
        if context.channel.isActive { self.becameActive(context) }
    }

    public func handlerRemoved(context: ChannelHandlerContext) {
        self.removed = true
        self.idleCheck?.cancel()
        self.idleCheck = nil
    }

    public func channelActive(context: ChannelHandlerContext) {
        self.becameActive(context)
        context.fireChannelActive()
    }

    public func channelInactive(context: ChannelHandlerContext) {
        self.idleCheck?.cancel()
        self.idleCheck = nil
        context.fireChannelInactive()
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        self.lastActive = .now()
        self.handle(self.unwrapInboundIn(data), context: context)
    }

    private func handle(_ part: HTTPServerRequestPart, context: ChannelHandlerContext) {
        if self.awaiting {
            self.held.append(part)
            return
        }
        switch part {
        case .head(var head):
            self.reading = true
            // An HTTP/1.0 request is the router's: it is to close the connection.
            if head.version == .http1_0 { head.closingAsAsked() }
            if self.routed == 0, self.wire.context != nil {
                let start = ContinuousClock.now
                if let answer = self.routes.answer(head) {
                    self.pending = (answer, start)
                    return
                }
                if let request = self.routes.bodyRequest(head, start: start) {
                    self.bodyRequest = request
                    return
                }
                // Nothing is owed before this request, so its interim answer can go now.
                if head.expectsContinue { self.sendContinue() }
            }
            // Asked to close in words Hummingbird does not read (the lane answers only requests
            // whose `Connection` is `keep-alive` or absent).
            head.closingAsAsked()
            self.routed += 1
            context.fireChannelRead(self.wrapInboundOut(.head(head)))
        case .body(var bytes):
            if self.bodyRequest != nil {
                if self.bodyRequest!.body.readableBytes == 0 {
                    self.bodyRequest!.body = bytes
                } else {
                    self.bodyRequest!.body.writeBuffer(&bytes)
                }
            } else if self.pending == nil {
                // A body on a request answered from its head alone is not read (the routes take
                // only requests that have none).
                context.fireChannelRead(self.wrapInboundOut(part))
            }
        case .end:
            self.reading = false
            if let request = self.bodyRequest {
                self.bodyRequest = nil
                self.awaiting = true
                self.routes.answer(request, on: context.eventLoop) { [self] answer in
                    self.answered(answer, method: "POST", start: request.start, context: context)
                }
                return
            }
            guard let pending = self.pending else {
                context.fireChannelRead(self.wrapInboundOut(part))
                return
            }
            self.pending = nil
            self.answered(pending.answer, method: "GET", start: pending.start, context: context)
        }
    }

    /// Writes the answer to the request read here last, then handles what arrived meanwhile.
    private func answered(_ answer: FastLaneAnswer<Routes.Series>, method: String, start: ContinuousClock.Instant, context: ChannelHandlerContext) {
        // A channel closed while its request was being answered: nothing to answer.
        guard !self.removed else { return }
        self.awaiting = false
        self.send(answer, context: context)
        if let series = answer.series {
            self.routes.count(series, duration: ContinuousClock.now - start)
        } else {
            self.routes.metrics.recordRequest(method: method, route: answer.route, status: Int(answer.status.code),
                                              duration: ContinuousClock.now - start)
            self.routes.metrics.recordFastLaneAnswer(route: answer.route)
        }
        if !self.held.isEmpty {
            let held = self.held
            self.held = []
            // In order; a request among them may wait for the store in turn, holding the rest again.
            for part in held { self.handle(part, context: context) }
            // What was passed on reaches the router's side only at the end of a read.
            context.fireChannelReadComplete()
        }
        if let error = self.heldError, !self.awaiting {
            self.heldError = nil
            self.errorCaught(context: context, error: error)
        }
        if self.readHeld, !self.awaiting {
            self.readHeld = false
            context.read()
        }
        if let event = self.heldQuiesce, self.pending == nil, self.bodyRequest == nil, !self.awaiting {
            self.heldQuiesce = nil
            context.fireUserInboundEventTriggered(event)
        }
    }

    public func read(context: ChannelHandlerContext) {
        if self.awaiting {
            self.readHeld = true
        } else {
            context.read()
        }
    }

    /// A request the decoder could not read (a space in a header name, a bad `Content-Length`, a
    /// bad chunk size) is answered here with a problem, and the connection closed: the router's
    /// side would answer a bare 400. Behind a body being committed, or behind requests the
    /// router is answering, it waits for their answers (``answered(_:method:start:context:)``,
    /// ``write(context:data:promise:)``). Only an error inside a request the router is reading
    /// (a bad chunk of its body) goes on to the router, whose request it is. (A connection's
    /// first request never gets here: ``FirstRequestGuard`` answers it.)
    public func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parse = error as? HTTPParserError, self.wire.context != nil else {
            context.fireErrorCaught(error)
            return
        }
        if self.closing { return }
        if self.awaiting || (self.routed > 0 && !self.reading) {
            self.heldError = parse
            return
        }
        guard self.routed == 0 else {
            context.fireErrorCaught(error)
            return
        }
        self.answerMalformed(parse, context: context)
    }

    /// Answers a request the decoder could not read with its problem, then closes.
    private func answerMalformed(_ parse: HTTPParserError, context: ChannelHandlerContext) {
        self.closing = true
        self.pending = nil
        self.bodyRequest = nil
        self.reading = false
        let answer = BareAnswer.malformedRequest(parse)
        self.routes.logger.debug("malformed request", metadata: ["error": "\(parse)", "hb.request.id": "\(answer.requestID)"])
        self.routes.metrics.recordMalformedRequest(status: Int(answer.status.code))
        let written = context.eventLoop.makePromise(of: Void.self)
        self.send(answer, context: context, promise: written)
        written.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }

    /// `100 Continue`, which Hummingbird never sends: a client that asked for it waited a second
    /// (curl's timeout) before sending a photo. Sent only when no answer is owed before it: an
    /// interim answer belongs to the request being answered next.
    private func sendContinue() {
        guard let wire = self.wire.context else { return }
        var bytes = wire.channel.allocator.buffer(capacity: 25)
        bytes.writeStaticString("HTTP/1.1 100 Continue\r\n\r\n")
        wire.writeAndFlush(NIOAny(IOData.byteBuffer(bytes)), promise: nil)
    }

    /// The response as the router's would be, byte for byte (``FastLaneAnswer/bytes(date:server:allocator:)``).
    private func send<Series>(_ answer: FastLaneAnswer<Series>, context: ChannelHandlerContext, promise: EventLoopPromise<Void>? = nil) {
        guard let wire = self.wire.context else {
            promise?.succeed()
            return
        }
        let bytes = answer.bytes(date: self.date.now(), server: self.serverName, allocator: context.channel.allocator)
        wire.writeAndFlush(NIOAny(IOData.byteBuffer(bytes)), promise: promise)
        self.lastActive = .now()
        self.scheduleIdleCheck(context, at: self.lastActive)
    }

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = self.unwrapOutboundIn(data) {
            // Never below zero: Hummingbird may also answer what never reached it as a request
            // (a 400 for a request the codec could not parse).
            self.routed = max(0, self.routed - 1)
            if self.routed == 0 {
                self.lastActive = .now()
                self.scheduleIdleCheck(context, at: self.lastActive)
                if let error = self.heldError {
                    // The router's last answer is written first; the problem follows it.
                    self.heldError = nil
                    context.write(data, promise: promise)
                    self.answerMalformed(error, context: context)
                    return
                }
            }
        }
        context.write(data, promise: promise)
    }

    public func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent, self.pending != nil || self.bodyRequest != nil || self.awaiting {
            self.heldQuiesce = event
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    // MARK: The idle timeout (as Hummingbird's connection handler keeps it)

    private func becameActive(_ context: ChannelHandlerContext) {
        self.lastActive = .now()
        self.scheduleIdleCheck(context, at: self.lastActive)
    }

    /// Checks for idleness a timeout after `from`, unless a check is already due.
    private func scheduleIdleCheck(_ context: ChannelHandlerContext, at from: NIODeadline) {
        guard let idleTimeout = self.idleTimeout, self.idleCheck == nil else { return }
        let loop = context.eventLoop.assumeIsolatedUnsafeUnchecked()
        self.idleCheck = loop.scheduleTask(deadline: from + idleTimeout) { [self] in
            self.idleCheck = nil
            self.checkIdle(context, timeout: idleTimeout)
        }
    }

    private func checkIdle(_ context: ChannelHandlerContext, timeout: TimeAmount) {
        // A request read and being answered (by the router, or here once the store has written
        // it): checked again once its answer ends.
        if self.awaiting || (!self.reading && self.routed > 0) { return }
        if NIODeadline.now() >= self.lastActive + timeout {
            context.close(promise: nil)
        } else {
            self.scheduleIdleCheck(context, at: self.lastActive)
        }
    }
}

extension FastLaneAnswer {
    /// The answer whole, head and body, as the bytes the HTTP encoder would write for it.
    public func bytes(date: String, server: String, allocator: ByteBufferAllocator) -> ByteBuffer {
        var bytes = allocator.buffer(capacity: 192 + self.body.readableBytes)
        self.writeHead(date: date, server: server, into: &bytes)
        var body = self.body
        bytes.writeBuffer(&body)
        return bytes
    }

    /// The status line and header block, as NIO's `HTTPResponseEncoder` writes the `HTTPResponse`
    /// the router would make of the answer (FastLaneTests compares the two): its headers, then the
    /// request id, date and server, in the order and spelling NIO's encoder writes them.
    public func writeHead(date: String, server: String, into bytes: inout ByteBuffer) {
        if self.status == .ok {
            bytes.writeStaticString("HTTP/1.1 200 OK\r\n")
        } else {
            // NIO's phrase for the code, as its encoder writes it (413 is "Payload Too Large" there).
            let status = HTTPResponseStatus(statusCode: self.status.code, reasonPhrase: self.status.reasonPhrase)
            bytes.writeString("HTTP/1.1 \(self.status.code) \(status.reasonPhrase)\r\n")
        }
        func field(_ name: String, _ value: String) {
            bytes.writeString(name)
            bytes.writeStaticString(": ")
            bytes.writeString(value)
            bytes.writeStaticString("\r\n")
        }
        for header in self.headers { field(header.name.rawName, header.value) }
        field(HTTPField.Name.contentLength.rawName, String(self.body.readableBytes))
        field(HTTPField.Name.requestID.rawName, self.requestID)
        field(HTTPField.Name.date.rawName, date)
        field(HTTPField.Name.server.rawName, server)
        bytes.writeStaticString("\r\n")
    }
}

/// The `Date` header's value (RFC 9110 IMF-fixdate), formatted at most once a second.
public struct HTTPDate {
    private var second = Int.min
    private var text = ""

    public init() {}

    public mutating func now() -> String {
        var t = time(nil)
        guard Int(t) != self.second else { return self.text }
        var parts = tm()
        gmtime_r(&t, &parts)
        self.second = Int(t)
        self.text = Self.format(parts)
        return self.text
    }

    static func format(_ t: tm) -> String {
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(days[Int(t.tm_wday)]), \(two(t.tm_mday)) \(months[Int(t.tm_mon)]) \(t.tm_year + 1900) "
            + "\(two(t.tm_hour)):\(two(t.tm_min)):\(two(t.tm_sec)) GMT"
    }
}

extension HTTPRequestHead {
    /// Whether the client waits for `100 Continue` before it sends the body (RFC 9110 §10.1.1;
    /// curl does for bodies over 1 MiB, a photo): not when the framing says there is none.
    var expectsContinue: Bool {
        guard self.version == .http1_1, self.headers[canonicalForm: "expect"].contains(where: { $0.lowercased() == "100-continue" })
        else { return false }
        return self.headers.contains(name: "transfer-encoding") || self.headers[canonicalForm: "content-length"].contains { $0 != "0" }
    }
}

/// Puts its handler (``FastLane``, or ``ConnectionCloser`` without the lane) in front of the HTTP
/// codec (`HTTP1ToHTTPServerCodec`), where requests are NIO's parts with their version, then
/// leaves the pipeline: Hummingbird adds the handlers it is given behind the codec, where requests
/// arrive as `HTTPTypes` parts, already converted.
public final class CodecFrontInstaller: ChannelInboundHandler, RemovableChannelHandler {
    public typealias InboundIn = HTTPRequestPart

    private let handler: any ChannelHandler
    private let logger: Logger

    public init(_ handler: any ChannelHandler, logger: Logger) {
        self.handler = handler
        self.logger = logger
    }

    public func handlerAdded(context: ChannelHandlerContext) {
        do {
            let codec = try context.pipeline.syncOperations.handler(type: HTTP1ToHTTPServerCodec.self)
            try context.pipeline.syncOperations.addHandler(self.handler, position: .before(codec))
        } catch {
            // No codec (the pipeline is not HTTP/1's), or the channel is closing: the router
            // answers everything as it is.
            self.logger.debug("not installed in front of the codec", metadata: ["handler": "\(type(of: self.handler))", "error": "\(error)"])
        }
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}

extension HTTPRequestHead {
    /// The request with `Connection: close`, spelled so, if it is to be its connection's last:
    /// Hummingbird ends a connection only after a request whose `Connection` field is exactly
    /// `close`, and reads requests as `HTTPTypes`, which have no version. So an HTTP/1.0 request
    /// (whose default is to close, RFC 9112 §9.3; its `keep-alive` option is declined, as a server
    /// may) and one asking to close in other words (`Close`, `close, TE`) had their connection
    /// kept open, and a client reading until the close (monitoring probes, scripts) waited out the
    /// idle timeout.
    mutating func closingAsAsked() {
        if self.version != .http1_0 {
            let options = self.headers[canonicalForm: "connection"]
            guard options != ["close"], options.contains(where: { $0.lowercased() == "close" }) else { return }
        }
        self.headers.replaceOrAdd(name: "connection", value: "close")
    }
}

/// Without the fast lane, does the two things the lane does for every request the router answers:
/// marks each request that is to be its connection's last so that Hummingbird closes after it
/// (``NIOHTTP1/HTTPRequestHead/closingAsAsked()``), and tells a client that waits for it to send
/// its body (`Expect: 100-continue`, ``NIOHTTP1/HTTPRequestHead/expectsContinue``), which Hummingbird never
/// does: curl waited a second before sending a photo to `serve --no-fast-lane`. As in the lane,
/// `100 Continue` goes only when no answer is owed before it (an interim answer belongs to the
/// request answered next); a pipelined request behind others waits for its client's timeout.
public final class ConnectionCloser: ChannelDuplexHandler, RemovableChannelHandler {
    public typealias InboundIn = HTTPServerRequestPart
    public typealias InboundOut = HTTPServerRequestPart
    public typealias OutboundIn = HTTPServerResponsePart
    public typealias OutboundOut = HTTPServerResponsePart

    /// Requests read whose response has not ended.
    private var owed = 0

    public init() {}

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = self.unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        if self.owed == 0, head.expectsContinue {
            context.writeAndFlush(self.wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .continue))), promise: nil)
        }
        self.owed += 1
        head.closingAsAsked()
        context.fireChannelRead(self.wrapInboundOut(.head(head)))
    }

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = self.unwrapOutboundIn(data) { self.owed = max(0, self.owed - 1) }
        context.write(data, promise: promise)
    }
}

/// Says `Connection: close` in the answer to a request that is its connection's last, as RFC 9112
/// §9.6 asks of a server that closes: Hummingbird closes after it but sends the answer's head as
/// the routes made it. Such a request always reaches the router (see
/// ``NIOHTTP1/HTTPRequestHead/closingAsAsked()``), which runs this first.
public struct ConnectionCloseMiddleware<Context: RequestContext>: RouterMiddleware {
    public init() {}

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        // The test Hummingbird makes before closing.
        if request.headers[.connection] == "close" { response.headers[.connection] = "close" }
        return response
    }
}

/// The pipeline's first handler, put there by ``FastLane``: its context writes to the socket
/// beneath the HTTP codec. Everything else passes through untouched.
final class WireOut: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = IOData

    /// Set while the handler is in a pipeline; only touched on the channel's event loop.
    private(set) var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }
}
