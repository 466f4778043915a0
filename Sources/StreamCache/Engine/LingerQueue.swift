/// The keys the engine's closer waits on, first due first, each with the time it was due when
/// queued. Linger is one duration for every key and keys are queued as their last lease goes, so
/// appending keeps the order; a key released again goes back in line (``CacheEngine``).
struct LingerQueue {
    private var items: [(key: String, due: ContinuousClock.Instant)] = []
    /// Where the queue starts in `items`; the taken part is dropped once it is half of it.
    private var head = 0

    var first: (key: String, due: ContinuousClock.Instant)? { head < items.count ? items[head] : nil }

    /// The keys queued (a key released again while queued counts once for each time).
    var count: Int { items.count - head }

    mutating func append(_ key: String, due: ContinuousClock.Instant) {
        items.append((key, due))
    }

    mutating func removeFirst() {
        guard head < items.count else { return }
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: items.count < 4096)
            head = 0
        } else if head >= 1024, head * 2 >= items.count {
            items.removeFirst(head)
            head = 0
        }
    }
}
