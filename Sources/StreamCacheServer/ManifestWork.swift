import Dispatch

/// Reading and rewriting a manifest. A large one keeps a CPU busy for a while: those run one at a
/// time on a thread of their own, so that however many arrive they hold at most one core, and
/// never Swift's cooperative pool (one thread per core), which answers every other request;
/// a small one (most playlists) is read where it is asked for, queued behind none.
enum ManifestWork {
    /// Documents up to this size are read in the task that asks.
    static let smallSize = 1 << 20

    private static let queue = DispatchQueue(label: "StreamCacheServer.ManifestWork")

    /// `body`'s result, for a document of `size` bytes.
    static func run<T: Sendable>(size: Int, _ body: @escaping @Sendable () throws -> T) async throws -> T {
        guard size > smallSize else { return try body() }
        return try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }
}
