import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTPTypes

/// Answers the hot read routes (``FastRoutes``) on the event loop that read the request, in the
/// channel's pipeline, and passes every other request on to the router unchanged.
///
/// It sits between the HTTP codec and Hummingbird's connection handling, one per connection.
/// Requests it answers never reach the router: no task is started, nothing hops to another thread.
/// Three things the router's side would otherwise do for every request are kept here:
/// - **Order.** HTTP/1.1 lets a client send requests before earlier answers arrive; answers must
///   leave in the order requests came. While any request passed to the router has not had the end
///   of its response written, every request goes to the router too.
/// - **The idle timeout.** Hummingbird's connection handler never sees the requests answered here,
///   so it would close a busy connection as idle; the server gives it no timeout and this handler
///   keeps the same one over every request (``idleTimeout``).
/// - **Shutting down.** A request being read here when the server asks connections to quiesce is
///   answered before the connection handler hears of it.
final class FastLane: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let routes: FastRoutes
    /// Close a connection that has been idle this long: no request being read, none being answered.
    private let idleTimeout: TimeAmount?
    /// Requests passed to the router whose response has not ended.
    private var routed = 0
    /// Between a request's head and its end.
    private var reading = false
    /// The answer to the request being read, sent when its end arrives.
    private var pending: (answer: FastRoutes.Answer, start: ContinuousClock.Instant)?
    /// A quiesce event held back until the pending answer is sent.
    private var heldQuiesce: Any?
    private var lastActive = NIODeadline.now()
    private var idleCheck: Scheduled<Void>?
    private var date = HTTPDate()

    init(routes: FastRoutes, idleTimeout: TimeAmount?) {
        self.routes = routes
        self.idleTimeout = idleTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { self.becameActive(context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.idleCheck?.cancel()
        self.idleCheck = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        self.becameActive(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.idleCheck?.cancel()
        self.idleCheck = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        self.lastActive = .now()
        switch self.unwrapInboundIn(data) {
        case .head(let head):
            self.reading = true
            if self.routed == 0 {
                let start = ContinuousClock.now
                if let answer = self.routes.answer(head) {
                    self.pending = (answer, start)
                    return
                }
            }
            self.routed += 1
            context.fireChannelRead(data)
        case .body:
            // A body on a request answered here is not read (it has none: see `FastRoutes.plain`).
            if self.pending == nil { context.fireChannelRead(data) }
        case .end:
            self.reading = false
            guard let pending = self.pending else {
                context.fireChannelRead(data)
                return
            }
            self.pending = nil
            self.send(pending.answer, context: context)
            self.routes.metrics.request(method: "GET", route: pending.answer.route, status: Int(pending.answer.status.code),
                                        duration: ContinuousClock.now - pending.start)
            self.routes.metrics.fastLaneAnswered(route: pending.answer.route)
            if let event = self.heldQuiesce {
                self.heldQuiesce = nil
                context.fireUserInboundEventTriggered(event)
            }
        }
    }

    /// The response as the router's would be: its headers, then the request id, date and server.
    private func send(_ answer: FastRoutes.Answer, context: ChannelHandlerContext) {
        var response = HTTPResponse(status: answer.status)
        response.headerFields = answer.headers
        response.headerFields[.contentLength] = String(answer.body.readableBytes)
        response.headerFields[.requestID] = answer.requestID
        response.headerFields[.date] = self.date.now()
        response.headerFields[.server] = "coasterlife"
        context.write(self.wrapOutboundOut(.head(response)), promise: nil)
        context.write(self.wrapOutboundOut(.body(answer.body)), promise: nil)
        context.writeAndFlush(self.wrapOutboundOut(.end(nil)), promise: nil)
        self.lastActive = .now()
        self.scheduleIdleCheck(context, at: self.lastActive)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = self.unwrapOutboundIn(data) {
            // Never below zero: Hummingbird may also answer what never reached it as a request
            // (a 400 for a request the codec could not parse).
            self.routed = max(0, self.routed - 1)
            if self.routed == 0 {
                self.lastActive = .now()
                self.scheduleIdleCheck(context, at: self.lastActive)
            }
        }
        context.write(data, promise: promise)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent, self.pending != nil {
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
        // A request read and being answered by the router: checked again once its answer ends.
        if !self.reading, self.routed > 0 { return }
        if NIODeadline.now() >= self.lastActive + timeout {
            context.close(promise: nil)
        } else {
            self.scheduleIdleCheck(context, at: self.lastActive)
        }
    }
}

/// The `Date` header's value (RFC 9110 IMF-fixdate), formatted at most once a second.
struct HTTPDate {
    private var second = Int.min
    private var text = ""

    mutating func now() -> String {
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
