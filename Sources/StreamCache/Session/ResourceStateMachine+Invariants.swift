import Foundation

extension ResourceStateMachine {
    /// The rules the machine keeps after every event, as sentences naming what broke them
    /// (empty when all hold).
    func invariantViolations() -> [String] {
        var broken: [String] = []
        if !recorded.isSubset(of: durable) { broken.append("recorded \(recorded) is not all durable \(durable)") }
        if !durable.isSubset(of: written) { broken.append("durable \(durable) is not all written \(written)") }
        if written.intersects(writing) { broken.append("bytes being written \(writing) are already written") }
        var pending = ByteRangeSet()
        for fetch in fetches.values.sorted(by: { $0.id < $1.id }) where fetch.generation == generation {
            for write in fetch.pendingWrites.ranges {
                if write.upperBound > fetch.next {
                    broken.append("fetch \(fetch.id) writes \(write) but its next byte is \(fetch.next)")
                }
                if !writing.contains(write) { broken.append("fetch \(fetch.id) writes \(write) unannounced") }
                if pending.intersects(ByteRangeSet([write])) { broken.append("two fetches write \(write)") }
                pending.insert(write)
            }
        }
        for (id, reader) in readers {
            if let fetch = reader.waitingOn, fetches[fetch] == nil {
                broken.append("reader \(id) waits on fetch \(fetch), which is gone")
            }
        }
        return broken
    }

    /// Stops the process at a broken invariant, with the rules it broke: in debug builds always,
    /// in release builds when `STREAMCACHE_CHECK_INVARIANTS=1` (CI runs the end-to-end suites
    /// that drive sessions hardest so).
    func checkInvariants() {
        guard Self.checksInvariants, settings.assertsInvariants else { return }
        let broken = invariantViolations()
        if !broken.isEmpty { preconditionFailure("ResourceStateMachine: " + broken.joined(separator: "; ")) }
    }

    /// Whether ``checkInvariants()`` checks them, decided once per process.
    static let checksInvariants: Bool = {
        #if DEBUG
        true
        #else
        ProcessInfo.processInfo.environment["STREAMCACHE_CHECK_INVARIANTS"] == "1"
        #endif
    }()
}

extension ByteRangeSet {
    /// Whether every byte of this set is in `other`.
    func isSubset(of other: ByteRangeSet) -> Bool {
        ranges.allSatisfy { other.contains($0) }
    }

    /// Whether the two sets share a byte.
    func intersects(_ other: ByteRangeSet) -> Bool {
        ranges.contains { range in other.gaps(in: range) != [range] }
    }
}
