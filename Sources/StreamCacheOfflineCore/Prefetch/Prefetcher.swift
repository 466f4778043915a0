import Foundation
import StreamCache
import StreamCacheMediaModel

/// Fetches into the cache what a player needs to play the first seconds of each item with the
/// network off (``PrefetchOptions``): for a manifest, the manifests of the variant a player starts
/// with and its renditions, their keys, init sections and the segments that start within those
/// seconds; for an MP4 or M4A, its first bytes, its movie box wherever it is and the samples
/// those seconds take, from its sample tables; for an MP3, the frames those seconds take, from
/// their headers.
///
/// Items are taken in the order given, `jobs` at a time, each with one read at a time, so a
/// prefetch holds at most `jobs` connections of its own.
package struct Prefetcher: Sendable {
    let engine: CacheEngine
    let library: OfflineLibrary
    let options: PrefetchOptions

    /// What is read past the seconds asked for, so a player that reads ahead of what it plays
    /// (its input buffer) finds those bytes too.
    static let margin = 0.5
    /// The first bytes read of every item: enough for its type and, mostly, its headers.
    static let firstBytes: Int64 = 64 << 10
    /// The largest movie box read.
    static let largestMovieBox: Int64 = 64 << 20
    /// The most top-level boxes passed looking for the movie box.
    static let maximumTopLevelBoxes = 64

    package init(engine: CacheEngine, library: OfflineLibrary, options: PrefetchOptions) {
        self.engine = engine
        self.library = library
        self.options = options
    }

    /// Prefetches `urls` in order, `jobs` at a time; `finished` hears each outcome as it comes.
    package func prefetch(_ urls: [URL], finished: @escaping @Sendable (PrefetchOutcome) async -> Void) async {
        var seen: Set<String> = []
        let unique = urls.filter { seen.insert($0.absoluteString).inserted }
        let queue = Locked(unique[...])
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<max(1, min(options.jobs, unique.count)) {
                group.addTask {
                    while let url = queue.withLock({ $0.popFirst() }), !Task.isCancelled {
                        await finished(await prefetch(url))
                    }
                }
            }
        }
    }

    /// Prefetches one item, then marks what it cached as prefetched only (evicted first, within
    /// its share of the budget; ``CacheEngine/evictPrefetched(beyond:)``).
    package func prefetch(_ url: URL) async -> PrefetchOutcome {
        var reads = Reads(engine: engine, headers: options.headers)
        let outcome = await prefetch(url, reads: &reads)
        for url in reads.prefetchedOnly { await engine.markPrefetched(url) }
        let share = Double(engine.budget) * engine.configuration.prefetchShare
        await engine.evictPrefetched(beyond: Int64(share))
        return outcome
    }

    private func prefetch(_ url: URL, reads: inout Reads) async -> PrefetchOutcome {
        var kind = "unknown"
        do {
            let resource = try await reads.open(url)
            let head = try await reads.bytes(resource, from: 0, length: Self.firstBytes)
            let info = try await resource.info()
            if let manifest = ManifestKind.of(url: url, contentType: info.contentType, firstBytes: head) {
                kind = "manifest"
                var document = head
                if Int64(head.count) == Self.firstBytes {
                    document += try await reads.bytes(
                        resource,
                        from: Self.firstBytes,
                        length: Int64(ManifestKind.largestDocument) - Self.firstBytes
                    )
                }
                try await manifestFiles(url, kind: manifest, document: document, reads: &reads)
            } else if MP4BoxHeader.startsFile(head) {
                kind = "mp4"
                try await movieSamples(resource, head: head, length: info.length, reads: &reads)
            } else if MP3Frames.startsFile(head) {
                kind = "mp3"
                try await audioFrames(resource, head: head, reads: &reads)
            } else {
                let type = info.contentType.map { " (\($0))" } ?? ""
                throw OfflineError(
                    .manifest,
                    "\(Credentials.redacted(url.absoluteString)) is not a playlist, MPD, MP4 or MP3 file\(type)"
                )
            }
            return PrefetchOutcome(url: url, kind: kind, reads: reads.count, bytes: reads.bytes, error: nil)
        } catch {
            return PrefetchOutcome(url: url, kind: kind, reads: reads.count, bytes: reads.bytes, error: error)
        }
    }

    // MARK: Manifests

    /// The files of the variant a player starts with and its renditions that the first seconds
    /// need, planned by the manifest's format as a download would plan them.
    private func manifestFiles(_ url: URL, kind: ManifestKind, document: [UInt8], reads: inout Reads) async throws {
        guard let format = library.formats.first(where: { $0.takes(kind) }) else {
            throw OfflineError(.manifest, "\(Credentials.redacted(url.absoluteString)) is a manifest of no format here")
        }
        var download = OfflineDownloadOptions()
        download.headers = options.headers
        download.estimatesSize = false
        download.checksFreeSpace = false
        // The files as the origin serves them, keys among them: a player decrypts.
        download.keepsEncryption = true
        let criteria = MediaSelectionCriteria(bitrate: options.maxBitrate.map { .atMost($0) } ?? .firstListed)
        let manifest = try await format.planner(library, engine, download).manifest(
            for: url,
            document: document,
            criteria: criteria
        )
        guard manifest.recording == nil else {
            throw OfflineError(.live, "\(Credentials.redacted(url.absoluteString)) is live: it has no first seconds")
        }
        let limit = options.seconds + Self.margin
        let needed = manifest.items.filter { $0.start < limit }
        guard needed.contains(where: { $0.kind == .segment }) else {
            throw OfflineError(.manifest, "\(Credentials.redacted(url.absoluteString)) lists no segment")
        }
        // Bytes a second of each rendition, from its whole segments read so far.
        var rates: [Int: Double] = [:]
        var read: Set<PackageItem> = []
        for item in needed.sorted(by: { $0.start < $1.start }) where read.insert(item).inserted {
            guard let itemURL = URL(string: item.url) else { continue }
            let resource = try await reads.open(itemURL)
            let offset = item.offset ?? 0
            guard item.kind == .segment, item.duration > 0, item.start + item.duration > limit else {
                let bytes = try await reads.drain(resource, from: offset, length: item.length)
                if item.kind == .segment, item.duration > 0 {
                    rates[item.rendition] = max(rates[item.rendition] ?? 0, Double(bytes) / item.duration)
                }
                continue
            }
            // The segment the seconds end in: the part of it they take, in proportion.
            let fraction = (limit - item.start) / item.duration
            if let length = item.length {
                _ = try await reads.drain(
                    resource,
                    from: offset,
                    length: Int64((Double(length) * fraction).rounded(.up))
                )
                continue
            }
            let guess = rates[item.rendition].map { Int64(($0 * (limit - item.start)).rounded(.up)) }
            let first = try await reads.drain(resource, from: 0, length: guess)
            guard guess != nil, let length = try await resource.info().length else { continue }
            let wanted = Int64((Double(length) * fraction).rounded(.up))
            if wanted > first { _ = try await reads.drain(resource, from: first, length: wanted - first) }
        }
    }

    // MARK: MP4

    /// The first bytes, the movie box and the chunks of every track's samples that start within
    /// the seconds (and the margin), as the sample tables place them.
    private func movieSamples(
        _ resource: CachedResource,
        head: [UInt8],
        length: Int64?,
        reads: inout Reads
    )
        async throws
    {
        var position: Int64 = 0
        var moov: [UInt8]?
        for _ in 0..<Self.maximumTopLevelBoxes {
            if let length, position >= length { break }
            var header = try MP4BoxHeader.read(head, at: position)
            if header == nil {
                let bytes = try await reads.bytes(resource, from: position, length: 16)
                header = try MP4BoxHeader.read(bytes, at: position, base: position)
            }
            guard let header else { break }
            if header.type == "moov" {
                guard let size = header.size, size <= Self.largestMovieBox else {
                    throw MP4Error("its movie box is larger than \(Self.largestMovieBox >> 20) MiB")
                }
                if let end = header.end, end <= Int64(head.count) {
                    moov = Array(head[Int(position)..<Int(end)])
                } else {
                    moov = try await reads.bytes(resource, from: position, length: size)
                }
                break
            }
            guard let end = header.end else { break }
            position = end
        }
        guard let moov else { throw MP4Error("it has no movie box ('moov') at its top level") }
        let table = try MP4SampleTable(moov: moov)
        for range in try table.byteRanges(before: options.seconds + Self.margin) {
            _ = try await reads.drain(resource, from: range.lowerBound, length: range.upperBound - range.lowerBound)
        }
    }

    // MARK: MP3

    /// The frames that start within the seconds (and the margin), walked from their headers and
    /// read as far as the walk needs.
    private func audioFrames(_ resource: CachedResource, head: [UInt8], reads: inout Reads) async throws {
        var bytes = head
        let seconds = options.seconds + Self.margin
        // Each round reads at least what the walk still lacks at the frames' own rate.
        for _ in 0..<64 {
            let start = MP3Frames.audioStart(bytes) ?? bytes.count
            switch MP3Frames.walk(bytes, seconds: seconds, from: start) {
            case .covered(let end):
                if end > bytes.count {
                    _ = try await reads.drain(resource, from: Int64(bytes.count), length: Int64(end - bytes.count))
                }
                return
            case .ended:
                return
            case .needsMore(let end, let perSecond):
                let wanted = max(Int64(start) + Int64(Double(perSecond) * seconds), Int64(end) + 4096)
                let more = try await reads.bytes(
                    resource,
                    from: Int64(bytes.count),
                    length: wanted - Int64(bytes.count)
                )
                guard !more.isEmpty else { return }
                bytes += more
            }
        }
    }
}

