import Foundation

extension CacheEngine {
    /// Makes the file at `path`, which holds the bytes of `url` as the origin sent them, share
    /// them with the cache: one file under two names (``SharedFiles``), so a package file and
    /// the cache's copy take the disk once.
    ///
    /// Only a data file that holds the whole resource, byte for byte the same as `path`, is
    /// shared; the bytes are compared first, off the task pool.
    ///
    /// - Returns: whether `path` now shares the cache's data file.
    package func shareStoredFile(_ url: URL, at path: String) async -> Bool {
        // The index may not list the last bytes written yet (they are recorded in batches):
        // the comparison is what says the data file holds them all.
        guard let record = try? await index.resource(forKey: configuration.cacheKey(url)),
            let length = record.info.length, length > 0
        else { return false }
        let dataPath = directory.dataPath(id: record.id)
        return await withCheckedContinuation { continuation in
            DispatchQueue.global(qos: .utility).async {
                continuation.resume(returning: SharedFiles.share(path, with: dataPath, length: length))
            }
        }
    }
}
