import Foundation

extension CacheEngine {
    /// Makes `destination` (by default `path`) share the bytes of `url` with the cache, where
    /// the file at `path` holds them as the origin sent them: one file under two names
    /// (``SharedFiles``), so a package file and the cache's copy take the disk once.
    ///
    /// Only a data file that holds the whole resource, byte for byte the same as `path`, is
    /// shared; the bytes are compared first, off the task pool.
    ///
    /// - Returns: whether `destination` now names the cache's data file.
    package func shareStoredFile(_ url: URL, at path: String, as destination: String? = nil) async -> Bool {
        // The index may not list the last bytes written yet (they are recorded in batches):
        // the comparison is what says the data file holds them all.
        guard let record = try? await index.resource(forKey: configuration.cacheKey(url)),
            let length = record.info.length, length > 0
        else { return false }
        let dataPath = directory.dataPath(id: record.id)
        return await withCheckedContinuation { continuation in
            DispatchQueue.global(qos: .utility).async {
                continuation.resume(
                    returning: SharedFiles.share(path, with: dataPath, length: length, as: destination)
                )
            }
        }
    }
}
