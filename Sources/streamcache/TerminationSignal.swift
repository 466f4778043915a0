import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// SIGINT and SIGTERM as something to await.
///
/// `install()` takes the signals over at once (a handler that writes to a pipe), so a command
/// that installs before it prints "listening on …" never loses a signal sent right after.
enum TerminationSignal {
    /// The pipe the handler writes to: read end, write end.
    nonisolated(unsafe) private static var pipeEnds: [Int32] = [-1, -1]

    /// Replaces the default action of SIGINT and SIGTERM; call once, before announcing readiness.
    static func install() {
        guard pipe(&pipeEnds) == 0 else { return }
        for number in [SIGINT, SIGTERM] {
            signal(number) { _ in
                var byte: UInt8 = 1
                _ = write(TerminationSignal.pipeEnds[1], &byte, 1)
            }
        }
    }

    /// Returns when SIGINT or SIGTERM has arrived (at once if one already has).
    static func wait() async {
        let readEnd = pipeEnds[0]
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread {
                var byte: UInt8 = 0
                while read(readEnd, &byte, 1) < 0 && errno == EINTR {}
                continuation.resume()
            }.start()
        }
    }
}
