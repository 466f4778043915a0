/// The batches of one fetch being made durable and recorded, one at a time, while the fetch goes
/// on writing: a slow disk slows the fetch down instead of piling up batches.
final class DurableBatches: @unchecked Sendable {
    // Used by the one task that runs the fetch, one call after another.
    private var inFlight: Task<Void, Never>?

    /// Syncs `file` and then records `batch` (of version `generation`) through `session`, after
    /// the batch before it.
    func start(_ batch: RangeSet, generation: Int, file: CacheFile, session: ResourceSession) async {
        await inFlight?.value
        // Owned by this fetch's runner: awaited by the next batch or by `finish()`.
        inFlight = Task { await session.makeDurable(batch, generation: generation, file: file) }
    }

    /// Waits for the batch in flight.
    func finish() async {
        await inFlight?.value
        inFlight = nil
    }
}
