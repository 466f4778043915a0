import NIOCore
import StreamCache

/// The body of a request the proxy relays to its origin (``ProxyResponder``: any method but `GET`
/// and `HEAD`), gathered as the connection reads it, up to ``limit`` bytes.
final class RequestBody: Sendable {
    /// The most a relayed request may carry: a licence request or a form, not an upload.
    static let limit = 1 << 20

    private struct State {
        var bytes: [UInt8] = []
        /// `nil` while the body comes; then whether it came whole within the limit.
        var whole: Bool?
        var waiter: CheckedContinuation<[UInt8]?, Never>?
    }

    private let state = Locked(State())

    /// A part of the body was read.
    func append(_ buffer: ByteBuffer) {
        state.withLock { state in
            guard state.whole == nil else { return }
            if state.bytes.count + buffer.readableBytes > Self.limit {
                state.bytes = []
                finish(&state, whole: false)
            } else {
                state.bytes += buffer.readableBytesView
            }
        }
    }

    /// The body ended (`whole`), or the connection closed before it did.
    func end(whole: Bool) {
        state.withLock { finish(&$0, whole: whole) }
    }

    private func finish(_ state: inout State, whole: Bool) {
        guard state.whole == nil else { return }
        state.whole = whole
        state.waiter?.resume(returning: whole ? state.bytes : nil)
        state.waiter = nil
    }

    /// The whole body once it is read; `nil` if it outgrew ``limit`` or the connection closed first.
    func bytes() async -> [UInt8]? {
        await withCheckedContinuation { continuation in
            state.withLock { state in
                switch state.whole {
                case nil: state.waiter = continuation
                case true?: continuation.resume(returning: state.bytes)
                case false?: continuation.resume(returning: nil)
                }
            }
        }
    }
}
