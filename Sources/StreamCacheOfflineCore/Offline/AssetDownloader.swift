import Foundation
import StreamCache

/// Runs one offline download from start to end: the package's manifest from the format's
/// planner (``PackagePlanner``: manifests, selection, plan), then the files with N jobs,
/// reporting each step as a ``DownloadEvent``. What follows the plan is the same for every format.
package struct AssetDownloader: Sendable {
    package let library: OfflineLibrary
    package let engine: CacheEngine
    package let options: OfflineDownloadOptions
    package let emit: @Sendable (DownloadEvent) -> Void

    /// What to download: a URL and a selection, an asset of the library to resume, or
    /// renditions to add to an asset of the library.
    package enum Target: Sendable {
        case url(URL, MediaSelectionCriteria)
        case asset(id: String)
        case addition(id: String, audio: MediaSelectionCriteria.Languages, subtitles: MediaSelectionCriteria.Languages)
    }

    /// The format of the library that takes a manifest of `kind` (``OfflineFormat``).
    ///
    /// - Throws: ``OfflineError`` `manifest` when none of the library's formats does.
    private func format(for kind: ManifestKind?, url: String) throws(OfflineError) -> OfflineFormat {
        guard let format = library.formats.first(where: { $0.takes(kind) }) else {
            throw OfflineError(.manifest, "\(url) is not a manifest of a format this library downloads")
        }
        return format
    }

    /// The format of the library whose packages have `manifest`'s entry point.
    ///
    /// - Throws: ``OfflineError`` `manifest` when none of the library's formats has.
    private func format(ofPackage manifest: AssetManifest) throws(OfflineError) -> OfflineFormat {
        guard let format = library.formats.first(where: { $0.entryPoint == manifest.entryPoint }) else {
            throw OfflineError(.manifest, "asset \(manifest.id) is of a format this library does not download")
        }
        return format
    }

    /// Runs the download; its outcome is the last event.
    package func run(_ target: Target) async {
        do {
            var (manifest, manifestFetch) = try await prepare(target)
            if manifest.recording != nil {
                try await record(manifest)
            } else {
                try await download(&manifest, manifestFetch: manifestFetch)
            }
        } catch is CancellationError {
            return
        } catch let error as OfflineError {
            emit(.failed(error))
        } catch {
            emit(.failed(OfflineError(.storage, "\(error)")))
        }
    }

    /// The manifest of the asset: read from its package when it exists (a resumed download
    /// keeps its first plan), else planned from the playlists; and how long its manifest took
    /// to fetch, when it was fetched (an origin's round trip, or the cache's copy).
    private func prepare(_ target: Target) async throws -> (AssetManifest, Duration?) {
        switch target {
        case .asset(let id):
            guard let manifest = try? AssetManifest.load(from: library.folder(id)) else {
                throw OfflineError(.unknownAsset, "no asset \(id) in \(library.directory)")
            }
            return (manifest, nil)
        case .url(let url, let criteria):
            // The format as the proxy tells it: the media type, the first bytes, the path.
            let started = ContinuousClock.now
            let document = try await ManifestFetcher(engine: engine, options: options).document(url)
            let fetched = started.duration(to: .now)
            let manifest = try await format(for: document.kind, url: url.absoluteString)
                .planner(library, engine, options)
                .manifest(for: url, document: document.bytes, criteria: criteria)
            return (manifest, fetched)
        case .addition(let id, let audio, let subtitles):
            guard let old = try? AssetManifest.load(from: library.folder(id)) else {
                throw OfflineError(.unknownAsset, "no asset \(id) in \(library.directory)")
            }
            // The planner of the format the package was made from, as its entry point says.
            var manifest = try await format(ofPackage: old).planner(library, engine, options)
                .manifest(adding: MediaSelectionCriteria(audio: audio, subtitles: subtitles), to: old)
            for rendition in old.renditions where !manifest.renditions.contains(rendition) {
                throw OfflineError(.manifest, "\(old.url) changed since asset \(id) was downloaded: download it again")
            }
            manifest.title = old.title
            manifest.created = old.created
            return (manifest, nil)
        }
    }

    /// Fetches every file of the asset that is not on disk yet. A manifest that took longer to
    /// fetch than ``DownloadCoordinator/firstBytesWait`` came from a distant origin: its files
    /// are read ahead in without waiting for their jobs' first bytes.
    private func download(_ manifest: inout AssetManifest, manifestFetch: Duration?) async throws {
        let folder = library.folder(manifest.id)
        let done = manifest.items.map { FileManager.default.fileExists(atPath: folder + "/" + $0.path) }
        let bytesOnDisk = Self.bytes(of: manifest.items, in: folder, where: done)
        if !options.dryRun {
            try library.prepare()
            try checkFreeSpace(manifest, bytesOnDisk: bytesOnDisk)
        }
        emit(.selection(DownloadSelection(manifest, filesDone: done.filter { $0 }.count)))
        if options.dryRun { return }
        try library.createFolders(for: manifest)
        guard let lock = try PackageLock(folder: folder) else {
            throw OfflineError(.busy, "asset \(manifest.id) is being downloaded by another process")
        }
        defer { withExtendedLifetime(lock) {} }
        manifest.state = .downloading
        manifest.failure = nil
        if let title = options.title { manifest.title = title }
        if let outputFile = options.outputFile { manifest.outputFile = outputFile }
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
            firstBytesWait: (manifestFetch ?? .zero) > DownloadCoordinator.firstBytesWait
                ? .zero : DownloadCoordinator.firstBytesWait,
            emit: emit
        )
        emit(.progress(await coordinator.progress))
        let fetcher = ItemFetcher(engine: engine, options: options, folder: folder)
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<max(1, options.jobs) {
                    group.addTask {
                        while let run = await coordinator.nextRun() {
                            let key = run[run.count - 1].index
                            do {
                                try await fetcher.fetch(run) { end in
                                    await coordinator.learnedEnd(of: key, end)
                                } received: { count in
                                    await coordinator.received(count, in: key)
                                } done: { index, bytes in
                                    await coordinator.finished(index, bytes: bytes)
                                }
                            } catch {
                                // No job waits to read ahead in a run that will not finish.
                                await coordinator.abandoned(key)
                                throw error
                            }
                        }
                        // No file left to start: this job reads ahead in the files other jobs
                        // are fetching, through the cache, on a connection of its own; their
                        // jobs find those bytes there, their requests cut where the part starts.
                        // A run whose end its job has yet to learn, or whose job's pace is being
                        // watched, is asked about again after a pause that doubles up to a short
                        // cap (the download's end waits for the last ask), until its job learns
                        // it or finishes.
                        var pause = Duration.milliseconds(5)
                        readingAhead: while !Task.isCancelled {
                            switch await coordinator.nextPartToReadAhead() {
                            case .read(let url, let part):
                                await fetcher.readAhead(url, part)
                                pause = .milliseconds(5)
                            case .later:
                                try await Task.sleep(for: pause)
                                pause = min(pause * 2, .milliseconds(25))
                            case .done:
                                break readingAhead
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
        emit(.finished(id: manifest.id, path: folder + "/" + manifest.entryPoint))
    }

    /// Records a live stream into the package with its format's recorder; a dry run shows what
    /// it would record.
    private func record(_ manifest: AssetManifest) async throws {
        guard !options.dryRun else {
            return emit(.selection(DownloadSelection(manifest, filesDone: 0, isRecording: true)))
        }
        try await format(ofPackage: manifest).record(manifest, library, engine, options, emit)
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

extension DownloadSelection {
    /// The selection of the package `manifest`, of whose files `filesDone` are on disk.
    package init(_ manifest: AssetManifest, filesDone: Int, isRecording: Bool = false) {
        self.init(
            id: manifest.id,
            variant: manifest.variant,
            audio: manifest.audio,
            subtitles: manifest.subtitles,
            duration: manifest.duration,
            estimatedBytes: manifest.estimatedBytes,
            files: manifest.items.count,
            filesDone: filesDone,
            isRecording: isRecording
        )
    }
}
