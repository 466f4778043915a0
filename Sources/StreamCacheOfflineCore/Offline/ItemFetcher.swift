import Foundation
import StreamCache

/// Fetches runs of package files through the streaming cache (what it holds is copied, the rest
/// fetched once and kept there), each made durable under its final name before it counts as done.
///
/// A run that fails with a connection error, a timeout, a `5xx` or a `429` is tried again after a
/// pause that doubles, at most `maxAttempts` times in a row without progress; then the download
/// fails naming the file. Nothing is skipped.
package struct ItemFetcher: Sendable {
    package let engine: CacheEngine
    package let headers: OriginHeaders
    /// The package folder.
    package let folder: String
    package let maxAttempts: Int
    /// The pause before the second attempt; it doubles after that.
    package let backoff: Duration
    /// The keys of the files decrypted into the package.
    package let keyRing: KeyRing
    /// Whether what the cache holds of a file is checked with the origin before it is copied,
    /// however fresh: a live recording's next segment may come under a URI an earlier one had.
    package var revalidates = false

    /// A file of the run and its index in the plan.
    package typealias Entry = (index: Int, item: PackageItem)
    /// Called after each file is durable, with its index and size.
    package typealias Done = @Sendable (Int, Int64) async -> Void
    /// Called once with where a run of one whole file ends, when the origin's answer says.
    package typealias LearnedEnd = @Sendable (Int64) async -> Void
    /// Called with the size of each chunk the run's read gets from the origin, for its pace.
    package typealias Received = @Sendable (Int) async -> Void

    /// Fetches `run`: byte ranges of one origin file that follow each other, or one whole file.
    ///
    /// - Throws: ``OfflineError`` naming the first file not fetched, or `CancellationError`.
    package func fetch(
        _ run: [Entry],
        learnedEnd: @escaping LearnedEnd = { _ in },
        received: @escaping Received = { _ in },
        done: @escaping Done
    ) async throws {
        var remaining = run[...]
        var attempt = 0
        while !remaining.isEmpty {
            attempt += 1
            var completed = 0
            do {
                try await fetchThroughCache(
                    remaining,
                    completed: &completed,
                    learnedEnd: learnedEnd,
                    received: received,
                    done: done
                )
                return
            } catch {
                if Task.isCancelled || error is CancellationError { throw CancellationError() }
                if completed > 0 { attempt = 1 }
                remaining = remaining.dropFirst(completed)
                guard let first = remaining.first else { return }
                let retry = Self.retryDelay(error, attempt: attempt, backoff: backoff)
                guard let retry, attempt < maxAttempts else {
                    throw Self.failure(first.item, error, attempts: attempt)
                }
                try await Task.sleep(for: retry)
            }
        }
    }

    /// Reads `part` of the file at `url` through the streaming cache and drops it: the cache
    /// fetches it on a connection of its own (``CachedResource/readAhead(from:length:)``), and the
    /// job whose file it is reads it from there. A failure is that job's to meet, and tell.
    package func readAhead(_ url: String, _ part: ByteRange) async {
        guard let url = URL(string: url), let resource = try? await engine.open(url, originHeaders: headers) else {
            return
        }
        do {
            for try await _ in resource.readAhead(from: part.lowerBound, length: part.count) {}
        } catch {}
    }

    /// Reads `run` through the streaming cache, in one read: the bytes it holds are copied, the
    /// others fetched once and kept there (pinned while the asset exists). So what a player
    /// streamed is not fetched again, what the download fetched plays through `serve` with the
    /// origin down, and a file cut short by a stop resumes with a range request.
    private func fetchThroughCache(
        _ run: ArraySlice<Entry>,
        completed: inout Int,
        learnedEnd: LearnedEnd,
        received: Received,
        done: Done
    ) async throws {
        let entries = Array(run)
        guard let url = URL(string: entries[0].item.url) else {
            throw OfflineError(.segment, "invalid URL \(entries[0].item.url)")
        }
        let first = entries[0].item.range?.lowerBound ?? 0
        let length = entries[entries.count - 1].item.range.map { $0.upperBound - first }
        let resource = try await engine.open(url, originHeaders: headers)
        try await engine.setPinned(true, url)
        var keys: [String: [UInt8]] = [:]
        for case let decryption? in entries.map(\.item.decryption) where keys[decryption.key] == nil {
            keys[decryption.key] = try await keyRing.key(decryption.key)
        }
        // A file kept as the origin sent it is the cache's data file under a second name where
        // the two hold the same bytes: its copy here is then dropped, never synced.
        var writer = try RunWriter(entries: entries, folder: folder, keys: keys) { [engine] item, written, path in
            guard let url = URL(string: item.url) else { return false }
            return await engine.shareStoredFile(url, at: written, as: path)
        }
        let reading =
            revalidates
            ? resource.revalidatedRead(from: first, length: length) : resource.read(from: first, length: length)
        // The end of a whole file, as soon as the cache knows it: at once if the size estimate's
        // probe has told it, else with the answer's head.
        var endIsKnown = length != nil
        func learnEnd() async {
            guard !endIsKnown, let end = await reading.currentInfo().length else { return }
            endIsKnown = true
            await learnedEnd(end)
        }
        await learnEnd()
        var checked = !revalidates
        var chunks = reading.makeAsyncIterator()
        while let span = try await chunks.nextChunk() {
            guard span.count > 0 else { continue }
            let chunk = try span.read()
            await learnEnd()
            // The run's pace is the origin's: bytes the cache held come at once.
            if span.fromOrigin { await received(chunk.count) }
            if !checked {
                checked = true
                // A file that must be the origin's current one (a recycled live name) is not the
                // cached copy a player would get with the origin unreachable: try it again.
                if await resource.isServedStale() {
                    throw StreamCacheError(
                        .originUnreachable,
                        "\(Credentials.redacted(url.absoluteString)) could not be checked with the origin"
                    )
                }
            }
            var bytes = chunk[...]
            while !bytes.isEmpty {
                bytes = try writer.write(bytes)
                while let finished = try await writer.commitIfFull() {
                    completed += 1
                    await done(finished.index, finished.bytes)
                }
                if writer.isFinished { return }
            }
        }
        if let finished = try await writer.commitAtEnd(contentLength: nil) {
            completed += 1
            await done(finished.index, finished.bytes)
        }
        guard writer.isFinished else { throw ShortBody() }
    }

    /// How long to wait before trying again, or `nil` if trying again cannot help.
    package static func retryDelay(_ error: any Error, attempt: Int, backoff: Duration) -> Duration? {
        let pause = backoff * (1 << min(attempt - 1, 6))
        switch error {
        case let error as StreamCacheError:
            return error.isTransient || error.status == 429 ? pause : nil
        case is OfflineError:
            return nil
        default:
            // Connections reset or closed in the middle of a body.
            return pause
        }
    }

    /// Why a request failed, as the end of a one-line message.
    package static func reason(for error: any Error) -> String {
        switch error {
        case let error as StreamCacheError: error.message
        case let error as OfflineError: error.message
        case is ShortBody: "the origin closed the connection before the end"
        default: "\(error)"
        }
    }

    private static func failure(_ item: PackageItem, _ error: any Error, attempts: Int) -> OfflineError {
        if let error = error as? OfflineError { return error }
        let what =
            switch item.kind {
            case .segment: "segment"
            case .initialization: "init section"
            case .key: "key"
            }
        return OfflineError(
            .segment,
            "cannot fetch \(what) \(item.url) (\(item.path))"
                + (attempts > 1 ? " after \(attempts) attempts" : "") + ": \(reason(for: error))",
            cause: error
        )
    }
}

extension ItemFetcher {
    /// The fetcher of a download with `options` into the package `folder`.
    package init(engine: CacheEngine, options: OfflineDownloadOptions, folder: String, revalidates: Bool = false) {
        self.init(
            engine: engine,
            headers: options.headers,
            folder: folder,
            maxAttempts: options.maxAttempts,
            backoff: options.retryBackoff,
            keyRing: KeyRing(engine: engine, headers: options.headers),
            revalidates: revalidates
        )
    }
}

/// The body ended before every byte asked for came.
package struct ShortBody: Error {}
