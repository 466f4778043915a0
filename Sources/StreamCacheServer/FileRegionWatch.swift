import NIOCore
import StreamCache

/// Ends a connection whose file region can no longer be sent as it was checked.
///
/// A data file cut shorter while a region of it is being sent (truncated behind the cache's back)
/// makes `sendfile` send nothing, and SwiftNIO tries again at once, for ever: an event loop spins
/// and the player waits on a connection that never ends. Bytes written over it while it is sent
/// would go out unchecked. Every region the proxy writes is watched until it is written: once its
/// file is shorter than the region's end or changed by anything but its session
/// (``CacheFile/isTrusted(_:)``), the connection closes, which fails the write and tells the
/// player the answer was cut.
enum FileRegionWatch {
    /// How often the file is looked at while a region is being written.
    static let interval: TimeAmount = .milliseconds(100)

    /// Watches `written`, the write of a region of `file` that ends at `end`, on `channel`'s
    /// event loop.
    static func watch(_ written: EventLoopFuture<Void>, file: CacheFile, end: Int64, on channel: any Channel) {
        let loop = channel.eventLoop
        loop.execute {
            let finished = NIOLoopBoundBox(false, eventLoop: loop)
            written.whenComplete { _ in finished.value = true }
            check(finished, file: file, end: end, on: channel)
        }
    }

    private static func check(_ finished: NIOLoopBoundBox<Bool>, file: CacheFile, end: Int64, on channel: any Channel) {
        channel.eventLoop.scheduleTask(in: interval) {
            guard !finished.value else { return }
            // Judged without waiting on a write under way: the loop never waits on it.
            guard let status = file.status(), status.size >= end, file.isTrustedNow() else {
                channel.close(promise: nil)
                return
            }
            check(finished, file: file, end: end, on: channel)
        }
    }
}
