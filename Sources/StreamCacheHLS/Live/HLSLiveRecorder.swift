import Foundation
import StreamCache
import StreamCacheOfflineCore

/// Records a live or `EVENT` HLS stream into a package: reloads each chosen media playlist as
/// RFC 8216 §6.3.4 says (after a target duration; half of one when it had not changed), fetches
/// each new segment once through the streaming cache, and lists it in the package's playlist
/// once it is durable, so the package plays (and `serve` serves it) while it records.
///
/// It ends at `EXT-X-ENDLIST`, after the recorded duration asked for, at the time asked for, on
/// ``RecordingStop/request(_:)``, when a playlist stops advancing or cannot be reloaded, or when a
/// file cannot be written; in every case the package is finished as VOD with what it has, every
/// rendition cut to the same last media sequence number. Run again, the same recording goes on
/// after its last segment; what the origin dropped meanwhile is marked lost.
actor HLSLiveRecorder {
    private let library: OfflineLibrary
    private let engine: CacheEngine
    private let options: OfflineDownloadOptions
    private let emit: @Sendable (DownloadEvent) -> Void
    private var manifest: AssetManifest
    private var tracks: [TrackRecording] = []
    /// The segments each track has taken and not listed yet, in order.
    private var pending: [[Pending]] = []
    /// The bytes of each track's playlist as last written, by track.
    private var playlistBytes: [Int: Int] = [:]
    /// The index in the manifest of each item, by path.
    private var itemIndex: [String: Int]
    /// The first segment of a new recording, in the first track's numbering.
    private var start: Int64 = 0
    /// A failure that ended the recording.
    private var failure: OfflineError?
    /// Room on disk to finish the package in, whatever fills the disk meanwhile.
    private var reserve: SpaceReserve
    /// The package is being finished: the reserve is given back, not held again.
    private var finishing = false
    private let folder: String

    /// Reloads that fail in a row before the recording ends.
    static let reloadAttempts = 5
    /// Attempts at one segment, one per reload (one that 404s at the live edge may appear a
    /// moment later).
    static let segmentAttempts = 3

    init(
        manifest: AssetManifest,
        library: OfflineLibrary,
        engine: CacheEngine,
        options: OfflineDownloadOptions,
        emit: @escaping @Sendable (DownloadEvent) -> Void
    ) {
        self.manifest = manifest
        self.library = library
        self.engine = engine
        self.options = options
        self.emit = emit
        folder = library.folder(manifest.id)
        reserve = SpaceReserve(folder: folder)
        itemIndex = Dictionary(
            manifest.items.enumerated().map { ($1.path, $0) },
            uniquingKeysWith: { first, _ in first }
        )
    }

    private var stop: RecordingStop { options.recording.stop }

    /// Records until the recording ends, then finishes the package; its outcome is the last event.
    func run() async throws {
        let lock = try library.lockForRecording(manifest)
        defer { withExtendedLifetime(lock) {} }
        try restoreTracks()
        pending = tracks.map { _ in [] }
        guard reserve.hold(atLeast: finishingBytes) else {
            throw OfflineError(
                .notEnoughSpace,
                "\(folder) has no room to record: not even \(ByteSize.text(SpaceReserve.minimum)) is free"
            )
        }
        defer { reserve.release() }
        manifest.state = .downloading
        manifest.failure = nil
        manifest.recording?.ended = nil
        try save()
        emit(.selection(selection))
        stop.setRecording(true)
        defer { stop.setRecording(false) }

        // The first reload of every track, before any is recorded: the first says where a new
        // recording starts.
        var firsts: [MediaPlaylist] = []
        for index in tracks.indices { firsts.append(try await reload(index, limit: .seconds(30))) }
        start = Self.start(of: firsts[0], fromStart: options.recording.fromStart)
        let clocks = RecordingClocks(options.recording)
        defer { clocks.cancel() }
        await withTaskGroup(of: Void.self) { group in
            for (index, first) in firsts.enumerated() {
                group.addTask { await self.record(track: index, first: first) }
            }
        }
        try finish()
    }

    // MARK: - One track

    /// A segment taken from the origin's playlist, its files being fetched.
    private struct Pending {
        let sequence: Int64
        /// As the package's playlist will list it.
        let segment: Segment
        /// Its files, by index in the manifest.
        let items: [Int]
        var attempts = 0
        var outcome: Outcome?
    }

    /// Takes the new segments of each reload of track `index` until the recording ends.
    private func record(track index: Int, first: MediaPlaylist) async {
        var playlist = first
        var loadedAt = ContinuousClock.now
        var lastNew = loadedAt
        while true {
            let target = Self.pacing(of: playlist)
            let taken = takeNew(track: index, from: playlist)
            if taken > 0 { lastNew = .now }
            await fetchPending(track: index)
            listFetched(track: index)
            if stop.reason != nil || failure != nil { return }
            if playlist.endList && pending[index].isEmpty {
                tracks[index].finished = true
                if tracks.allSatisfy(\.finished) { stop.request("endlist") }
                return
            }
            let stalled = ContinuousClock.now - lastNew
            if stalled > max(target * 6, .seconds(15)) {
                let url = tracks[index].url.absoluteString
                fail(OfflineError(.manifest, "\(url) has not advanced for \(Int(stalled.inSeconds)) s"))
                return
            }
            // RFC 8216 §6.3.4: a target duration after a change, half of one after none, from
            // when the last reload began (fetching its segments does not delay the next).
            let next = loadedAt + (taken == 0 ? target / 2 : target)
            await stop.sleep(for: max(.zero, next - .now))
            if stop.reason != nil { return }
            do {
                loadedAt = .now
                playlist = try await reload(index, limit: max(target * 3, .seconds(15)))
            } catch _ where stop.reason != nil {
                // Asked to end while it reloaded: what was recorded stands.
                return
            } catch is CancellationError {
                // The app stopped reading the events: the recording ends as if asked to.
                stop.request()
                return
            } catch {
                fail(error as? OfflineError ?? OfflineError(.manifest, "\(error)"))
                return
            }
        }
    }

    /// Takes the segments of `playlist` track `index` has not taken, planned into package files,
    /// which the manifest lists before any is fetched (so `serve` finds them once they are
    /// listed); how many.
    private func takeNew(track index: Int, from playlist: MediaPlaylist) -> Int {
        var time = tracks[index].playlist.duration + pending[index].reduce(0) { $0 + $1.segment.duration }
        var taken = 0
        for (sequence, segment) in tracks[index].newSegments(in: playlist, startingAt: start) {
            taken += 1
            do {
                let (planned, items) = try tracks[index].planner.plan(
                    segment,
                    sequence: sequence,
                    position: 0,
                    time: time
                )
                var indices: [Int] = []
                for item in items {
                    if let known = itemIndex[item.path] {
                        indices.append(known)
                    } else {
                        manifest.items.append(item)
                        itemIndex[item.path] = manifest.items.count - 1
                        indices.append(manifest.items.count - 1)
                    }
                }
                pending[index].append(Pending(sequence: sequence, segment: planned, items: indices))
                time += segment.duration
            } catch {
                // A segment the package cannot hold (a `file:` URI): lost, in its place.
                pending[index].append(
                    Pending(sequence: sequence, segment: segment, items: [], attempts: 0, outcome: .lost)
                )
            }
        }
        if taken > 0 { try? save() }
        return taken
    }

    /// One attempt at each segment of track `index` still to fetch, up to
    /// ``OfflineDownloadOptions/jobs`` at once. One that fails is tried again after the next
    /// reload (a segment listed at the live edge may 404 for a moment) while those after it are
    /// fetched; after ``segmentAttempts`` it is lost.
    private func fetchPending(track index: Int) async {
        // Each segment is new: one whose URI an earlier segment had is checked, not taken as fresh.
        let fetcher = ItemFetcher(engine: engine, options: options, folder: folder, revalidates: true)
        let waiting = pending[index].indices.filter { pending[index][$0].outcome == nil }
        guard !waiting.isEmpty else { return }
        let runs = waiting.map { position in
            pending[index][position].items.map { (index: $0, item: manifest.items[$0]) }
        }
        var outcomes: [Int: Outcome] = [:]
        await withTaskGroup(of: (Int, Outcome).self) { group in
            var next = 0
            func startNext() {
                guard next < runs.count else { return }
                let position = next
                next += 1
                group.addTask { [folder] in (position, await Self.fetch(runs[position], with: fetcher, folder: folder))
                }
            }
            for _ in 0..<max(1, options.jobs) { startNext() }
            for await (position, outcome) in group {
                outcomes[position] = outcome
                startNext()
            }
        }
        for (position, entry) in waiting.enumerated() {
            pending[index][entry].attempts += 1
            switch outcomes[position] ?? .lost {
            case .done: pending[index][entry].outcome = .done
            case .unwritable(let error): fail(error)
            case .lost:
                if pending[index][entry].attempts >= Self.segmentAttempts { pending[index][entry].outcome = .lost }
            }
        }
    }

    /// Lists, in order, the segments of track `index` whose fate is known (fetched, or lost),
    /// then writes its playlist and the manifest.
    private func listFetched(track index: Int) {
        var listed = 0
        while let head = pending[index].first, let outcome = head.outcome {
            pending[index].removeFirst()
            tracks[index].took(outcome == .done ? head.segment : nil, duration: head.segment.duration)
            listed += 1
        }
        guard listed > 0 else { return }
        do {
            try writePlaylist(of: index)
            try save()
        } catch {
            fail(OfflineError(.storage, "cannot write the package: \(error)"))
            return
        }
        if index == 0, let limit = options.recording.duration, tracks[0].playlist.duration >= limit.inSeconds {
            stop.request("duration")
        }
        emit(.recording(progress))
    }

    /// What became of one segment's files.
    private enum Outcome: Equatable {
        /// Durable in the package.
        case done
        /// Not fetched: tried again, then the segment is lost.
        case lost
        /// The package cannot be written (a full disk): the recording ends.
        case unwritable(OfflineError)
    }

    /// One attempt at the files of a segment (the fetcher itself tries again after a dropped
    /// connection or a 5xx). Files already there count as done.
    private static func fetch(_ run: [ItemFetcher.Entry], with fetcher: ItemFetcher, folder: String) async -> Outcome {
        do {
            for entry in run where !FileManager.default.fileExists(atPath: folder + "/" + entry.item.path) {
                try await fetcher.fetch([entry]) { _, _ in }
            }
            return .done
        } catch let error as OfflineError where error.kind == .storage {
            return .unwritable(error)
        } catch {
            return .lost
        }
    }

    // MARK: - Reloads

    /// The media playlist of track `index`, fetched again (a conditional request through the
    /// cache), trying again with a pause that doubles. Each attempt has `limit` to come whole,
    /// and ends when the recording is asked to.
    private func reload(_ index: Int, limit: Duration) async throws -> MediaPlaylist {
        let url = tracks[index].url
        let fetcher = ManifestFetcher(engine: engine, options: options)
        var attempt = 0
        while true {
            attempt += 1
            do {
                let loaded = try await stop.bounded(by: limit) { try await fetcher.playlist(url) }
                if stop.reason != nil { throw CancellationError() }
                guard let loaded else {
                    throw OfflineError(
                        .manifest,
                        "\(url.absoluteString) did not come whole within \(Int(limit.inSeconds)) s"
                    )
                }
                guard case .media(let playlist) = loaded else {
                    throw OfflineError(.manifest, "\(url.absoluteString) is no longer a media playlist")
                }
                return playlist
            } catch {
                if Task.isCancelled { throw CancellationError() }
                guard attempt < Self.reloadAttempts, stop.reason == nil else { throw error }
                await stop.sleep(for: .seconds(1 << min(attempt - 1, 4)))
            }
        }
    }

    /// Where a new recording starts in `playlist`: its first segment, or the live edge (the last
    /// segments covering three target durations).
    static func start(of playlist: MediaPlaylist, fromStart: Bool) -> Int64 {
        if fromStart { return playlist.mediaSequence }
        let edge = 3 * pacing(of: playlist).inSeconds
        var covered = 0.0
        var position = playlist.segments.count
        while position > 0, covered < edge {
            position -= 1
            covered += playlist.segments[position].duration
        }
        return playlist.mediaSequence + Int64(position)
    }

    /// How often a playlist is reloaded: its target duration, within 1 s and a minute whatever it
    /// says (a target of 10^9 s would otherwise pace, and outwait, every stop but a signal).
    static func pacing(of playlist: MediaPlaylist) -> Duration {
        .seconds(min(max(1, playlist.targetDuration ?? 6), 60))
    }

    private func fail(_ error: OfflineError) {
        if failure == nil { failure = error }
        stop.request("failed")
    }

    // MARK: - The package

    /// The tracks as the package has them: an existing recording goes on where it stopped.
    private func restoreTracks() throws {
        let decrypting = !options.keepsEncryption
        if manifest.recording == nil {
            manifest.recording = RecordingState(tracks: manifest.renditions.map { _ in RecordingState.Track() })
        }
        tracks = try manifest.renditions.enumerated().map { index, rendition in
            guard let url = URL(string: rendition.url) else {
                throw OfflineError(.manifest, "invalid URL \(rendition.url) in asset \(manifest.id)")
            }
            let path = folder + "/" + rendition.playlistPath
            let text =
                (try? String(contentsOfFile: path, encoding: .utf8)) ?? manifest.playlists[rendition.playlistPath] ?? ""
            guard let playlist = RecordedPlaylist(text: text) else {
                throw OfflineError(.storage, "the recorded playlist \(path) cannot be read")
            }
            playlistBytes[index] = text.utf8.count
            return TrackRecording(
                url: url,
                playlist: playlist,
                planner: SegmentPlanner(
                    url: url,
                    rendition: index,
                    folder: rendition.folder,
                    decrypting: decrypting,
                    naming: .recorded(epoch: 0)
                ),
                lost: manifest.recording.flatMap { $0.tracks.indices.contains(index) ? $0.tracks[index] : nil }
                    ?? RecordingState.Track()
            )
        }
        let entry = folder + "/" + manifest.entryPoint
        if !FileManager.default.fileExists(atPath: entry), let text = manifest.playlists[manifest.entryPoint] {
            try PackageFile.writeAtomically(Data(text.utf8), to: entry)
        }
        for index in tracks.indices
        where !FileManager.default.fileExists(atPath: folder + "/" + manifest.renditions[index].playlistPath) {
            try writePlaylist(of: index)
        }
    }

    private func writePlaylist(of index: Int, ended: Bool = false) throws {
        let text = Data(tracks[index].playlist.text(ended: ended).utf8)
        try PackageFile.writeAtomically(text, to: folder + "/" + manifest.renditions[index].playlistPath)
        playlistBytes[index] = text.count
    }

    /// What finishing writes at most: the manifest and each playlist, twice over (each is
    /// written beside its name, then renamed).
    private var finishingBytes: Int64 {
        // The playlists as last written, with room for the few bytes ending them adds.
        let playlists = playlistBytes.values.reduce(0) { $0 + $1 + 64 }
        let attributes = try? FileManager.default.attributesOfItem(atPath: folder + "/" + AssetManifest.fileName)
        let manifestSize = (attributes?[.size] as? Int) ?? 0
        return Int64(2 * (playlists + manifestSize))
    }

    private func save() throws {
        // Best effort: a disk too full for more makes the recording fail on its next file.
        if !finishing { reserve.hold(atLeast: finishingBytes) }
        for index in tracks.indices {
            manifest.recording?.tracks[index] = tracks[index].lost
            manifest.renditions[index].duration = tracks[index].playlist.duration
        }
        try manifest.save(in: folder)
    }

    /// Cuts every track to the same last media sequence number, drops the files no playlist
    /// lists, writes the playlists as VOD, and marks the asset complete.
    private func finish() throws {
        // Renditions cover the same media sequence numbers: one that began later (its window
        // had moved on by its first reload) or stopped sooner sets the bounds for all.
        if tracks.count > 1, tracks.allSatisfy({ $0.epoch == tracks[0].epoch }) {
            if let first = tracks.compactMap(\.firstListed).max() {
                for index in tracks.indices { tracks[index].cut(before: first) }
            }
            if let last = tracks.compactMap(\.lastListed).min() {
                for index in tracks.indices { tracks[index].cut(after: last) }
            }
        }
        var listed: Set<String> = []
        for (index, track) in tracks.enumerated() {
            let folderName = manifest.renditions[index].folder
            for segment in track.playlist.playlist.segments {
                listed.insert(folderName + "/" + segment.uri)
                for key in segment.keys { if let uri = key.uri { listed.insert(folderName + "/" + uri) } }
                if let map = segment.map { listed.insert(folderName + "/" + map.uri) }
            }
        }
        for item in manifest.items where !listed.contains(item.path) {
            unlink(folder + "/" + item.path)
        }
        // The files no playlist lists go first, then the space held back for this.
        library.removePartialFiles(of: manifest)
        finishing = true
        reserve.release()
        for index in tracks.indices { try writePlaylist(of: index, ended: true) }
        manifest.items.removeAll { !listed.contains($0.path) }
        itemIndex = Dictionary(
            manifest.items.enumerated().map { ($1.path, $0) },
            uniquingKeysWith: { first, _ in first }
        )
        for (index, track) in tracks.enumerated() {
            manifest.playlists[manifest.renditions[index].playlistPath] = track.playlist.text(ended: true)
        }
        let reason = failure?.message ?? stop.reason ?? "stopped"
        manifest.recording?.ended = reason
        manifest.state = .complete
        try save()
        emit(.recording(progress))
        emit(.recordingEnded(manifest, in: folder, recorded: tracks[0].playlist.duration, failure: failure))
    }

    private var selection: DownloadSelection {
        DownloadSelection(recording: manifest, recorded: tracks.first?.playlist.duration ?? 0)
    }

    private var progress: RecordingProgress {
        RecordingProgress(
            id: manifest.id,
            seconds: tracks.first?.playlist.duration ?? 0,
            segments: tracks.map(\.playlist.segmentCount).reduce(0, +),
            lostSeconds: tracks.first?.lost.lostSeconds ?? 0,
            lostSegments: tracks.map(\.lost.lostSegments).reduce(0, +)
        )
    }
}
