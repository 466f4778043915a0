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
            let present = ranges.clamped(below: state.size)
            if present != ranges { try await index.setRanges(present, of: record.id) }
            let check = try await index.check(
                file,
                of: record.id,
                length: record.info.length,
                holding: present,
                state: state
            )
            report.checkedBytes += check.checkedBytes
            if check.kept != ranges {
                report.damaged.append(
                    .init(url: Credentials.redacted(record.url), bytes: ranges.count - check.kept.count)
                )
            }
        }
        return report
    }
}
