import Foundation

/// Applies the write protocol for one fetch: bytes are already in the file; they are made durable
/// with `fdatasync` in batches, and only then recorded in the index, in one transaction.
final class DurableWriter: @unchecked Sendable {
    // Used by one fetch task at a time; not shared.
    private let file: CacheFile
    private let recordID: Int64
    private let index: CacheIndex
    private let configuration: CacheConfiguration
    private var pending = RangeSet()
    private var pendingBytes: Int64 = 0
    private var lastSync = ContinuousClock.now
    /// The batch being made durable and recorded, if any.
    private var inFlight: Task<Void, Error>?

    init(file: CacheFile, recordID: Int64, index: CacheIndex, configuration: CacheConfiguration) {
        self.file = file
        self.recordID = recordID
        self.index = index
        self.configuration = configuration
    }

    /// Notes bytes written to the file but not yet durable.
    func wrote(_ range: ByteRange) {
        pending.insert(range)
        pendingBytes += range.count
    }

    /// Starts syncing and recording a batch if enough bytes or time have passed since the last
    /// one. The fetch goes on writing while the batch is made durable; at most one batch is in
    /// flight, so a slow disk slows the fetch down instead of piling up batches.
    func synchronizeIfDue() async throws {
        guard pendingBytes >= configuration.syncBytes || lastSync.duration(to: .now) >= configuration.syncInterval
        else { return }
        try await inFlight?.value
        inFlight = startBatch()
    }

    /// Syncs and records everything pending, and waits for it.
    ///
    /// Runs to completion even if the fetch was cancelled: bytes already written are worth keeping.
    func finish() async throws {
        let previous = inFlight
        inFlight = nil
        try await previous?.value
        try await startBatch()?.value
    }

    private func startBatch() -> Task<Void, Error>? {
        lastSync = .now
        guard !pending.isEmpty else { return nil }
        let batch = pending
        pending = RangeSet()
        pendingBytes = 0
        let file = file
        let index = index
        let recordID = recordID
        return Task {
            try await file.synchronizeOffPool()
            try await index.addRanges(batch, to: recordID)
        }
    }
}
