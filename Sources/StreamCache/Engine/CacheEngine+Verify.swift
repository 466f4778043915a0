import Foundation

/// What ``CacheEngine/verify()`` found.
public struct VerificationReport: Sendable {
    /// A resource some of whose cached bytes were bad, now forgotten.
    public struct Damage: Sendable {
        public let url: String
        /// The bytes forgotten: blocks that did not match their checksums, and bytes past the
        /// end of a data file cut short.
        public let bytes: Int64
    }

    /// The resources checked.
    public internal(set) var resources = 0
    /// The bytes read and found good or bad (those with a checksum).
    public internal(set) var checkedBytes: Int64 = 0
    public internal(set) var damaged: [Damage] = []
}

extension CacheEngine {
    /// Reads every recorded block of every resource against its checksum and forgets the bad
    /// ones (and whatever a data file cut short no longer holds), so they are fetched again.
    ///
    /// A server of another process that has such a resource open reads it again once it closes it.
    ///
    /// - Parameter progress: called after each resource with the resources checked and the total.
    /// - Throws: ``StreamCacheError`` `index` if the index cannot be read.
    public nonisolated func verify(progress: (Int, Int) -> Void = { _, _ in }) async throws -> VerificationReport {
        var report = VerificationReport()
        let resources = try await index.allResources()
        for (record, ranges) in resources {
            report.resources += 1
            defer { progress(report.resources, resources.count) }
            guard !ranges.isEmpty,
                let file = try? await CacheFile.openLocked(path: directory.dataPath(id: record.id)),
                let state = file.state()
            else { continue }
            let length = record.info.length
            let present = ranges.clamped(below: state.size)
            if present != ranges { try await index.setRanges(present, of: record.id) }
            let sums = try await index.checksums(of: record.id)
            let checked = sums.keys.map { BlockChecksums.range(of: $0, length: length) }.filter(present.contains)
            report.checkedBytes += checked.reduce(0) { $0 + $1.count }
            let bad = await BlockChecksums.damaged(sums, in: file, recorded: present, length: length)
            let kept = try await index.forget(blocks: bad, of: record.id, length: length, state: state) ?? present
            if kept != ranges {
                report.damaged.append(.init(url: Credentials.redacted(record.url), bytes: ranges.count - kept.count))
            }
        }
        return report
    }
}
