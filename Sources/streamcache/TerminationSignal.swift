import Foundation
import StreamCache
import UnixSignals

/// SIGINT and SIGTERM, the one way every command handles them: trapped through ServiceLifecycle's
/// `UnixSignalsSequence`, as `serve`'s service group traps them.
enum TerminationSignal {
    /// SIGINT and SIGTERM, trapped from the moment this returns: a command that traps before it
    /// says it is ready never loses a signal sent right after.
    static func trap() async -> UnixSignalsSequence {
        await UnixSignalsSequence(trapping: .sigint, .sigterm)
    }
}

/// The processes a command runs (ffmpeg) and the files they write, which end with it: when the
/// command exits at once (a second signal), each is killed and its file removed, so none
/// goes on writing, or leaves a file, after it.
enum ChildProcesses {
    private static let running = Locked([pid_t: String?]())

    /// `pid` runs, writing `file` (if any).
    static func started(_ pid: pid_t, writing file: String?) { running.withLock { $0[pid] = .some(file) } }

    static func ended(_ pid: pid_t) { running.withLock { _ = $0.removeValue(forKey: pid) } }

    /// Kills every process still running and removes its file.
    static func endAll() {
        for (pid, file) in running.value {
            kill(pid, SIGKILL)
            if let file { unlink(file) }
        }
    }
}

/// A command's work stopped by SIGINT or SIGTERM.
struct Interrupted: Error {
    let signal: Int32
    /// The shell's status for a process ended by the signal: 130 for SIGINT, 143 for SIGTERM.
    var exitCode: Int32 { 128 + signal }

    /// Runs `body`, cancelled when SIGINT or SIGTERM arrives; the command then throws
    /// ``Interrupted`` once `body` has unwound (partial files removed, the cache made durable).
    /// A second signal while it unwinds ends the process at once.
    ///
    /// - Parameter endsGracefully: asked at the first signal; when it returns `true` (it asked the
    ///   work to end and keep what it did, as a live recording does), `body` is not cancelled
    ///   and its result is the command's.
    static func run<T: Sendable>(
        endsGracefully: @escaping @Sendable () -> Bool = { false },
        _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let signals = await TerminationSignal.trap()
        // Both owned by this call and awaited below.
        let work = Task { try await body() }
        let watcher = Task {
            var first: Int32?
            var graceful = false
            for await signal in signals {
                if let first {
                    ChildProcesses.endAll()
                    exit(128 + first)
                }
                first = signal.rawValue
                graceful = endsGracefully()
                if !graceful { work.cancel() }
            }
            return graceful ? nil : first
        }
        // The caller's cancellation (a --max-time) reaches the work as a signal does.
        let result = await withTaskCancellationHandler {
            await work.result
        } onCancel: {
            work.cancel()
        }
        // Ends the wait (a cancelled `for await` over the signals finishes).
        watcher.cancel()
        if let signal = await watcher.value { throw Interrupted(signal: signal) }
        return try result.get()
    }
}
