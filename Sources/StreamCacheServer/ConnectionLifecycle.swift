import NIOCore
import NIOHTTP1

/// When a proxy connection closes, as a pure state machine (``ConnectionLifecycleHandler``
/// carries out its actions).
///
/// A connection closes once it has gone the idle timeout without a request part while no
/// response is due: idle keep-alive, a request line or headers trickled in forever, a body that
/// stopped. A response being written is never cut by it. On graceful shutdown it closes at once
/// when no response is due, else after the last one due has been written.
struct ConnectionLifecycle {
    enum Action: Equatable {
        case none
        /// Look again at this time.
        case checkAt(NIODeadline)
        case close
    }

    let idleTimeout: TimeAmount
    /// Requests whose head was read and whose response has not been written to its end.
    private(set) var responsesDue = 0
    /// Whether a request's head was read and its end not yet.
    private var readingRequest = false
    /// When the last request part was read or the last response ended.
    private var lastActivity: NIODeadline
    /// Whether the server is shutting down.
    private var quiescing = false

    init(idleTimeout: TimeAmount, now: NIODeadline) {
        self.idleTimeout = idleTimeout
        self.lastActivity = now
    }

    /// When to look first.
    var firstCheck: Action { .checkAt(lastActivity + idleTimeout) }

    /// A request part arrived.
    mutating func read(_ part: HTTPServerRequestPart, now: NIODeadline) {
        lastActivity = now
        switch part {
        case .head:
            responsesDue += 1
            readingRequest = true
        case .body:
            break
        case .end:
            readingRequest = false
        }
    }

    /// A response part is being written.
    mutating func writing(_ part: HTTPServerResponsePart, now: NIODeadline) -> Action {
        guard case .end = part else { return .none }
        return responseEnded(now: now)
    }

    /// A response has been written to its end.
    mutating func responseEnded(now: NIODeadline) -> Action {
        responsesDue -= 1
        return answeredUnread(now: now)
    }

    /// A request this machine did not read was answered whole (``WarmShortcutHandler``).
    mutating func answeredUnread(now: NIODeadline) -> Action {
        guard responsesDue == 0 else { return .none }
        if quiescing { return .close }
        lastActivity = now
        return .none
    }

    /// The time to look has come.
    func check(now: NIODeadline) -> Action {
        if responsesDue > 0, !readingRequest {
            // A response is on its way: the client is waiting, not idle.
            return .checkAt(now + idleTimeout)
        }
        let due = lastActivity + idleTimeout
        return now >= due ? .close : .checkAt(due)
    }

    /// The server asked connections to finish.
    mutating func quiesce() -> Action {
        quiescing = true
        return responsesDue == 0 ? .close : .none
    }
}
