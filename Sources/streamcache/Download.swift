import ArgumentParser
import Foundation
import StreamCache

/// What `get` and `export` share: bytes of a URL through the cache into an output file, with
/// progress, a clean end on SIGINT/SIGTERM and on a closed pipe.
struct Download {
    let url: URL
    /// Request headers and cookies for the origin (never stored).
    let headers: OriginHeaders
    /// What to write: `A-B`, `A-` or the last N bytes.
    let range: RangeSpecifier
    /// The output path, `-` for stdout.
    let output: String
    let progress: Progress?
    /// Told what is known of the resource when its first bytes come (`get -v`).
    var described: (@Sendable (ContentInfo) -> Void)? = nil

    /// Runs the download.
    ///
    /// - Throws: ``StreamCacheError`` for a failure (one line for the user); `ExitCode` 130 or
    ///   143 after SIGINT or SIGTERM, the partial file removed.
    func run(cache: CacheOptions, transfer options: TransferOptions) async throws {
        do {
            try await Interrupted.run { try await transfer(cache: cache, options: options) }
        } catch let interrupted as Interrupted {
            progress?.clear()
            Terminal.printError("interrupted; " + (await keptMessage(cache: cache)))
            throw ExitCode(interrupted.exitCode)
        } catch is OutputClosed {
            // The reader of the pipe has what it wanted (`get … | head -c 100`).
            return
        }
    }

    private func transfer(cache: CacheOptions, options: TransferOptions) async throws {
        try await cache.withEngine(transfer: options) { engine in
            progress?.waiting(for: url.originName)
            let (offset, length) = try await resolve(range, engine: engine)
            try CacheEngine.validateRange(offset: offset, length: length)
            let stream = try await engine.open(url, originHeaders: headers).read(from: offset, length: length)
            let file = try OutputFile(path: output)
            var progress = progress
            var written: Int64 = 0
            var chunks = stream.makeAsyncIterator()
            while let chunk = try await chunks.nextChunk() {
                if written == 0 {
                    let info = await stream.currentInfo()
                    described?(info)
                    Warning.checkFits(url, length: info.length, budget: engine.budget)
                }
                try file.write(chunk)
                written += Int64(chunk.count)
                if progress != nil {
                    let total = await stream.currentInfo().length.map { min(length ?? .max, $0 - offset) }
                    progress?.update(done: written, total: total)
                }
            }
            if written == 0, length != 0, let total = await stream.currentInfo().length, total > 0 || offset > 0,
                range.resolve(length: total) == nil
            {
                throw StreamCacheError(
                    .rangeNotSatisfiable,
                    "range starts at \(offset), past the end of the \(total)-byte resource"
                )
            }
            try file.commit()
            progress?.finish(done: written)
        }
    }
}

extension Download {
    /// What the cache holds of the URL after an interruption, and what a new run will cost: it
    /// resumes where the cache stops, unless the origin ignores ranges and sends everything again.
    private func keptMessage(cache: CacheOptions) async -> String {
        var configuration = CacheConfiguration()
        (try? CacheSettings.load(from: cache.directory))?.apply(to: &configuration)
        guard let index = try? CacheIndex(readingAt: cache.directory.indexPath),
            let record = try? await index.resource(forKey: configuration.cacheKey(url)),
            let ranges = try? await index.ranges(of: record.id), !ranges.isEmpty
        else { return "nothing was kept in the cache" }
        let kept = "\(ByteCount.format(ranges.count)) kept in the cache"
        guard record.info.byteRangeAccess else {
            return kept + "; the origin ignores ranges, so a new run downloads from the start again"
        }
        return kept + ", run again to resume"
    }

    /// The first byte and the byte count of `range`; the last N bytes start where the length
    /// (asked of the same engine, so of the same open resource) puts them.
    private func resolve(_ range: RangeSpecifier, engine: CacheEngine) async throws -> (Int64, Int64?) {
        switch range {
        case .from(let first, let last):
            return (first, last.map { $0 - first + 1 })
        case .suffix(let count):
            guard let total = try await engine.open(url, originHeaders: headers).info().length else {
                throw StreamCacheError(
                    .rangeNotSatisfiable,
                    "the origin does not say the length, so -\(count) has no start"
                )
            }
            let first = max(0, total - count)
            return (first, total - first)
        }
    }
}
