import Foundation
import StreamCache

/// Every line a command prints on standard output or standard error goes through here:
/// `FileHandle.write` stops the process with a stack trace when the reader of a pipe has gone
/// (`download --json | head -5`, `get --progress 2>&1 >/dev/null | head -c 1`), and SIGPIPE is
/// ignored. Once the reader is gone, nothing more is written to that stream and the command goes
/// on with its work, as if its output were discarded.
final class StandardStream: Sendable {
    /// Standard output: the lines a command answers with.
    static let output = StandardStream(descriptor: STDOUT_FILENO)
    /// Standard error: progress, notes, warnings and errors.
    static let error = StandardStream(descriptor: STDERR_FILENO)

    private let descriptor: Int32
    private let closed = Locked(false)

    private init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// Writes `data` whole, unless the reader went away (then, and from then on, nothing).
    func write(_ data: Data) {
        guard !closed.value else { return }
        // EPIPE, or an output that cannot be written at all: nothing more goes to it.
        if data.withUnsafeBytes({ writeWhole(descriptor, $0) }) != nil { closed.withLock { $0 = true } }
    }

    /// Writes `text`, then a line break.
    func writeLine(_ text: String) {
        write(Data((text + "\n").utf8))
    }
}

/// Standard output (``StandardStream/output``), by the name most commands write to.
enum StandardOutput {
    static func write(_ data: Data) { StandardStream.output.write(data) }

    static func writeLine(_ text: String) { StandardStream.output.writeLine(text) }

    /// `object` as one line of JSON, keys sorted (nothing if it cannot be JSON).
    static func writeJSONLine(_ object: [String: Any]) {
        guard
            let data = try? JSONSerialization.data(
                withJSONObject: object,
                options: [.sortedKeys, .withoutEscapingSlashes]
            )
        else { return }
        write(data + Data("\n".utf8))
    }
}
