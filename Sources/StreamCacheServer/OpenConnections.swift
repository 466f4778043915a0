import Foundation
import NIOCore

/// The proxy's open connections and the answers in flight on them, so a stop can ask every
/// connection to finish (graceful shutdown), close them all (once the grace is over), and wait
/// until the last answer has ended before the engine closes.
final class OpenConnections: @unchecked Sendable {
    // Every property is guarded by `lock`.
    private let lock = NSLock()
    private var channels: [ObjectIdentifier: any Channel] = [:]
    private var answers = 0
    private var quiescing = false
    private var closing = false
    private var idleWaiters: [Int: CheckedContinuation<Void, Never>] = [:]
    private var nextWaiter = 0

    /// Tracks `channel` until it closes; one that opens during a stop is asked to finish at once,
    /// or closed once the grace is over.
    func add(_ channel: any Channel) {
        let key = ObjectIdentifier(channel)
        let (finishAtOnce, closeAtOnce) = lock.withLock {
            channels[key] = channel
            return (quiescing, closing)
        }
        channel.closeFuture.whenComplete { [self] _ in
            let waiters = lock.withLock {
                channels[key] = nil
                return takeWaitersIfIdle()
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
        lock.withLock { answers += 1 }
    }

    func answerEnded() {
        let waiters = lock.withLock {
            answers -= 1
            return takeWaitersIfIdle()
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Whether a stop has begun (``quiesce()`` or ``closeAll()``).
    var isStopping: Bool { lock.withLock { quiescing || closing } }

    /// Asks every connection to close once the responses it owes are written.
    func quiesce() {
        let open = lock.withLock {
            quiescing = true
            return Array(channels.values)
        }
        for channel in open { channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent()) }
    }

    /// Closes every connection now, which cancels the answers on them.
    func closeAll() {
        let open = lock.withLock {
            closing = true
            return Array(channels.values)
        }
        for channel in open { channel.close(promise: nil) }
    }

    /// Returns once no connection is open and no answer runs, or after `limit` at most (an
    /// answer stuck in a wait that ignores its cancellation must not keep the process up).
    func idle(within limit: Duration) async {
        await withCheckedContinuation { continuation in
            let waiter: Int? = lock.withLock {
                if channels.isEmpty, answers == 0 { return nil }
                nextWaiter += 1
                idleWaiters[nextWaiter] = continuation
                return nextWaiter
            }
            guard let waiter else { return continuation.resume() }
            DispatchQueue.global().asyncAfter(deadline: .now() + limit.seconds) { [self] in
                lock.withLock { idleWaiters.removeValue(forKey: waiter) }?.resume()
            }
        }
    }

    private func takeWaitersIfIdle() -> [CheckedContinuation<Void, Never>] {
        guard channels.isEmpty, answers == 0 else { return [] }
        defer { idleWaiters = [:] }
        return Array(idleWaiters.values)
    }
}
