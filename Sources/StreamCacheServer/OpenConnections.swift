import Foundation
import NIOCore
import StreamCache

/// The proxy's open connections and the answers in flight on them, so a stop can ask every
/// connection to finish (graceful shutdown), close them all (once the grace is over), and wait
/// until the last answer has ended before the engine closes.
final class OpenConnections: Sendable {
    private struct State {
        var channels: [ObjectIdentifier: any Channel] = [:]
        var answers = 0
        var quiescing = false
        var closing = false
        var idleWaiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter = 0

        mutating func takeWaitersIfIdle() -> [CheckedContinuation<Void, Never>] {
            guard channels.isEmpty, answers == 0 else { return [] }
            defer { idleWaiters = [:] }
            return Array(idleWaiters.values)
        }
    }

    private let state = Locked(State())

    /// Tracks `channel` until it closes; one that opens during a stop is asked to finish at once,
    /// or closed once the grace is over.
    func add(_ channel: any Channel) {
        let key = ObjectIdentifier(channel)
        let (finishAtOnce, closeAtOnce) = state.withLock { state in
            state.channels[key] = channel
            return (state.quiescing, state.closing)
        }
        channel.closeFuture.whenComplete { [self] _ in
            let waiters = state.withLock { state in
                state.channels[key] = nil
                return state.takeWaitersIfIdle()
            }
            for waiter in waiters { waiter.resume() }
        }
        if closeAtOnce {
            channel.close(promise: nil)
        } else if finishAtOnce {
            channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        }
    }

    func answerStarted() {
        state.withLock { state in state.answers += 1 }
    }

    func answerEnded() {
        let waiters = state.withLock { state in
            state.answers -= 1
            return state.takeWaitersIfIdle()
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Whether a stop has begun (``quiesce()`` or ``closeAll()``).
    var isStopping: Bool { state.withLock { state in state.quiescing || state.closing } }

    /// Asks every connection to close once the responses it owes are written.
    func quiesce() {
        let open = state.withLock { state in
            state.quiescing = true
            return Array(state.channels.values)
        }
        for channel in open { channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent()) }
    }

    /// Closes every connection now, which cancels the answers on them.
    func closeAll() {
        let open = state.withLock { state in
            state.closing = true
            return Array(state.channels.values)
        }
        for channel in open { channel.close(promise: nil) }
    }

    /// Returns once no connection is open and no answer runs, or after `limit` at most (an
    /// answer stuck in a wait that ignores its cancellation must not keep the process up).
    func idle(within limit: Duration) async {
        await withCheckedContinuation { continuation in
            let waiter: Int? = state.withLock { state in
                if state.channels.isEmpty, state.answers == 0 { return nil }
                state.nextWaiter += 1
                state.idleWaiters[state.nextWaiter] = continuation
                return state.nextWaiter
            }
            guard let waiter else { return continuation.resume() }
            DispatchQueue.global().asyncAfter(deadline: .now() + limit.seconds) { [self] in
                state.withLock { state in state.idleWaiters.removeValue(forKey: waiter) }?.resume()
            }
        }
    }
}
