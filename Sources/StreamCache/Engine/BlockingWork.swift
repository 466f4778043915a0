import Foundation

/// Work that blocks its thread (a name looked up with `getaddrinfo`), run on threads of its own,
/// at most ``limit`` at a time: it holds neither an event loop nor a thread of the cooperative
/// pool, which every task and the engine's actor share, and a flood of it waits its turn here.
enum BlockingWork {
    /// Threads running blocking work at once, at most.
    static let limit = 8

    private static let slots = Locked(Slots())

    private struct Slots {
        var running = 0
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    /// Runs `body` on a thread of its own once one of the ``limit`` slots is free.
    static func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await acquire()
        return await withCheckedContinuation { continuation in
            Thread {
                let result = body()
                release()
                continuation.resume(returning: result)
            }.start()
        }
    }

    private static func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let admitted = slots.withLock { slots in
                guard slots.running < limit else {
                    slots.waiting.append(continuation)
                    return false
                }
                slots.running += 1
                return true
            }
            if admitted { continuation.resume() }
        }
    }

    private static func release() {
        let next = slots.withLock { slots in
            // A slot freed goes to the first waiter, which keeps it.
            guard !slots.waiting.isEmpty else {
                slots.running -= 1
                return CheckedContinuation<Void, Never>?.none
            }
            return slots.waiting.removeFirst()
        }
        next?.resume()
    }
}