/// The reads of one item's prefetch, counted.
private struct Reads {
    let engine: CacheEngine
    let headers: OriginHeaders
    private(set) var count = 0
    private(set) var bytes: Int64 = 0
    /// The resources opened that held no bytes but a prefetch's before.
    private(set) var prefetchedOnly: [URL] = []

    init(engine: CacheEngine, headers: OriginHeaders) {
        self.engine = engine
        self.headers = headers
    }

    /// Opens `url`, noting whether what it holds came only from prefetches (a player's bytes
    /// stay a player's).
    mutating func open(_ url: URL) async throws -> CachedResource {
        if await engine.holdsPrefetchedOnly(url) { prefetchedOnly.append(url) }
        return try await engine.open(url, originHeaders: headers)
    }

    /// Bytes `[offset, offset + length)` of `resource`, through the cache (fewer at its end).
    mutating func bytes(_ resource: CachedResource, from offset: Int64, length: Int64) async throws -> [UInt8] {
        count += 1
        var collected: [UInt8] = []
        for try await chunk in resource.read(from: offset, length: length) { collected += chunk }
        bytes += Int64(collected.count)
        return collected
    }

    /// Reads bytes `[offset, offset + length)` (`nil`: to the end) of `resource` into the cache
    /// and drops them; returns how many there were.
    mutating func drain(_ resource: CachedResource, from offset: Int64, length: Int64?) async throws -> Int64 {
        count += 1
        var total: Int64 = 0
        for try await chunk in resource.read(from: offset, length: length) { total += Int64(chunk.count) }
        bytes += total
        return total
    }
}

extension CacheEngine {
    /// Fetches into the cache what a player needs to play the first seconds of each of `urls`
    /// with the network off (``PrefetchOptions``), in the order given, `jobs` items at a time;
    /// `library`'s formats read the manifests. A URL given twice is fetched once.
    ///
    /// - Returns: each item's outcome, in the order they finished.
    @discardableResult
    public func prefetch(
        _ urls: [URL],
        options: PrefetchOptions = PrefetchOptions(),
        library: OfflineLibrary,
        finished: @escaping @Sendable (PrefetchOutcome) async -> Void = { _ in }
    ) async -> [PrefetchOutcome] {
        let outcomes = Locked<[PrefetchOutcome]>([])
        await Prefetcher(engine: self, library: library, options: options).prefetch(urls) { outcome in
            outcomes.withLock { $0.append(outcome) }
            await finished(outcome)
        }
        return outcomes.value
    }
}
