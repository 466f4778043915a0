import Foundation
import StreamCache
import StreamCacheOfflineCore

/// HLS packages: the multivariant playlist's variant and renditions (``MediaSelection``), their
/// media playlists, planned into files and rewritten playlists (``HLSPackagePlan``), with the size
/// estimated from a sample of the files.
struct HLSPackagePlanner: PackagePlanner {
    let library: OfflineLibrary
    let engine: CacheEngine
    let options: OfflineDownloadOptions

    func manifest(for url: URL, document: [UInt8], criteria: MediaSelectionCriteria) async throws -> AssetManifest {
        let top = try ManifestFetcher.playlist(parsing: document, from: url)
        switch top {
        case .media(let playlist):
            let id = AssetID.make(key: engine.configuration.cacheKey(url), playlists: options.sections.identity)
            if let manifest = library.manifest(identifiedAs: id, keyOf: engine.configuration.cacheKey) {
                return manifest
            }
            let plan = try await measured(
                HLSPackagePlan(
                    multivariant: nil,
                    selection: nil,
                    media: [HLSPackagePlan.Media(kind: .video, rendition: nil, url: url, playlist: playlist)],
                    keepingEncryption: options.keepsEncryption,
                    recording: !playlist.endList,
                    sections: options.sections
                )
            )
            return manifest(id: id, url: url, plan: plan, selection: nil, sources: [url], sections: options.sections)
        case .multivariant(let playlist):
            return try await plan(playlist, url: url, criteria: criteria)
        }
    }

    /// The variant and the renditions `old` has, then those `criteria` choose by language.
    func manifest(adding criteria: MediaSelectionCriteria, to old: AssetManifest) async throws -> AssetManifest {
        let id = old.id
        guard let url = URL(string: old.url) else {
            throw OfflineError(.unknownAsset, "no asset \(id) in \(library.directory)")
        }
        guard
            case .multivariant(let playlist) = try await ManifestFetcher(engine: engine, options: options).playlist(url)
        else {
            throw OfflineError(.noMatchingRendition, "asset \(id) is one media playlist: it has no other renditions")
        }
        let held = Set(old.renditions.map(\.url))
        func resolved(_ uri: String?) -> String? { uri.flatMap { URL(string: $0, relativeTo: url)?.absoluteString } }
        guard let variant = playlist.variants.first(where: { resolved($0.uri).map(held.contains) == true }) else {
            throw OfflineError(.manifest, "\(old.url) no longer lists the variant asset \(id) holds")
        }
        let added = try MediaSelection.resolve(
            playlist,
            variant: variant,
            criteria: MediaSelectionCriteria(audio: criteria.audio, subtitles: criteria.subtitles)
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
        return try await plan(
            playlist,
            url: url,
            selection: selection,
            id: id,
            sections: old.sections ?? TimeSections()
        )
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
        return try await plan(playlist, url: url, selection: selection, id: nil, sections: options.sections)
    }

    /// The manifest of `selection` in `playlist`: the library's asset `id` when given (or, without
    /// it, the asset of the same URL and selection if the library has it), else planned from the
    /// chosen media playlists.
    private func plan(
        _ playlist: MultivariantPlaylist,
        url: URL,
        selection: MediaSelection,
        id given: String?,
        sections: TimeSections
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
                throw OfflineError(.manifest, "\(url.absoluteString): invalid URI '\(entry.uri)'")
            }
            return resolved
        }
        let keys = urls.map { engine.configuration.cacheKey($0) }
        let id = given ?? AssetID.make(key: engine.configuration.cacheKey(url), playlists: keys + sections.identity)
        if given == nil, let manifest = library.manifest(identifiedAs: id, keyOf: engine.configuration.cacheKey) {
            return manifest
        }
        var media: [HLSPackagePlan.Media] = []
        for (entry, mediaURL) in zip(wanted, urls) {
            let fetched = try await ManifestFetcher(engine: engine, options: options).playlist(mediaURL)
            guard case .media(let mediaPlaylist) = fetched else {
                throw OfflineError(.manifest, "\(mediaURL.absoluteString) is not a media playlist")
            }
            media.append(
                HLSPackagePlan.Media(
                    kind: entry.kind,
                    rendition: entry.rendition,
                    url: mediaURL,
                    playlist: mediaPlaylist
                )
            )
        }
        let plan = try await measured(
            HLSPackagePlan(
                multivariant: playlist,
                selection: selection,
                media: media,
                keepingEncryption: options.keepsEncryption,
                // A live stream, or one rendition of it, is recorded (``HLSLiveRecorder``).
                recording: media.contains { !$0.playlist.endList },
                sections: sections
            )
        )
        var manifest = manifest(
            id: id,
            url: url,
            plan: plan,
            selection: selection,
            sources: [url] + urls,
            sections: sections
        )
        manifest.title = Self.title(of: playlist)
        return manifest
    }

    /// The title the multivariant playlist gives (`EXT-X-SESSION-DATA` `com.apple.hls.title`),
    /// one line of at most 200 characters.
    static func title(of playlist: MultivariantPlaylist) -> String? {
        let value = playlist.sessionData.first { $0["DATA-ID"] == "com.apple.hls.title" }?["VALUE"]
        let line = value?.split(whereSeparator: \.isNewline).first.map { String($0.prefix(200)) }
        return line?.trimmingCharacters(in: .whitespaces).isEmpty == false ? line : nil
    }

    /// `plan` with its size estimated from the lengths of a sample of its files, learnt through
    /// the streaming cache (the first two bytes of each, which stay there for the download), a
    /// few at once. A file whose length cannot be learnt is left out of the sample.
    private func measured(_ plan: HLSPackagePlan) async -> HLSPackagePlan {
        let probes = plan.sizeProbes
        guard options.estimatesSize, !probes.isEmpty else { return plan }
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
        plan: HLSPackagePlan,
        selection: MediaSelection?,
        sources: [URL],
        sections: TimeSections
    ) -> AssetManifest {
        var manifest = AssetManifest(
            id: id,
            url: url.absoluteString,
            created: Date(),
            state: .downloading,
            entryPoint: plan.entryPoint,
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
        manifest.sections = sections.isWhole ? nil : sections
        manifest.timelineHeads = sections.isWhole ? nil : plan.timelineHeads
        if plan.isRecording {
            manifest.recording = RecordingState(tracks: plan.renditions.map { _ in RecordingState.Track() })
        }
        return manifest
    }
}
