import Foundation

/// Bytes in the data directory that the index does not know, and so eviction never counts:
/// files without an index row, and bytes past the last recorded range of a file (written, but
/// the disk filled before the index recorded them, or the process died first).
enum UnrecordedBytes {
    /// Frees them in the files nobody has open (a file open elsewhere may have bytes on their way
    /// to the index): a file without a row is deleted, any other is cut after its last recorded
    /// byte.
    ///
    /// - Returns: the bytes freed.
    static func reclaim(in directory: CacheDirectory, index: CacheIndex) async -> Int64 {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.dataDirectory)) ?? []
        // Read after listing: a row is made before its file, so a listed file without one has none.
        guard !names.isEmpty, let ends = try? await index.recordedEnds() else { return 0 }
        var freed: Int64 = 0
        for name in names {
            let path = directory.dataDirectory + "/" + name
            let end = Int64(name).flatMap { ends[$0] }
            guard let size = allocatedBytes(path), size > (end ?? 0) else { continue }
            let cut = try? await CacheFile.withExclusiveLock(path: path) { descriptor in
                guard let descriptor else { return }
                SharedFiles.cut(descriptor, to: end ?? 0)
                if end == nil { unlink(path) }
            }
            if cut == true { freed += size - (allocatedBytes(path) ?? 0) }
        }
        return freed
    }

    /// The bytes the file at `path` takes on disk.
    private static func allocatedBytes(_ path: String) -> Int64? {
        var status = stat()
        guard lstat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int64(status.st_blocks) * 512
    }
}
