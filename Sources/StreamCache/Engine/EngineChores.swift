import Foundation

/// Work the engine does that no caller waits for: releasing the lease of a dropped handle,
/// forgetting the reader of a dropped stream, closing a session once it has lingered unused.
///
/// Posted synchronously (from `deinit` too) into a mailbox that one engine-owned task empties;
/// ``CacheEngine/shutdown()`` ends the mailbox and awaits that task. Nothing here starts a task
/// of its own.
enum EngineChore: Sendable {
    /// A ``CachedResource`` or stream of `key` went away.
    case leaseReleased(key: String)
    /// A stream was dropped while its reader was registered.
    case readerAbandoned(ResourceSession, reader: Int)
    /// The session of `key` may have nothing left to do.
    case sessionMayBeIdle(key: String)
    /// A key started lingering and the closer is not running: start it.
    case closeLingering
    /// Writing to the cache failed for lack of space: evict to make room.
    case diskFull
    /// A resource was opened with no access time pending: write them after a moment.
    case accessTimesNoted
}

/// The mailbox of an engine's chores. Shared by the engine, its sessions, handles and streams;
/// ``close()`` ends the current mailbox (for shutdown) and ``open()`` starts a new one.
final class EngineChores: Sendable {
    private let inbox = Locked<AsyncStream<EngineChore>.Continuation?>(nil)

    /// Posts `chore`; dropped if no mailbox is open (the engine has shut down).
    func post(_ chore: EngineChore) {
        inbox.withLock { _ = $0?.yield(chore) }
    }

    /// Opens a new mailbox, ending the previous one.
    func open() -> AsyncStream<EngineChore> {
        let (mailbox, newInbox) = AsyncStream.makeStream(of: EngineChore.self)
        inbox.withLock { inbox in
            inbox?.finish()
            inbox = newInbox
        }
        return mailbox
    }

    /// Ends the mailbox: its reader stops once it has taken what was posted.
    func close() {
        inbox.withLock { inbox in
            inbox?.finish()
            inbox = nil
        }
    }
}
