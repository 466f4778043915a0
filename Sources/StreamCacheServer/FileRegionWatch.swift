import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Ends a connection whose file region can no longer be sent.
///
/// A data file cut shorter while a region of it is being sent (truncated behind the cache's back)
/// makes `sendfile` send nothing, and SwiftNIO tries again at once, for ever: an event loop spins
/// and the player waits on a connection that never ends. Every region the proxy writes is
/// watched until it is written: once its file is shorter than the region's end, the connection
/// closes, which fails the write and tells the player the answer was cut.
enum FileRegionWatch {
    /// How often the file's size is read while a region is being written.
    static let interval: TimeAmount = .milliseconds(100)

    /// Watches `written`, the write of a region that ends at `end` of the file open as
    /// `descriptor`, on `channel`'s event loop; `descriptor` stays open until `written` completes.
    static func watch(_ written: EventLoopFuture<Void>, descriptor: Int32, end: Int64, on channel: any Channel) {
        let loop = channel.eventLoop
        loop.execute {
            let finished = NIOLoopBoundBox(false, eventLoop: loop)
            written.whenComplete { _ in finished.value = true }
            check(finished, descriptor: descriptor, end: end, on: channel)
        }
    }

    private static func check(_ finished: NIOLoopBoundBox<Bool>, descriptor: Int32, end: Int64, on channel: any Channel) {
        channel.eventLoop.scheduleTask(in: interval) {
            guard !finished.value else { return }
            var status = stat()
            guard fstat(descriptor, &status) == 0, Int64(status.st_size) >= end else {
                channel.close(promise: nil)
                return
            }
            check(finished, descriptor: descriptor, end: end, on: channel)
        }
    }
}
