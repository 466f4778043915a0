import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Minutes of computing in a test (seeded model lives, byte-by-byte sums), run on a thread of its
/// own at the lowest priority.
///
/// Swift concurrency runs every test on a pool of one thread per core. A long loop on it holds a
/// thread the timed tests beside it need, and several such loops on threads of normal priority
/// leave those tests a fraction of the cores: on two cores both stalled in-process origins and
/// loaders for over a minute. At the lowest priority the loops take the time no test wants.
public enum HeavyWork {
    /// Runs `body` on a new thread of the lowest priority and returns what it returns. `body`
    /// records no issues itself (it runs outside the test's task): it returns what the test then
    /// checks.
    public static func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            let thread = Thread {
                #if canImport(Glibc)
                // On Linux the nice value is the calling thread's own.
                setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
                #endif
                continuation.resume(returning: body())
            }
            thread.qualityOfService = .background
            thread.start()
        }
    }
}
