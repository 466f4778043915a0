import Foundation
import StreamCache

/// Runs one offline download from start to end: playlists, selection, plan, then the files
/// with N jobs, reporting each step as a ``DownloadEvent``.
struct AssetDownloader: Sendable {
    let library: OfflineLibrary
    let engine: CacheEngine
    let options: OfflineDownloadOptions
    let emit: @Sendable (DownloadEvent) -> Void

    /// What to download: a URL and a selection, an asset of the library to resume, or
    /// renditions to add to an asset of the library.
    enum Target: Sendable {
        case url(URL, MediaSelectionCriteria)
        case asset(id: String)
        case addition(id: String, audio: MediaSelectionCriteria.Languages, subtitles: MediaSelectionCriteria.Languages)
    }

    /// Runs the download; its outcome is the last event.
    func run(_ target: Target) async {
        do {
            var manifest = try await prepare(target)
            try await download(&manifest)
        } catch is CancellationError {
            return
        } catch let error as OfflineError {
            emit(.failed(error))
        } catch {
            emit(.failed(OfflineError(.storage, "\(error)")))
        }
    }

    /// The manifest of the asset: read from its package when it exists (a resumed download
    /// keeps its first plan), else planned from the playlists.
    private func prepare(_ target: Target) async throws -> AssetManifest {
        switch target {
        case .asset(let id):
            guard let manifest = try? AssetManifest.load(from: library.folder(id)) else {
                throw OfflineError(.unknownAsset, "no asset \(id) in \(library.directory)")
            }
            return manifest
        case .url(let url, let criteria):
            let top = try await PlaylistFetcher(engine: engine, options: options).playlist(url)
            switch top {
            case .media(let playlist):
                let id = AssetID.make(key: engine.configuration.cacheKey(url), playlists: [])
                if let manifest = try? AssetManifest.load(from: library.folder(id)) { return manifest }
                let plan = try await measured(
                    PackagePlan(
                        multivariant: nil,
                        selection: nil,
                        media: [PackagePlan.Media(kind: .video, rendition: nil, url: url, playlist: playlist)],
                        keepingEncryption: options.keepsEncryption
                    )
                )
                return manifest(id: id, url: url, plan: plan, selection: nil, sources: [url])
            case .multivariant(let playlist):
                return try await plan(playlist, url: url, criteria: criteria)
            }
        case .addition(let id, let audio, let subtitles):
            return try await addition(to: id, audio: audio, subtitles: subtitles)
        }
    }

    /// The manifest of asset `id` with the renditions `audio` and `subtitles` choose added: the
    /// variant and the renditions it has keep their folders, so none of their files is fetched
    /// again.
    private func addition(
        to id: String,
        audio: MediaSelectionCriteria.Languages,
        subtitles: MediaSelectionCriteria.Languages
    ) async throws -> AssetManifest {
        guard let old = try? AssetManifest.load(from: library.folder(id)), let url = URL(string: old.url) else {
            throw OfflineError(.unknownAsset, "no asset \(id) in \(library.directory)")
        }
        guard
            case .multivariant(let playlist) = try await PlaylistFetcher(engine: engine, options: options).playlist(url)
        else {
            throw OfflineError(.noMatchingRendition, "asset \(id) is one media playlist: it has no other renditions")
        }
        let held = Set(old.renditions.map(\.url))
        func resolved(_ uri: String?) -> String? { uri.flatMap { URL(string: $0, relativeTo: url)?.absoluteString } }
        guard let variant = playlist.variants.first(where: { resolved($0.uri).map(held.contains) == true }) else {
            throw OfflineError(.playlist, "\(old.url) no longer lists the variant asset \(id) holds")
        }
        let added = try MediaSelection.resolve(
            playlist,
            variant: variant,
            criteria: MediaSelectionCriteria(audio: audio, subtitles: subtitles)
        )
        let selection = MediaSelection(
            variant: variant,
            audio: Self.adding(added.audio, to: playlist.renditions, held: held, type: "AUDIO", resolve: resolved),
            subtitles: Self.adding(
                added.subtitles,
                to: playlist.renditions,
                held: held,
                type: "SUBTITLES",
                resolve: resolved
            )
        )
        var manifest = try await plan(playlist, url: url, selection: selection, id: id)
        for rendition in old.renditions {
            guard manifest.renditions.contains(rendition) else {
                throw OfflineError(.playlist, "\(old.url) changed since asset \(id) was downloaded: download it again")
            }
        }
        manifest.title = old.title
        manifest.created = old.created
        return manifest
    }

