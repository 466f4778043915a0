import NIOCore
import NIOHTTP1
import Testing

@testable import StreamCacheServer

/// When a proxy connection closes: after the idle timeout without a request part while no
/// response is due, never while a response is on its way, and on graceful shutdown once the
/// responses due are written.
@Suite struct ConnectionLifecycleTests {
    let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
    let timeout = TimeAmount.seconds(30)
    let head = HTTPServerRequestPart.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: "/"))
    let response = HTTPServerResponsePart.end(nil)

    func at(_ seconds: Int64) -> NIODeadline { start + .seconds(seconds) }

    @Test func anIdleConnectionClosesAfterTheTimeoutFromItsLastActivity() {
        var lifecycle = ConnectionLifecycle(idleTimeout: timeout, now: start)
        #expect(lifecycle.firstCheck == .checkAt(at(30)))
        #expect(lifecycle.check(now: at(29)) == .checkAt(at(30)))
        #expect(lifecycle.check(now: at(30)) == .close)

        // A request and its response move the start of the idle time.
        lifecycle.read(head, now: at(10))
        lifecycle.read(.end(nil), now: at(10))
        #expect(lifecycle.writing(response, now: at(25)) == ConnectionLifecycle.Action.none)
        #expect(lifecycle.check(now: at(30)) == .checkAt(at(55)))
        #expect(lifecycle.check(now: at(55)) == .close)
    }

    @Test func aResponseOnItsWayIsNeverCutHoweverLong() {
        var lifecycle = ConnectionLifecycle(idleTimeout: timeout, now: start)
        lifecycle.read(head, now: at(1))
        lifecycle.read(.end(nil), now: at(1))
        #expect(lifecycle.check(now: at(31)) == .checkAt(at(61)))
        #expect(lifecycle.check(now: at(3_600)) == .checkAt(at(3_630)))
        #expect(lifecycle.writing(.head(HTTPResponseHead(version: .http1_1, status: .ok)), now: at(3_600)) == .none)
        #expect(lifecycle.writing(response, now: at(3_601)) == .none)
        #expect(lifecycle.check(now: at(3_631)) == .close)
    }

    @Test func aRequestThatStopsHalfwayIsIdle() {
        var lifecycle = ConnectionLifecycle(idleTimeout: timeout, now: start)
        lifecycle.read(head, now: at(1))
        lifecycle.read(.body(ByteBuffer(string: "x")), now: at(20))
        #expect(lifecycle.check(now: at(31)) == .checkAt(at(50)))
        #expect(lifecycle.check(now: at(50)) == .close)
    }

    @Test func shutdownClosesAnIdleConnectionAtOnceAndABusyOneAfterItsLastResponse() {
        var idle = ConnectionLifecycle(idleTimeout: timeout, now: start)
        #expect(idle.quiesce() == .close)

        var busy = ConnectionLifecycle(idleTimeout: timeout, now: start)
        for _ in 0..<2 {
            busy.read(head, now: at(1))
            busy.read(.end(nil), now: at(1))
        }
        #expect(busy.quiesce() == .none)
        #expect(busy.writing(response, now: at(2)) == .none)
        #expect(busy.writing(response, now: at(3)) == .close)
    }

    /// A request answered whole before the HTTP decoder (the warm shortcut), which the machine
    /// never read: it moves the start of the idle time and leaves nothing due.
    @Test func aRequestAnsweredUnreadLeavesNothingDue() {
        var lifecycle = ConnectionLifecycle(idleTimeout: timeout, now: start)
        #expect(lifecycle.answeredUnread(now: at(20)) == .none)
        #expect(lifecycle.responsesDue == 0)
        #expect(lifecycle.check(now: at(30)) == .checkAt(at(50)))
        #expect(lifecycle.quiesce() == .close)

        // While a response the machine read is due, it is that response's end that counts.
        var busy = ConnectionLifecycle(idleTimeout: timeout, now: start)
        busy.read(head, now: at(1))
        busy.read(.end(nil), now: at(1))
        #expect(busy.quiesce() == .none)
        #expect(busy.answeredUnread(now: at(2)) == .none)
        #expect(busy.writing(response, now: at(3)) == .close)
    }
}
