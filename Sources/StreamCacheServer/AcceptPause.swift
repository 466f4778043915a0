import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Stops the listener accepting for a moment when an accept fails for want of descriptors or
/// memory.
///
/// The connection waiting to be accepted keeps the listening socket readable, so every accept
/// after the first failure fails at once: an event loop spun at full speed for as long as the
/// process had no descriptor to spare. (SwiftNIO's `AcceptBackoffHandler` delays the next read
/// request, but the failed accept leaves its read pending, and the loop reads again without one.)
/// Turning `autoRead` off takes the socket out of the loop's interest until it is turned on again.
final class AcceptPause: ChannelInboundHandler {
    typealias InboundIn = any Channel

    /// How long the listener rests after a failed accept.
    static let pause: TimeAmount = .milliseconds(100)

    private var isPaused = false

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let error = error as? IOError, [EMFILE, ENFILE, ENOBUFS, ENOMEM].contains(error.errnoCode) else {
            context.fireErrorCaught(error)
            return
        }
        guard !isPaused else { return }
        isPaused = true
        let channel = context.channel
        let pause = NIOLoopBound(self, eventLoop: context.eventLoop)
        channel.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in
            channel.eventLoop.scheduleTask(in: Self.pause) {
                pause.value.isPaused = false
                channel.setOption(ChannelOptions.autoRead, value: true).whenComplete { _ in }
            }
        }
    }
}
