import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Long computing in a test (seeded model lives, byte-by-byte sums), run on a thread of its own,
/// for minutes of it at the lowest priority.
///
/// Swift concurrency runs every test on a pool of one thread per core. A long loop on it holds a
/// thread the timed tests beside it need, and several such loops on threads of normal priority
/// leave those tests a fraction of the cores: on two cores both stalled in-process origins and
/// loaders past their tests' deadlines. At the lowest priority the loops take the time no test wants;
/// work that must end within a suite's time limit takes an equal share instead.
public enum HeavyWork {
    /// How a piece of work shares the cores with the tests beside it.
    public enum Priority: Sendable {
        /// The time no test wants: for minutes of work without a time limit (the model lives).
        case lowest
        /// An equal share: for seconds of work inside a suite's time limit.
        case normal
    }

    /// Runs `body` on a new thread and returns what it returns. `body` records no issues itself
    /// (it runs outside the test's task): it returns what the test then checks.
    public static func run<T: Sendable>(
        priority: Priority = .lowest,
        _ body: @escaping @Sendable () -> T
    ) async -> T {
        await withCheckedContinuation { continuation in
            let thread = Thread {
                #if canImport(Glibc)
                // On Linux the nice value is the calling thread's own.
                if priority == .lowest { setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19) }
                #endif
                continuation.resume(returning: body())
            }
            if priority == .lowest { thread.qualityOfService = .background }
            thread.start()
        }
    }
}
