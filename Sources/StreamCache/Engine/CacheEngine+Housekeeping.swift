import Foundation
import Logging

/// The engine's chores: the mailbox task, lingering sessions closed once idle, and access
/// times written in batches.
extension CacheEngine {
    /// Starts the engine's chores now rather than at the first ``open(_:headers:)``: a server
    /// whose reads are all answered from sessionless files (``sessionlessFile(key:)``) opens no resource,
    /// and its access times, noted all the same, were written only when it stopped.
    package func startChores() {
        startHousekeeping()
    }

    /// Starts the task that does the engine's chores, once.
    func startHousekeeping() {
        guard housekeeping == nil else { return }
        let mailbox = chores.open()
        // Times noted before the mailbox opened were posted to none.
        defer { if environment.accessTimes.hasPending { chores.post(.accessTimesNoted) } }
        // Owned by the engine: `shutdown()` ends the mailbox and awaits it. It holds the engine
        // weakly, so an engine nobody shuts down still goes away (its deinit ends the mailbox).
        housekeeping = Task { [weak self] in
            await withDiscardingTaskGroup { group in
                for await chore in mailbox {
                    switch chore {
                    case .leaseReleased(let key):
                        group.addTask { await self?.releaseLease(key) }
                    case .readerAbandoned(let session, let reader):
                        group.addTask { await session.removeReader(reader) }
                    case .sessionMayBeIdle(let key):
                        group.addTask { await self?.sessionMayBeIdle(key) }
                    case .closeLingering:
                        group.addTask { await self?.closeLingering() }
                    case .diskFull:
                        group.addTask { await self?.makeRoom() }
                    case .accessTimesNoted:
                        group.addTask { await self?.writeAccessTimes(after: .seconds(1)) }
                    }
                }
                // Lingering sessions need not wait out their time once the engine stops.
                group.cancelAll()
            }
        }
    }

    /// Closes the session of each lingering key once it has gone unused for
    /// ``CacheConfiguration/idleLinger``, oldest first, until none lingers: one waiting task for
    /// every key (a task each meant thousands of sleeping tasks with many small resources). The
    /// closes themselves run side by side, so they keep up with the opens.
    func closeLingering() async {
        defer { isCloserRunning = false }
        await withDiscardingTaskGroup { closes in
            while let (key, queuedDue) = lingering.first {
                let step = sessions.lingerStep(
                    key,
                    now: .now,
                    linger: configuration.idleLinger,
                    stopping: Task.isCancelled
                )
                switch step {
                case .wait(let due) where due > queuedDue:
                    // Leased and released again since it was queued: back in line with its new time.
                    lingering.removeFirst()
                    lingering.append(key, due: due)
                case .wait where lingering.count > Self.lingeringLimit:
                    // Each lingering session holds a data file open: past the limit, the
                    // oldest closes at once (thousands of small resources in a few seconds ran a
                    // server out of descriptors).
                    lingering.removeFirst()
                    sessions.stopLingering(key)
                    closes.addTask { await self.sessionMayBeIdle(key) }
                case .wait(let due):
                    // In steps, to see the queue pass the limit while it waits.
                    try? await Task.sleep(until: min(due, .now.advanced(by: .milliseconds(50))))
                case .inUse:
                    lingering.removeFirst()
                case .close:
                    lingering.removeFirst()
                    closes.addTask { await self.sessionMayBeIdle(key) }
                }
            }
        }
    }

    /// Closes the session of `key` if nobody uses it any more, then enforces the budget.
    func sessionMayBeIdle(_ key: String) async {
        guard await closeIfIdle(key) else { return }
        // Only now: the closed session no longer holds the shared lock of its file, so eviction
        // can take its exclusive one and cut the resource down to the budget.
        await evictIfNeeded()
    }

    /// Closes the session of `key` if nobody uses it; the session and its file are released
    /// when this returns.
    ///
    /// - Returns: whether it was closed.
    func closeIfIdle(_ key: String) async -> Bool {
        guard let session = sessions.closable(key), await session.isIdle, sessions.close(key, session) else {
            return false
        }
        await session.withdrawServable()
        _ = await session.discardIfEmpty()
        return true
    }

    /// Writes the access times noted since the last write (``AccessTimes``), after `delay`, in
    /// which more notes gather. Best-effort: they only order eviction.
    ///
    /// One write at a time, in order: a write waits for the one under way, so an eviction's
    /// write returns only once the times another write took are in the index.
    func writeAccessTimes(after delay: Duration = .zero) async {
        if delay > .zero { try? await Task.sleep(for: delay) }
        let previous = accessTimesWrite
        let write = Task { [index, logger, times = environment.accessTimes] in
            await previous?.value
            do {
                try await index.touch(times.take())
            } catch {
                logger.debug("access times not recorded", metadata: ["error": "\(error)"])
            }
        }
        accessTimesWrite = write
        await write.value
    }
}