    /// The renditions of `type` the package holds (in the playlist's order), then those of
    /// `added` it does not.
    private static func adding(
        _ added: [Rendition],
        to renditions: [Rendition],
        held: Set<String>,
        type: String,
        resolve: (String?) -> String?
    ) -> [Rendition] {
        let kept = renditions.filter { $0.type == type && resolve($0.uri).map(held.contains) == true }
        return kept + added.filter { !kept.contains($0) }
    }

    /// The manifest of the selection `criteria` make in `playlist`: the library's when it has
    /// the asset, else planned from the chosen media playlists.
    private func plan(
        _ playlist: MultivariantPlaylist,
        url: URL,
        criteria: MediaSelectionCriteria
    ) async throws -> AssetManifest {
        let selection = try MediaSelection.resolve(playlist, criteria: criteria)
        return try await plan(playlist, url: url, selection: selection, id: nil)
    }

    /// The manifest of `selection` in `playlist`: the library's asset `id` when given (or, without
    /// it, the asset of the same URL and selection if the library has it), else planned from the
    /// chosen media playlists.
    private func plan(
        _ playlist: MultivariantPlaylist,
        url: URL,
        selection: MediaSelection,
        id given: String?
    ) async throws -> AssetManifest {
        // The variant's playlist first, then each chosen rendition that has one of its own.
        var wanted: [(kind: PackageRendition.Kind, rendition: Rendition?, uri: String)] = [
            (.video, nil, selection.variant.uri)
        ]
        for (kind, renditions) in [(PackageRendition.Kind.audio, selection.audio), (.subtitles, selection.subtitles)] {
            wanted += renditions.compactMap { rendition in rendition.uri.map { (kind, rendition, $0) } }
        }
        let urls = try wanted.map { entry in
            guard let resolved = URL(string: entry.uri, relativeTo: url)?.absoluteURL else {
                throw OfflineError(.playlist, "\(url.absoluteString): invalid URI '\(entry.uri)'")
            }
            return resolved
        }
        let keys = urls.map { engine.configuration.cacheKey($0) }
        let id = given ?? AssetID.make(key: engine.configuration.cacheKey(url), playlists: keys)
        if given == nil, let manifest = try? AssetManifest.load(from: library.folder(id)) { return manifest }
        var media: [PackagePlan.Media] = []
        for (entry, mediaURL) in zip(wanted, urls) {
            let fetched = try await PlaylistFetcher(engine: engine, options: options).playlist(mediaURL)
            guard case .media(let mediaPlaylist) = fetched else {
                throw OfflineError(.playlist, "\(mediaURL.absoluteString) is not a media playlist")
            }
            media.append(
                PackagePlan.Media(kind: entry.kind, rendition: entry.rendition, url: mediaURL, playlist: mediaPlaylist)
            )
        }
        let plan = try await measured(
            PackagePlan(
                multivariant: playlist,
                selection: selection,
                media: media,
                keepingEncryption: options.keepsEncryption
            )
        )
        return manifest(id: id, url: url, plan: plan, selection: selection, sources: [url] + urls)
    }

    /// `plan` with its size estimated from the lengths of a sample of its files, learnt through
    /// the streaming cache (the first two bytes of each, which stay there for the download), a
    /// few at once. A file whose length cannot be learnt is left out of the sample.
    private func measured(_ plan: PackagePlan) async -> PackagePlan {
        let probes = plan.sizeProbes
        guard !probes.isEmpty else { return plan }
        var lengths: [String: Int64] = [:]
        await withTaskGroup(of: (String, Int64?).self) { group in
            var next = probes.makeIterator()
            func probeNext() {
                guard let url = next.next() else { return }
                group.addTask { [engine, headers = options.headers] in
                    guard let parsed = URL(string: url) else { return (url, nil) }
                    let info = try? await engine.open(parsed, originHeaders: headers).info()
                    return (url, info?.length)
                }
            }
            // Each probe is two bytes and the origin's latency: all at once (up to 16), so the
            // estimate costs one round trip, not one per job's share of them.
            for _ in 0..<min(16, probes.count) { probeNext() }
            for await (url, length) in group {
                lengths[url] = length
                probeNext()
            }
        }
        var measured = plan
        measured.estimate(lengths: lengths)
        return measured
    }

    private func manifest(
        id: String,
        url: URL,
        plan: PackagePlan,
        selection: MediaSelection?,
        sources: [URL]
    ) -> AssetManifest {
        var manifest = AssetManifest(
            id: id,
            url: url.absoluteString,
            created: Date(),
            state: .downloading,
            mainPlaylist: plan.mainPlaylist,
            variant: selection.map { selection in
                OfflineAsset.VariantInfo(
                    bandwidth: selection.variant.bandwidth,
                    resolution: selection.variant.resolution?.description,
                    codecs: selection.variant.codecs
                )
            },
            audio: selection?.audio.map(\.languageOrName) ?? [],
            subtitles: selection?.subtitles.map(\.languageOrName) ?? [],
            renditions: plan.renditions,
            items: plan.items,
            estimatedBytes: plan.estimatedBytes
        )
        manifest.playlists = plan.playlists
        manifest.sourcePlaylists = sources.map(\.absoluteString)
        return manifest
    }

