import Foundation
import NIOCore

/// The hang-up of one client connection, shared by the requests that come on it one after
/// another: the wait of the request in progress is cancelled when the client goes away.
///
/// One per connection, with one callback on the channel's close, so a keep-alive connection that
/// carries thousands of requests piles up nothing.
final class ClientHangUp: @unchecked Sendable {
    // `cancelWait` and `hungUp` are guarded by `lock`.
    private let lock = NSLock()
    private var cancelWait: (@Sendable () -> Void)?
    private var hungUp = false

    /// Every open connection's hang-up, by channel; an entry goes when its channel closes.
    private static let registry = Registry()

    /// The hang-up of `channel`'s connection.
    static func of(_ channel: any Channel) -> ClientHangUp {
        registry.hangUp(of: channel)
    }

    /// Runs `body`, cancelled if the client hangs up first.
    func untilHangUp<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        // Owned by this call: awaited below, cancelled by a hang-up or by the caller's cancellation.
        let work = Task { try await body() }
        let gone = lock.withLock {
            cancelWait = { work.cancel() }
            return hungUp
        }
        if gone { work.cancel() }
        defer { lock.withLock { cancelWait = nil } }
        return try await withTaskCancellationHandler {
            try await work.value
        } onCancel: {
            work.cancel()
        }
    }

    fileprivate func fire() {
        let cancel = lock.withLock {
            hungUp = true
            return cancelWait
        }
        cancel?()
    }

    private final class Registry: @unchecked Sendable {
        // `open` is guarded by `lock`.
        private let lock = NSLock()
        private var open: [ObjectIdentifier: ClientHangUp] = [:]

        func hangUp(of channel: any Channel) -> ClientHangUp {
            let key = ObjectIdentifier(channel)
            let (hangUp, isNew) = lock.withLock {
                if let known = open[key] { return (known, false) }
                let made = ClientHangUp()
                open[key] = made
                return (made, true)
            }
            if isNew {
                channel.closeFuture.whenComplete { [self] _ in
                    lock.withLock { open[key] = nil }
                    hangUp.fire()
                }
            }
            return hangUp
        }
    }
}
