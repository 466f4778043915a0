import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// SIGINT and SIGTERM as something to await.
///
/// `install()` takes the signals over at once (a handler that writes the signal's number to a
/// pipe), so a command that installs before it prints "listening on …" never loses a signal
/// sent right after.
enum TerminationSignal {
    /// The pipe the handler writes to: read end, write end.
    nonisolated(unsafe) private static var pipeEnds: [Int32] = [-1, -1]

    /// Replaces the default action of SIGINT and SIGTERM; call once, before announcing readiness.
    static func install() {
        guard pipeEnds[0] < 0, pipe(&pipeEnds) == 0 else { return }
        for number in [SIGINT, SIGTERM] {
            signal(number) { number in
                var byte = UInt8(truncatingIfNeeded: number)
                _ = write(TerminationSignal.pipeEnds[1], &byte, 1)
            }
        }
    }

    /// Returns the signal's number when SIGINT or SIGTERM has arrived (at once if one already has).
    @discardableResult
    static func wait() async -> Int32 {
        await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
            onSignal { continuation.resume(returning: $0) }
        }
    }

    /// Calls `action` on a thread of its own once SIGINT or SIGTERM has arrived.
    static func onSignal(_ action: @escaping @Sendable (Int32) -> Void) {
        let readEnd = pipeEnds[0]
        Thread {
            var byte: UInt8 = 0
            while read(readEnd, &byte, 1) < 0 && errno == EINTR {}
            action(Int32(byte))
        }.start()
    }
}

/// A command's work stopped by SIGINT or SIGTERM.
struct Interrupted: Error {
    let signal: Int32
    /// The shell's status for a process ended by the signal: 130 for SIGINT, 143 for SIGTERM.
    var exitCode: Int32 { 128 + signal }

    /// Runs `body`, cancelled when SIGINT or SIGTERM arrives (the command then throws
    /// ``Interrupted`` once `body` has unwound: partial files removed, the cache made durable).
    static func run<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        TerminationSignal.install()
        let received = SignalBox()
        // Owned by this call: awaited below; a signal cancels it.
        let work = Task { try await body() }
        TerminationSignal.onSignal { signal in
            received.signal = signal
            work.cancel()
        }
        do {
            return try await work.value
        } catch {
            if let signal = received.signal { throw Interrupted(signal: signal) }
            throw error
        }
    }
}

/// The signal that arrived, set from the signal thread.
private final class SignalBox: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var stored: Int32?

    var signal: Int32? {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
