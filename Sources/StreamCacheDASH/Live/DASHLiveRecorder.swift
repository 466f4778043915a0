import Foundation
import StreamCache
import StreamCacheDASHModel
import StreamCacheOfflineCore

/// Records a dynamic (live) DASH presentation into a package: reloads the MPD (at its
/// `minimumUpdatePeriod`, within 1 s and a minute, and at least once a segment), follows its
/// `Location`, takes from each chosen representation of its last period the segments that have
/// become available (``DASHRepresentation/liveWindow(elapsed:depth:after:limit:)``), fetches each
/// once through the streaming cache, and lists it in the package's MPD once it is durable, so the
/// package plays (and `serve` serves it) from its first second while it records.
///
/// It ends when the presentation has (the MPD turns static, or its `mediaPresentationDuration`
/// has passed) and its last segments are in, after the recorded duration
/// asked for, at the time asked for, on ``RecordingStop/request(_:)``, when no segment comes for
/// six reload periods (at least 15 s), when the MPD cannot be reloaded five times in a row or no
/// longer lists a representation, or when a file cannot be written; in every case the package is
/// finished as a static MPD of what it has. Holes (segments that left the window or failed every
/// attempt) stay holes in its timeline. Run again, the same recording goes on after its last
/// segment.
actor DASHLiveRecorder {
    private let library: OfflineLibrary
    private let engine: CacheEngine
    private let options: OfflineDownloadOptions
    private let emit: @Sendable (DownloadEvent) -> Void
    private var manifest: AssetManifest
    private var tracks: [RepresentationRecording]
    private let folder: String
    /// Where the MPD is reloaded from: its URL, then where its `Location` says.
    private var location: URL
    private var failure: OfflineError?
    /// Each track's representation as the last reload listed it.
    private var representations: [DASHRepresentation?]

    /// Reloads that fail in a row before the recording ends.
    static let reloadAttempts = 5
    /// Attempts at one segment, one per reload.
    static let segmentAttempts = 3
    /// The most segments one reload takes of a representation (the newest, past a long pause).
    static let segmentsPerReload = 1_000
    /// Segments a recording that does not start from the first available takes at the live edge.
    static let edgeSegments = 3
    /// Seconds longer than any presentation lasts.
    private static let longest = 1e9

    init(
        manifest: AssetManifest,
        library: OfflineLibrary,
        engine: CacheEngine,
        options: OfflineDownloadOptions,
        emit: @escaping @Sendable (DownloadEvent) -> Void
    ) throws {
        guard let url = URL(string: manifest.url) else {
            throw OfflineError(.manifest, "invalid URL \(manifest.url) in asset \(manifest.id)")
        }
        self.manifest = manifest
        self.library = library
        self.engine = engine
        self.options = options
        self.emit = emit
        location = url
        folder = library.folder(manifest.id)
        representations = manifest.renditions.map { _ in nil }
        // A recording run again goes on from what it holds: every segment on disk.
        let folder = self.folder
        tracks = manifest.renditions.enumerated().map { index, rendition in
            var track = RepresentationRecording(
                id: String(rendition.url.split(separator: "#", maxSplits: 1).last ?? ""),
                folder: rendition.folder
            )
            track.lost =
                manifest.recording.flatMap { $0.tracks.indices.contains(index) ? $0.tracks[index] : nil }
                ?? RecordingState.Track()
            track.taken = manifest.items.filter {
                $0.rendition == index && $0.kind == .segment
                    && FileManager.default.fileExists(atPath: folder + "/" + $0.path)
            }.sorted { $0.start < $1.start }.map { item in
                RepresentationRecording.Taken(
                    segment: LiveSegment(
                        url: URL(string: item.url) ?? url,
                        start: item.start,
                        duration: item.duration,
                        number: -1
                    ),
                    path: item.path,
                    isDone: true
                )
            }
            return track
        }
        self.manifest.items.removeAll { item in
            item.kind == .segment && !FileManager.default.fileExists(atPath: folder + "/" + item.path)
        }
    }

    private var stop: RecordingStop { options.recording.stop }

    /// Records until the recording ends, then finishes the package; its outcome is the last event.
    func run() async throws {
        let lock = try library.lockForRecording(manifest)
        defer { withExtendedLifetime(lock) {} }
        manifest.state = .downloading
        manifest.failure = nil
        manifest.recording?.ended = nil
        try writePackage()
        emit(.selection(selection))
        stop.setRecording(true)
        defer { stop.setRecording(false) }
        let fetcher = ItemFetcher(engine: engine, options: options, folder: folder, revalidates: true)
        for (index, item) in manifest.items.enumerated()
        where item.kind == .initialization && !FileManager.default.fileExists(atPath: folder + "/" + item.path) {
            try await fetcher.fetch([(index, item)]) { _, _ in }
        }

        let clocks = RecordingClocks(options.recording)
        defer { clocks.cancel() }
        await record(with: fetcher)
        try finish()
    }

    /// Reloads, takes and fetches until the recording ends.
    private func record(with fetcher: ItemFetcher) async {
        var lastNew = ContinuousClock.now
        while stop.reason == nil, failure == nil {
            let loadedAt = ContinuousClock.now
            let presentation: MediaPresentation
            do {
                presentation = try await reload()
            } catch _ where stop.reason != nil {
                return
            } catch is CancellationError {
                stop.request()
                return
            } catch {
                return fail(error as? OfflineError ?? OfflineError(.manifest, "\(error)"))
            }
            let pacing: Duration
            do {
                let (taken, longest) = try take(from: presentation)
                if taken > 0 { lastNew = .now }
                let update = presentation.root.attributes["minimumUpdatePeriod"].flatMap(ISODuration.seconds)
                pacing = .seconds(min(max(1, min(update ?? longest ?? 2, longest ?? 60)), 60))
            } catch {
                return fail(error)
            }
            await fetchTaken(with: fetcher)
            do {
                try writePackage()
            } catch {
                return fail(OfflineError(.storage, "cannot write the package: \(error)"))
            }
            emit(.recording(progress))
            if let limit = options.recording.duration, tracks[0].recordedSeconds >= limit.inSeconds {
                stop.request("duration")
            }
            if Self.hasEnded(presentation), tracks.allSatisfy({ $0.taken.allSatisfy(\.isDone) }) {
                stop.request("the presentation ended")
            }
            if stop.reason != nil { return }
            let stalled = ContinuousClock.now - lastNew
            if stalled > max(pacing * 6, .seconds(15)) {
                return fail(
                    OfflineError(
                        .manifest,
                        "\(location.absoluteString) has not advanced for \(Int(stalled.inSeconds)) s"
                    )
                )
            }
            await stop.sleep(for: max(.zero, loadedAt + pacing - .now))
        }
    }

    /// Takes the new segments of every representation in `presentation`'s last period.
    ///
    /// - Returns: how many, and the longest segment's seconds.
    private func take(from presentation: MediaPresentation) throws(OfflineError) -> (Int, Double?) {
        let url = location.absoluteString
        let periods: [DASHPeriod]
        do {
            periods = try presentation.periods()
        } catch {
            throw OfflineError(.manifest, "\(url) is not a usable MPD: \(error)")
        }
        guard let period = periods.last else { throw OfflineError(.manifest, "\(url) lists no period") }
        let listed = presentation.representations(documentURL: location).filter { $0.period == period.index }
        let elapsed: Double
        if presentation.isDynamic {
            guard let start = presentation.availabilityStart else {
                throw OfflineError(.manifest, "\(url) is dynamic and has no availabilityStartTime")
            }
            elapsed = Date().timeIntervalSince(start) - period.start
        } else {
            elapsed = period.duration ?? Self.longest
        }
        let depth = presentation.root.attributes["timeShiftBufferDepth"].flatMap(ISODuration.seconds)
        var windows: [LiveWindow] = []
        for index in tracks.indices {
            let id = tracks[index].id
            guard let representation = listed.first(where: { $0.id == id }) else {
                throw OfflineError(.manifest, "\(url) no longer lists representation \(id)")
            }
            representations[index] = representation
            let window: LiveWindow
            do {
                if let end = tracks[index].end {
                    window = try representation.liveWindow(
                        elapsed: elapsed,
                        depth: depth,
                        after: end - RepresentationRecording.tolerance,
                        limit: Self.segmentsPerReload
                    )
                } else {
                    window = try representation.liveWindow(
                        elapsed: elapsed,
                        depth: depth,
                        after: -Self.longest,
                        limit: options.recording.fromStart ? Self.segmentsPerReload : Self.edgeSegments
                    )
                }
            } catch {
                throw OfflineError(.manifest, "\(url): \(error)")
            }
            windows.append(window)
        }
        // The package's timeline starts with the earliest first segment of the first reload that
        // has any: no track's file is named before it.
        if manifest.recording?.origin == nil, let first = windows.compactMap({ $0.segments.first?.start }).min() {
            manifest.recording?.origin = first
        }
        var taken = 0
        var longest: Double?
        for (index, window) in windows.enumerated() {
            longest = max(longest ?? 0, window.segments.map(\.duration).max() ?? 0)
            let before = tracks[index].taken.count
            taken += try tracks[index].take(window, origin: manifest.recording?.origin ?? 0)
            for added in tracks[index].taken[before...] {
                manifest.items.append(
                    PackageItem(
                        kind: .segment,
                        rendition: index,
                        path: added.path,
                        url: added.segment.url.absoluteString,
                        offset: nil,
                        length: nil,
                        start: added.segment.start,
                        duration: added.segment.duration,
                        decryption: nil
                    )
                )
            }
        }
        return (taken, longest == 0 ? nil : longest)
    }

    /// One attempt at each segment taken and not fetched, up to ``OfflineDownloadOptions/jobs``
    /// at once; one that has failed ``segmentAttempts`` times is lost.
    private func fetchTaken(with fetcher: ItemFetcher) async {
        var work: [(track: Int, position: Int, entry: ItemFetcher.Entry)] = []
        for (track, recording) in tracks.enumerated() {
            for (position, taken) in recording.taken.enumerated() where !taken.isDone {
                guard let index = manifest.items.firstIndex(where: { $0.path == taken.path }) else { continue }
                work.append((track, position, (index, manifest.items[index])))
            }
        }
        guard !work.isEmpty else { return }
        let entries = work.map(\.entry)
        var outcomes: [Int: Result<Void, OfflineError>] = [:]
        await withTaskGroup(of: (Int, Result<Void, OfflineError>).self) { group in
            var next = 0
            func startNext() {
                guard next < entries.count else { return }
                let position = next
                next += 1
                group.addTask {
                    do {
                        try await fetcher.fetch([entries[position]]) { _, _ in }
                        return (position, .success(()))
                    } catch let error as OfflineError {
                        return (position, .failure(error))
                    } catch {
                        return (position, .failure(OfflineError(.segment, "\(error)")))
                    }
                }
            }
            for _ in 0..<max(1, options.jobs) { startNext() }
            for await (position, outcome) in group {
                outcomes[position] = outcome
                startNext()
            }
        }
        // Lost ones leave last, so that the positions of the others hold meanwhile.
        var lost: [(track: Int, position: Int)] = []
        for (number, entry) in work.enumerated() {
            switch outcomes[number] {
            case .success?: tracks[entry.track].taken[entry.position].isDone = true
            case .failure(let error)? where error.kind == .storage: fail(error)
            default:
                tracks[entry.track].taken[entry.position].attempts += 1
                if tracks[entry.track].taken[entry.position].attempts >= Self.segmentAttempts {
                    lost.append((entry.track, entry.position))
                }
            }
        }
        for (track, position) in lost.reversed() {
            let path = tracks[track].taken[position].path
            tracks[track].lose(at: position)
            manifest.items.removeAll { $0.path == path }
        }
    }

    /// The MPD from where it is now, trying again with a pause that doubles; its `Location`, an
    /// http(s) URL, is where the next reload goes.
    private func reload() async throws -> MediaPresentation {
        let fetcher = ManifestFetcher(engine: engine, options: options)
        var attempt = 0
        while true {
            attempt += 1
            do {
                let url = location
                let loaded = try await stop.bounded(by: .seconds(30)) { try await fetcher.document(url) }
                if stop.reason != nil { throw CancellationError() }
                guard let loaded else {
                    throw OfflineError(.manifest, "\(url.absoluteString) did not come whole within 30 s")
                }
                let presentation: MediaPresentation
                do {
                    presentation = try MediaPresentation(parsing: loaded.bytes)
                } catch {
                    throw OfflineError(.manifest, "\(url.absoluteString) is not a usable MPD: \(error)")
                }
                if let text = presentation.root.elements("Location").first?.text,
                    let moved = URL(string: text, relativeTo: url)?.absoluteURL,
                    ["http", "https"].contains(moved.scheme?.lowercased() ?? "")
                {
                    location = moved
                }
                return presentation
            } catch {
                if Task.isCancelled { throw CancellationError() }
                guard attempt < Self.reloadAttempts, stop.reason == nil else { throw error }
                await stop.sleep(for: .seconds(1 << min(attempt - 1, 4)))
            }
        }
    }

    /// Whether `presentation` has ended: it is static now, or its `mediaPresentationDuration`
    /// has passed since its `availabilityStartTime`, so no segment is to come.
    static func hasEnded(_ presentation: MediaPresentation, now: Date = Date()) -> Bool {
        guard presentation.isDynamic else { return true }
        guard let start = presentation.availabilityStart,
            let duration = presentation.root.attributes["mediaPresentationDuration"].flatMap(ISODuration.seconds)
        else { return false }
        return now >= start.addingTimeInterval(duration)
    }

    private func fail(_ error: OfflineError) {
        if failure == nil { failure = error }
        stop.request("failed")
    }

    // MARK: - The package

    /// The package's MPD of the segments on disk (once the MPD has been read), then the manifest.
    private func writePackage() throws {
        let origin = manifest.recording?.origin ?? 0
        var entries: [LocalMPD.Entry] = []
        for (index, track) in tracks.enumerated() {
            let done = track.taken.filter(\.isDone)
            let rendition = manifest.renditions[index]
            manifest.recording?.tracks[index] = track.lost
            manifest.renditions[index].duration = track.recordedSeconds
            guard var representation = representations[index] else { continue }
            representation.period = 0
            var entry = LocalMPD.Entry(
                representation: representation,
                folder: rendition.folder,
                durations: done.map(\.segment.duration),
                hasInitialization: manifest.items.contains { $0.rendition == index && $0.kind == .initialization },
                wholeFile: nil
            )
            entry.times = done.map { Int64((($0.segment.start - origin) * 1000).rounded()) }
            entries.append(entry)
        }
        if entries.count == tracks.count {
            let text = LocalMPD.text(entries)
            manifest.playlists[manifest.entryPoint] = text
            try PackageFile.writeAtomically(Data(text.utf8), to: folder + "/" + manifest.entryPoint)
        }
        try manifest.save(in: folder)
    }

    /// Drops the files of segments not fetched, writes the package's MPD of what it holds, and
    /// marks the asset complete.
    private func finish() throws {
        for index in tracks.indices { tracks[index].taken.removeAll { !$0.isDone } }
        let kept = Set(tracks.flatMap { $0.taken.map(\.path) })
        for item in manifest.items where item.kind == .segment && !kept.contains(item.path) {
            unlink(folder + "/" + item.path)
        }
        manifest.items.removeAll { $0.kind == .segment && !kept.contains($0.path) }
        library.removePartialFiles(of: manifest)
        manifest.recording?.ended = failure?.message ?? stop.reason ?? "stopped"
        manifest.state = .complete
        try writePackage()
        emit(.recording(progress))
        emit(.recordingEnded(manifest, in: folder, recorded: tracks.first?.recordedSeconds ?? 0, failure: failure))
    }

    private var selection: DownloadSelection {
        DownloadSelection(recording: manifest, recorded: tracks.first?.recordedSeconds ?? 0)
    }

    private var progress: RecordingProgress {
        RecordingProgress(
            id: manifest.id,
            seconds: tracks.first?.recordedSeconds ?? 0,
            segments: tracks.map { $0.taken.filter(\.isDone).count }.reduce(0, +),
            lostSeconds: tracks.first?.lost.lostSeconds ?? 0,
            lostSegments: tracks.map(\.lost.lostSegments).reduce(0, +)
        )
    }
}