    /// Fetches every file of the asset that is not on disk yet.
    private func download(_ manifest: inout AssetManifest) async throws {
        let folder = library.folder(manifest.id)
        let done = manifest.items.map { FileManager.default.fileExists(atPath: folder + "/" + $0.path) }
        let bytesOnDisk = Self.bytes(of: manifest.items, in: folder, where: done)
        if !options.dryRun {
            try library.prepare()
            try checkFreeSpace(manifest, bytesOnDisk: bytesOnDisk)
        }
        emit(
            .selection(
                DownloadSelection(
                    id: manifest.id,
                    variant: manifest.variant,
                    audio: manifest.audio,
                    subtitles: manifest.subtitles,
                    duration: manifest.duration,
                    estimatedBytes: manifest.estimatedBytes,
                    files: manifest.items.count,
                    filesDone: done.filter { $0 }.count
                )
            )
        )
        if options.dryRun { return }
        try library.createFolders(for: manifest)
        guard let lock = try PackageLock(folder: folder) else {
            throw OfflineError(.busy, "asset \(manifest.id) is being downloaded by another process")
        }
        defer { withExtendedLifetime(lock) {} }
        manifest.state = .downloading
        manifest.failure = nil
        if let title = options.title { manifest.title = title }
        if let artwork = options.artwork { try library.writeArtwork(artwork, id: manifest.id) }
        try library.writePlaylistsAndManifest(manifest)
        // The origin's playlists stay in the streaming cache with the files (one store).
        for url in manifest.sourcePlaylists ?? [] {
            if let url = URL(string: url) { _ = try? await engine.setPinned(true, url) }
        }

        let coordinator = DownloadCoordinator(
            schedule: DownloadSchedule(items: manifest.items, done: done, runLimit: options.runLimit),
            renditions: manifest.renditions,
            bytesOnDisk: bytesOnDisk,
            emit: emit
        )
        emit(.progress(await coordinator.progress))
        let fetcher = ItemFetcher(
            engine: engine,
            headers: options.headers,
            folder: folder,
            maxAttempts: options.maxAttempts,
            backoff: options.retryBackoff,
            keyRing: KeyRing(engine: engine, headers: options.headers)
        )
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<max(1, options.jobs) {
                    group.addTask {
                        while let run = await coordinator.nextRun() {
                            try await fetcher.fetch(run) { index, bytes in
                                await coordinator.finished(index, bytes: bytes)
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
        } catch let error as OfflineError {
            manifest.state = .failed
            manifest.failure = error.message
            try? manifest.save(in: folder)
            library.removePartialFiles(of: manifest)
            throw error
        } catch {
            // Stopped: what is done stays, to resume from.
            library.removePartialFiles(of: manifest)
            throw error
        }
        try Task.checkCancellation()
        // Files stored as the origin sent them exist once: the package's name and the cache's
        // name for one file (decrypted files differ from what was sent and stay the package's).
        // Each is shared as it is committed; this pass shares those an earlier run finished.
        for item in manifest.items where item.offset == nil && item.decryption == nil {
            guard let url = URL(string: item.url) else { continue }
            _ = await engine.shareStoredFile(url, at: folder + "/" + item.path)
        }
        manifest.state = .complete
        try manifest.save(in: folder)
        emit(.finished(id: manifest.id, path: folder + "/" + manifest.mainPlaylist))
    }

    /// Refuses to start when what is left to fetch cannot fit.
    private func checkFreeSpace(_ manifest: AssetManifest, bytesOnDisk: Int64) throws {
        guard options.checksFreeSpace, let estimate = manifest.estimatedBytes else { return }
        var stats = statvfs()
        guard statvfs(library.directory, &stats) == 0 else { return }
        let free = Int64(stats.f_bavail) * Int64(stats.f_frsize)
        let needed = estimate - bytesOnDisk
        guard needed > free else { return }
        throw OfflineError(
            .notEnoughSpace,
            "the asset needs about \(ByteSize.text(needed)) more and \(library.directory) has \(ByteSize.text(free)) free"
        )
    }

    private static func bytes(of items: [PackageItem], in folder: String, where done: [Bool]) -> Int64 {
        zip(items, done).reduce(0) { total, entry in
            guard entry.1 else { return total }
            let size =
                (try? FileManager.default.attributesOfItem(atPath: folder + "/" + entry.0.path)[.size]) as? NSNumber
            return total + (size?.int64Value ?? 0)
        }
    }
}
