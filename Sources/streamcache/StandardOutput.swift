import Foundation
import StreamCache

/// Every line a command prints on standard output goes through here: `FileHandle.write` stops
/// the process with a stack trace when the reader of a pipe has gone (`download --json | head -5`),
/// and SIGPIPE is ignored. Once the reader is gone, nothing more is written and the command goes
/// on with its work, as if its output were discarded.
enum StandardOutput {
    private static let closed = Locked(false)

    /// Writes `data` whole, unless the reader went away (then, and from then on, nothing).
    static func write(_ data: Data) {
        guard !closed.value else { return }
        data.withUnsafeBytes { bytes in
            var done = 0
            while done < bytes.count {
                let result = systemWrite(STDOUT_FILENO, bytes.baseAddress! + done, bytes.count - done)
                if result < 0 {
                    if errno == EINTR { continue }
                    // EPIPE, or an output that cannot be written at all: nothing more goes to it.
                    closed.withLock { $0 = true }
                    return
                }
                done += result
            }
        }
    }

    /// Writes `text`, then a line break.
    static func writeLine(_ text: String) {
        write(Data((text + "\n").utf8))
    }
}
