import Foundation
import StreamCache
import StreamCacheDASHModel
import StreamCacheHLSModel
import StreamCacheOfflineCore

/// DASH packages: one video representation (by bandwidth and resolution, as for HLS variants),
/// audio and text by language from a static MPD, each representation's segments (or its one
/// whole file) as files of its folder, and `manifest.mpd`, an MPD of those representations
/// pointing at them. An MPD of several periods (chapters, inserted advertisements) makes one
/// package of the same periods: each period's representations are chosen by the same criteria
/// and kept in folders named for their period (`p2-video`).
struct DASHPackagePlanner: PackagePlanner {
    let library: OfflineLibrary
    let engine: CacheEngine
    let options: OfflineDownloadOptions

    /// The package's entry point.
    static let entryPoint = "manifest.mpd"

    func manifest(for url: URL, document: [UInt8], criteria: MediaSelectionCriteria) async throws -> AssetManifest {
        if let recording = try Self.recording(
            of: document,
            url: url,
            criteria: criteria,
            key: engine.configuration.cacheKey(url)
        ) {
            return library.manifest(identifiedAs: recording.id, keyOf: engine.configuration.cacheKey) ?? recording
        }
        let all = try Self.representations(of: document, url: url)
        let chosen = try Self.choose(from: all, criteria: criteria, url: url)
        let selectionIDs = chosen.map(Self.selectionID)
        let id = AssetID.make(
            key: engine.configuration.cacheKey(url),
            playlists: selectionIDs + options.sections.identity
        )
        if let manifest = library.manifest(identifiedAs: id, keyOf: engine.configuration.cacheKey) { return manifest }
        return try Self.plan(try await indexed(chosen, url: url), id: id, url: url, sections: options.sections)
    }

    /// The representations of the static MPD `document` (fetched from `url`): a package of
    /// them is planned whole (a dynamic MPD is recorded, ``recording(of:url:criteria:key:)``).
    ///
    /// - Throws: ``OfflineError`` `manifest` for an MPD that cannot be read or whose periods
    ///   cannot be placed one after another (``MediaPresentation/periods()``), `live` for a
    ///   dynamic one.
    static func representations(of document: [UInt8], url: URL) throws(OfflineError) -> [DASHRepresentation] {
        let presentation: MediaPresentation
        do {
            presentation = try MediaPresentation(parsing: document)
            _ = try presentation.periods()
        } catch {
            throw OfflineError(.manifest, "\(url.absoluteString) is not a usable MPD: \(error)")
        }
        guard !presentation.isDynamic else {
            throw OfflineError(
                .live,
                "\(url.absoluteString) is a live (dynamic) MPD: tracks are added only to packages of a static one"
            )
        }
        return presentation.representations(documentURL: url)
    }

    /// The manifest of a recording of the dynamic MPD `document` (fetched from `url`, whose cache
    /// key is `key`): the representations of its last period `criteria` choose, each in a folder
    /// of its own with its initialization segment, and no segment yet (``DASHLiveRecorder`` takes
    /// them as they come); `nil` for a static MPD.
    ///
    /// - Throws: ``OfflineError`` `live` for a presentation that has not begun, `manifest` for one
    ///   that cannot be read or recorded (no `availabilityStartTime`, addressing other than a
    ///   `SegmentTemplate`).
    static func recording(
        of document: [UInt8],
        url: URL,
        criteria: MediaSelectionCriteria,
        key: String
    ) throws(OfflineError) -> AssetManifest? {
        let presentation: MediaPresentation
        let periods: [DASHPeriod]
        do {
            presentation = try MediaPresentation(parsing: document)
            periods = try presentation.periods()
        } catch {
            throw OfflineError(.manifest, "\(url.absoluteString) is not a usable MPD: \(error)")
        }
        guard presentation.isDynamic else { return nil }
        guard let start = presentation.availabilityStart else {
            throw OfflineError(.manifest, "\(url.absoluteString) is dynamic and has no availabilityStartTime")
        }
        guard start.timeIntervalSinceNow <= 1 else {
            throw OfflineError(
                .live,
                "\(url.absoluteString) is a live (dynamic) MPD that begins at "
                    + "\(ISO8601DateFormatter().string(from: start)): nothing to record yet"
            )
        }
        guard let period = periods.last else { throw OfflineError(.manifest, "\(url.absoluteString) lists no period") }
        let listed = presentation.representations(documentURL: url).filter { $0.period == period.index }
        let chosen = try choose(fromPeriod: listed, criteria: criteria, url: url)
        let elapsed = -start.timeIntervalSinceNow - period.start
        var folders = PackageFolderNames()
        var renditions: [PackageRendition] = []
        var items: [PackageItem] = []
        var entries: [LocalMPD.Entry] = []
        for (index, representation) in chosen.enumerated() {
            let window: LiveWindow
            do {
                window = try representation.liveWindow(elapsed: elapsed, depth: nil, after: elapsed, limit: 1)
            } catch {
                throw OfflineError(.manifest, "\(url.absoluteString): \(error)")
            }
            let kind = PackageRendition.Kind(representation)
            let folder = folders.claim(kind.rawValue, language: kind == .video ? nil : representation.language ?? "und")
            if let initialization = window.initialization {
                items.append(
                    item(.initialization, folder + "/init.mp4", SegmentReference(url: initialization), index, 0)
                )
            }
            renditions.append(
                PackageRendition(
                    kind: kind,
                    folder: folder,
                    language: kind == .video ? nil : representation.language,
                    url: url.absoluteString + "#" + representation.id,
                    duration: 0
                )
            )
            var local = representation
            local.period = 0
            entries.append(
                LocalMPD.Entry(
                    representation: local,
                    folder: folder,
                    durations: [],
                    hasInitialization: window.initialization != nil,
                    wholeFile: nil,
                    times: []
                )
            )
        }
        let selectionIDs = chosen.map { "dash:" + $0.id }
        let video = chosen.first { $0.contentType == "video" }
        var manifest = AssetManifest(
            id: AssetID.make(key: key, playlists: selectionIDs),
            url: url.absoluteString,
            created: Date(),
            state: .downloading,
            entryPoint: entryPoint,
            variant: video.map { video in
                OfflineAsset.VariantInfo(
                    bandwidth: video.bandwidth,
                    resolution: video.width.flatMap { width in video.height.map { "\(width)x\($0)" } },
                    codecs: video.codecs
                )
            },
            audio: languages(of: chosen, "audio"),
            subtitles: languages(of: chosen, "text"),
            renditions: renditions,
            items: items,
            estimatedBytes: nil
        )
        manifest.playlists = [entryPoint: LocalMPD.text(entries)]
        manifest.sourcePlaylists = [url.absoluteString]
        manifest.selectionIDs = selectionIDs
        manifest.recording = RecordingState(tracks: renditions.map { _ in RecordingState.Track() })
        return manifest
    }

    /// What a package's manifest calls `representation` among those it chose: `dash:ID` in the
    /// first period, `dash@N:ID` in period N (from 1), so that the same id in two periods is two
    /// selections, and no id can pass for another period's.
    static func selectionID(_ representation: DASHRepresentation) -> String {
        representation.period == 0
            ? "dash:" + representation.id : "dash@\(representation.period + 1):" + representation.id
    }

    /// Each of `chosen` with its segments.
    private func indexed(_ chosen: [DASHRepresentation], url: URL) async throws -> [(DASHRepresentation, SegmentIndex)]
    {
        var indexes: [SegmentIndex] = []
        var budget = SegmentBudget()
        for representation in chosen {
            do {
                indexes.append(try await segments(of: representation, budget: &budget))
            } catch let error as ManifestParseError {
                throw OfflineError(
                    .manifest,
                    "\(url.absoluteString), representation \(representation.id): \(error.message)"
                )
            } catch let error as CancellationError {
                throw error
            } catch {
                throw OfflineError(
                    .segment,
                    "cannot read the index of representation \(representation.id): \(ItemFetcher.reason(for: error))",
                    cause: error
                )
            }
        }
        return Array(zip(chosen, indexes))
    }

    /// The segments of `representation`; for a `SegmentBase`, read from the `sidx` box its
    /// `indexRange` names (fetched through the streaming cache, where it stays for the download).
    private func segments(
        of representation: DASHRepresentation,
        budget: inout SegmentBudget
    ) async throws -> SegmentIndex {
        var index = try SegmentIndex(representation, budget: &budget)
        guard let sidx = index.sidx, let range = sidx.range else { return index }
        guard range.count <= 1 << 20 else {
            throw ManifestParseError("its indexRange is \(range.count) bytes: more than a sidx box needs")
        }
        let resource = try await engine.open(sidx.url, originHeaders: options.headers)
        var bytes: [UInt8] = []
        for try await chunk in resource.read(from: range.lowerBound, length: Int64(range.count)) { bytes += chunk }
        let box = try SegmentIndexBox(bytes: bytes, boxOffset: range.lowerBound)
        try budget.take(Int64(box.references.count), for: "the sidx box of representation \(representation.id)")
        index.media = box.references.map { SegmentReference(url: sidx.url, range: $0.range, duration: $0.duration) }
        index.sidx = nil
        return index
    }

    /// The representations `old` holds, first and in the order they were chosen (so they keep
    /// their folders), then the audio and text ones `criteria` choose by language.
    ///
    /// - Throws: ``OfflineError`` `noMatchingRendition` for a language none has; `manifest` when
    ///   the MPD no longer lists a representation the asset holds.
    func manifest(adding criteria: MediaSelectionCriteria, to old: AssetManifest) async throws -> AssetManifest {
        let id = old.id
        guard let url = URL(string: old.url) else {
            throw OfflineError(.unknownAsset, "no asset \(id) in \(library.directory)")
        }
        let document = try await ManifestFetcher(engine: engine, options: options).document(url)
        let all = try Self.representations(of: document.bytes, url: url)
        var chosen: [DASHRepresentation] = []
        for held in old.selectionIDs ?? [] {
            guard let representation = all.first(where: { Self.selectionID($0) == held }) else {
                throw OfflineError(
                    .manifest,
                    "\(old.url) no longer lists representation \(held.drop { $0 != ":" }.dropFirst()) of asset \(id): download it again"
                )
            }
            chosen.append(representation)
        }
        for period in Self.byPeriod(all) {
            let added = try Self.inPeriod(period, of: all) { () throws(OfflineError) in
                try Self.byLanguage(period.filter { $0.contentType == "audio" }, criteria.audio, what: "audio")
                    + Self.byLanguage(period.filter { $0.contentType == "text" }, criteria.subtitles, what: "subtitles")
            }
            chosen += added.filter { new in !chosen.contains { Self.selectionID($0) == Self.selectionID(new) } }
        }
        chosen = try Self.protectionChecked(chosen, url: url)
        return try Self.plan(
            try await indexed(chosen, url: url),
            id: id,
            url: url,
            sections: old.sections ?? TimeSections()
        )
    }

    /// The video representation `criteria` choose and the audio and text ones of the languages
    /// they ask for, in each period by the same rules (format ids count within each period).
    ///
    /// - Throws: ``OfflineError`` `drm` naming the protection system of a chosen representation,
    ///   `noMatchingVariant` when no video representation fits; naming the period when there
    ///   are several.
    static func choose(
        from all: [DASHRepresentation],
        criteria: MediaSelectionCriteria,
        url: URL
    ) throws(OfflineError) -> [DASHRepresentation] {
        var chosen: [DASHRepresentation] = []
        for period in byPeriod(all) {
            chosen += try inPeriod(period, of: all) { () throws(OfflineError) in
                try choose(fromPeriod: period, criteria: criteria, url: url)
            }
        }
        return chosen
    }

    /// `all` period by period, in document order.
    private static func byPeriod(_ all: [DASHRepresentation]) -> [[DASHRepresentation]] {
        var periods: [[DASHRepresentation]] = []
        for representation in all {
            if let last = periods.last?.last, last.period == representation.period {
                periods[periods.count - 1].append(representation)
            } else {
                periods.append([representation])
            }
        }
        return periods
    }

    /// What `body` chooses of `period`, its error naming the period when `all` has several.
    private static func inPeriod(
        _ period: [DASHRepresentation],
        of all: [DASHRepresentation],
        _ body: () throws(OfflineError) -> [DASHRepresentation]
    ) throws(OfflineError) -> [DASHRepresentation] {
        do {
            return try body()
        } catch {
            guard let index = period.first?.period, all.last?.period != 0 else { throw error }
            throw OfflineError(error.kind, "period \(index + 1): " + error.message, cause: error.cause)
        }
    }

    /// ``choose(from:criteria:url:)`` in one period.
    private static func choose(
        fromPeriod all: [DASHRepresentation],
        criteria: MediaSelectionCriteria,
        url: URL
    ) throws(OfflineError) -> [DASHRepresentation] {
        if criteria.audioOnly, criteria.formats?.video == nil {
            var audio = all.filter { $0.contentType == "audio" }
            if let named = criteria.formats?.audio, !named.isEmpty {
                audio = try FormatChoice.pick(named, of: audio, kind: .audio)
            } else {
                audio = try byLanguage(audio, criteria.audio, what: "audio")
            }
            guard !audio.isEmpty else {
                throw OfflineError(.noMatchingRendition, "\(url.absoluteString) lists no audio representation")
            }
            return try protectionChecked(audio, url: url)
        }
        if let formats = criteria.formats {
            return try protectionChecked(try chosen(from: all, by: formats, criteria: criteria, url: url), url: url)
        }
        let videos = all.filter { $0.contentType == "video" }
        let read = { (video: DASHRepresentation) in
            VideoChoice.Candidate(
                bandwidth: video.bandwidth,
                resolution: video.width.flatMap { width in video.height.map { Resolution(width: width, height: $0) } },
                codecs: video.codecs,
                videoRange: nil
            )
        }
        var chosen: [DASHRepresentation] = []
        if let video = VideoChoice.choose(videos, criteria: criteria, as: read) {
            chosen.append(video)
        } else if !videos.isEmpty {
            throw OfflineError(
                .noMatchingVariant,
                "no video representation of \(url.absoluteString) matches the selection; the representations are: "
                    + VideoChoice.listing(videos, as: read)
            )
        }
        chosen += try byLanguage(all.filter { $0.contentType == "audio" }, criteria.audio, what: "audio")
        let hasMedia = !chosen.isEmpty
        chosen += try byLanguage(all.filter { $0.contentType == "text" }, criteria.subtitles, what: "subtitles")
        guard hasMedia else {
            throw OfflineError(.noMatchingVariant, "\(url.absoluteString) lists no video or audio representation")
        }
        return try protectionChecked(chosen, url: url)
    }

    /// The representations `formats` name, each kind not named chosen by `criteria`'s languages
    /// (video: none).
    private static func chosen(
        from all: [DASHRepresentation],
        by formats: FormatChoice,
        criteria: MediaSelectionCriteria,
        url: URL
    ) throws(OfflineError) -> [DASHRepresentation] {
        let audio = all.filter { $0.contentType == "audio" }
        let text = all.filter { $0.contentType == "text" }
        var chosen = try FormatChoice.pick(
            formats.video.map { [$0] } ?? [],
            of: all.filter { $0.contentType == "video" },
            kind: .video
        )
        chosen +=
            formats.audio.isEmpty
            ? try byLanguage(audio, criteria.audio, what: "audio")
            : try FormatChoice.pick(formats.audio, of: audio, kind: .audio)
        guard !chosen.isEmpty else {
            throw OfflineError(.noMatchingVariant, "the formats chosen hold no video or audio of \(url.absoluteString)")
        }
        chosen +=
            formats.subtitles.isEmpty
            ? try byLanguage(text, criteria.subtitles, what: "subtitles")
            : try FormatChoice.pick(formats.subtitles, of: text, kind: .subtitles)
        return chosen
    }

    /// `chosen`, once none is protected by DRM.
    ///
    /// - Throws: ``OfflineError`` `drm` naming the protection system.
    private static func protectionChecked(
        _ chosen: [DASHRepresentation],
        url: URL
    ) throws(OfflineError) -> [DASHRepresentation] {
        for representation in chosen {
            let systems = representation.protection.filter { !["cenc", "ClearKey"].contains($0) }
            guard systems.isEmpty else {
                throw OfflineError(
                    .drm,
                    "DRM-protected content cannot be downloaded (\(systems.joined(separator: ", "))) in \(url.absoluteString)"
                )
            }
        }
        return chosen
    }

    /// The best (highest bandwidth) representation of each language of `representations` that
    /// `languages` ask for: the `main` one's (else the first listed) for `default`.
    ///
    /// - Throws: ``OfflineError`` `noMatchingRendition` for a language asked for that none has.
    private static func byLanguage(
        _ representations: [DASHRepresentation],
        _ languages: MediaSelectionCriteria.Languages,
        what: String
    ) throws(OfflineError) -> [DASHRepresentation] {
        var best: [String: DASHRepresentation] = [:]
        var listed: [String] = []
        for representation in representations {
            let language = representation.language ?? "und"
            if best[language] == nil { listed.append(language) }
            if (best[language]?.bandwidth ?? -1) < representation.bandwidth { best[language] = representation }
        }
        switch languages {
        case .none: return []
        case .default:
            let main = representations.first { $0.roles.contains("main") }?.language ?? listed.first
            return main.flatMap { best[$0] }.map { [$0] } ?? []
        case .all: return listed.compactMap { best[$0] }
        case .only(let wanted):
            var chosen: [DASHRepresentation] = []
            for language in wanted {
                guard let match = listed.first(where: { LanguageTags.sameLanguage($0, language) }) else {
                    throw OfflineError(
                        .noMatchingRendition,
                        "no \(what) in \(language); there is "
                            + (listed.isEmpty ? "none" : listed.joined(separator: ", "))
                    )
                }
                if let representation = best[match], !chosen.contains(representation) { chosen.append(representation) }
            }
            return chosen
        }
    }

    /// The file name of a representation that is one whole file (no segment addressing): `media`
    /// with the extension of its URL's path when that is a short word (`subtitles.vtt`), never
    /// anything else of the URL.
    static func wholeFileName(_ representation: DASHRepresentation) -> String {
        let ext = representation.baseURL.pathExtension.lowercased()
        let safe = (1...8).contains(ext.count) && ext.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
        return "media" + (safe ? "." + ext : "")
    }

    /// The manifest of the package of `chosen`: each representation's initialization and media
    /// segments as files of its folder (`video/init.mp4`, `video/00001.m4s`, …; `p2-video/…` in
    /// the second of several periods) and the MPD.
    ///
    /// With `sections`, only the media segments that play in them are planned (with their
    /// initialization segments), each file named for its start in milliseconds from the first
    /// one kept (`video/0.m4s`, `video/4000.m4s`), which the MPD's timeline places there; a
    /// representation that is one whole file is kept whole.
    ///
    /// - Throws: ``OfflineError`` `manifest` for a segment URL that is not http(s); `section`
    ///   for a section that starts past the presentation's end.
    static func plan(
        _ planned: [(DASHRepresentation, SegmentIndex)],
        id: String,
        url: URL,
        sections: TimeSections = TimeSections()
    ) throws(OfflineError) -> AssetManifest {
        let chosen = planned.map(\.0)
        let severalPeriods = Set(chosen.map(\.period)).count > 1
        var renditions: [PackageRendition] = []
        var items: [PackageItem] = []
        var representations: [LocalMPD.Entry] = []
        var folders = PackageFolderNames()
        var heads: [TimelineHead] = []
        if !sections.isWhole {
            guard !severalPeriods else {
                throw OfflineError(
                    .section,
                    "\(url.absoluteString.prefix(200)) has several periods, and sections are cut from one timeline: download it whole"
                )
            }
            let end = planned.map { $0.1.media.reduce(0) { $0 + $1.duration } }.max() ?? 0
            try sections.checkWithin(end, of: url.absoluteString)
        }
        // Where the kept segments begin: the sectioned package's timeline starts there.
        let firstKept: [Double] = planned.compactMap { _, segments in
            var time = 0.0
            for segment in segments.media {
                if sections.keep(time, duration: segment.duration) { return time }
                time += segment.duration
            }
            return nil
        }
        let origin = sections.isWhole ? 0 : firstKept.min() ?? 0
        for (representation, segments) in planned {
            // Its items' rendition: representations with nothing in the sections are left out.
            let index = renditions.count
            let kind = PackageRendition.Kind(representation)
            let folder = folders.claim(
                (severalPeriods ? "p\(representation.period + 1)-" : "") + kind.rawValue,
                language: kind == .video ? nil : representation.language ?? "und"
            )
            for reference in [segments.initialization].compactMap({ $0 }) + segments.media {
                guard let scheme = reference.url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
                    throw OfflineError(
                        .manifest,
                        "\(url.absoluteString) names \(reference.url.absoluteString.prefix(200)), which is not an http(s) URL: the asset is refused"
                    )
                }
            }
            // Items are placed on the presentation's timeline, so that they come period by period.
            let periodStart = severalPeriods ? representation.periodStart : 0
            var time = 0.0
            var durations: [Double] = []
            var times: [Int64] = []
            var initialized = false
            func initialize() {
                guard !initialized, let initialization = segments.initialization else { return }
                initialized = true
                items.append(item(.initialization, folder + "/init.mp4", initialization, index, periodStart + time))
            }
            let wholeFile = representation.addressing == nil ? wholeFileName(representation) : nil
            // A whole stream's representation has its init section whatever its segments.
            if sections.isWhole { initialize() }
            for (position, segment) in segments.media.enumerated() {
                defer { time += segment.duration }
                let start = time
                guard wholeFile != nil || sections.keep(start, duration: segment.duration) else {
                    if position == 0 {
                        // Where the timeline begins, which the sections count from (``TimelineHead``).
                        initialize()
                        items.append(item(.segment, folder + "/head.m4s", segment, index, 0))
                        heads.append(
                            TimelineHead(
                                initialization: initialized ? folder + "/init.mp4" : nil,
                                segment: folder + "/head.m4s"
                            )
                        )
                    }
                    continue
                }
                let path: String
                if let wholeFile {
                    path = folder + "/" + wholeFile
                } else if sections.isWhole {
                    path = folder + String(format: "/%05d.m4s", position + 1)
                } else {
                    let milliseconds = Int64(((start - origin) * 1000).rounded())
                    times.append(milliseconds)
                    path = folder + "/\(milliseconds).m4s"
                }
                initialize()
                if position == 0, !sections.isWhole {
                    heads.append(TimelineHead(initialization: initialized ? folder + "/init.mp4" : nil, segment: path))
                }
                durations.append(segment.duration)
                items.append(item(.segment, path, segment, index, periodStart + time))
            }
            if durations.isEmpty, !sections.isWhole {
                // Nothing of it plays in the sections: it is left out, its first segment too.
                items.removeAll { $0.rendition == index }
                heads.removeAll { $0.segment.hasPrefix(folder + "/") }
                continue
            }
            renditions.append(
                PackageRendition(
                    kind: kind,
                    folder: folder,
                    language: kind == .video ? nil : representation.language,
                    url: url.absoluteString + "#" + representation.id
                        + (representation.period == 0 ? "" : "@p\(representation.period + 1)"),
                    duration: durations.reduce(0, +)
                )
            )
            var entry = LocalMPD.Entry(
                representation: representation,
                folder: folder,
                durations: durations,
                hasInitialization: segments.initialization != nil,
                wholeFile: wholeFile
            )
            // One timeline from the first segment kept.
            if !sections.isWhole, wholeFile == nil { entry.times = times }
            representations.append(entry)
        }
        items.sort { ($0.start, $0.kind.rank, $0.rendition) < ($1.start, $1.kind.rank, $1.rendition) }
        let video = chosen.first { $0.contentType == "video" }
        var manifest = AssetManifest(
            id: id,
            url: url.absoluteString,
            created: Date(),
            state: .downloading,
            entryPoint: entryPoint,
            variant: video.map { video in
                var resolution: String?
                if let width = video.width, let height = video.height { resolution = "\(width)x\(height)" }
                return OfflineAsset.VariantInfo(
                    bandwidth: video.bandwidth,
                    resolution: resolution,
                    codecs: video.codecs
                )
            },
            audio: languages(of: chosen, "audio"),
            subtitles: languages(of: chosen, "text"),
            renditions: renditions,
            items: items,
            estimatedBytes: estimatedBytes(zip(chosen, renditions.map(\.duration)))
        )
        manifest.playlists = [entryPoint: LocalMPD.text(representations)]
        manifest.sourcePlaylists = [url.absoluteString]
        manifest.selectionIDs = chosen.map(selectionID)
        manifest.sections = sections.isWhole ? nil : sections
        manifest.timelineHeads = sections.isWhole ? nil : heads
        return manifest
    }

    /// The languages of the representations of `contentType` among `chosen`, each once.
    private static func languages(of chosen: [DASHRepresentation], _ contentType: String) -> [String] {
        var languages: [String] = []
        for representation in chosen where representation.contentType == contentType {
            let language = representation.language ?? "und"
            if !languages.contains(language) { languages.append(language) }
        }
        return languages
    }

    /// `bandwidth` × duration of each representation: a peak, where an MPD gives no sizes.
    private static func estimatedBytes(_ planned: some Sequence<(DASHRepresentation, Double)>) -> Int64 {
        planned.reduce(Int64(0)) { total, each in total + Int64(Double(each.0.bandwidth) / 8 * each.1) }
    }

    private static func item(
        _ kind: PackageItem.Kind,
        _ path: String,
        _ reference: SegmentReference,
        _ rendition: Int,
        _ start: Double
    ) -> PackageItem {
        PackageItem(
            kind: kind,
            rendition: rendition,
            path: path,
            url: reference.url.absoluteString,
            offset: reference.range?.lowerBound,
            length: reference.range.map { $0.upperBound - $0.lowerBound + 1 },
            start: start,
            duration: reference.duration,
            decryption: nil
        )
    }
}

/// The MPD of a DASH package: the periods of the MPD it was made from, at their starts, each
/// chosen representation in an adaptation set of its own with the attributes a player chooses by
/// (bandwidth, codecs, size, language), its segments the package's files (`$Number%05d$.m4s` from
/// 1, with a `SegmentTimeline` of their durations in milliseconds, and `init.mp4`).
enum LocalMPD {
    struct Entry {
        let representation: DASHRepresentation
        let folder: String
        let durations: [Double]
        let hasInitialization: Bool
        /// The name of its one file, for a representation that is one whole file (no segments).
        let wholeFile: String?
        /// Each segment's start in milliseconds, its file's name (`$Time$.m4s`), for a recording,
        /// whose segments may have holes between them; `nil`: numbered from 1, one after another.
        var times: [Int64]? = nil

        /// Seconds from the period's start to where its last segment ends.
        var end: Double {
            guard let times, let last = times.last, let duration = durations.last else {
                return durations.reduce(0, +)
            }
            return Double(last) / 1000 + duration
        }
    }

    static func text(_ entries: [Entry]) -> String {
        var periods: [XMLNode] = []
        var total = 0.0
        let indexes = Set(entries.map(\.representation.period)).sorted()
        for index in indexes {
            let inPeriod = entries.filter { $0.representation.period == index }
            let first = inPeriod[0].representation
            let played = inPeriod.map(\.end).max() ?? 0
            var period = self.period(inPeriod)
            period.attributes["id"] = first.periodID ?? String(index)
            if indexes.count == 1 {
                // One period plays from 0 for as long as its segments last.
                period.attributes["start"] = seconds(0)
                total = played
            } else {
                let duration = first.periodDuration ?? played
                period.attributes["start"] = seconds(first.periodStart)
                period.attributes["duration"] = seconds(duration)
                total = max(total, first.periodStart + duration)
            }
            periods.append(period)
        }
        let root = XMLNode(
            name: "MPD",
            attributes: [
                "xmlns": "urn:mpeg:dash:schema:mpd:2011", "type": "static",
                "profiles": "urn:mpeg:dash:profile:isoff-live:2011", "minBufferTime": "PT2S",
                "mediaPresentationDuration": seconds(total),
            ],
            children: periods.map { .element($0) }
        )
        return root.xml()
    }

    private static func seconds(_ value: Double) -> String { String(format: "PT%.3fS", value) }

    /// The `Period` element of `entries`, one period's.
    private static func period(_ entries: [Entry]) -> XMLNode {
        var period = XMLNode(name: "Period")
        for entry in entries {
            let (representation, folder, durations) = (entry.representation, entry.folder, entry.durations)
            var set = XMLNode(name: "AdaptationSet", attributes: ["contentType": representation.contentType])
            if let language = representation.language { set.attributes["lang"] = language }
            var element = XMLNode(name: "Representation", attributes: ["id": representation.id])
            element.attributes["bandwidth"] = String(representation.bandwidth)
            element.attributes["mimeType"] = representation.mimeType
            element.attributes["codecs"] = representation.codecs
            element.attributes["width"] = representation.width.map(String.init)
            element.attributes["height"] = representation.height.map(String.init)
            element.attributes["frameRate"] = representation.frameRate
            if let wholeFile = entry.wholeFile {
                element.children.append(.element(XMLNode(name: "BaseURL", children: [.text(folder + "/" + wholeFile)])))
                set.children.append(.element(element))
                period.children.append(.element(set))
                continue
            }
            element.children.append(.element(XMLNode(name: "BaseURL", children: [.text(folder + "/")])))
            var timeline = XMLNode(name: "SegmentTimeline")
            // Runs of segments of one length that follow each other, each from its start.
            var runs: [(start: Int64, duration: Int64, count: Int)] = []
            var end = 0.0
            for (position, duration) in durations.enumerated() {
                let start = entry.times?[position] ?? Int64((end * 1000).rounded())
                end += duration
                let length =
                    entry.times != nil ? Int64((duration * 1000).rounded()) : Int64((end * 1000).rounded()) - start
                if let last = runs.last, last.duration == length, last.start + Int64(last.count) * length == start {
                    runs[runs.count - 1].count += 1
                } else {
                    runs.append((start, length, 1))
                }
            }
            var next: Int64 = 0
            for (index, run) in runs.enumerated() {
                var entry = XMLNode(name: "S", attributes: ["d": String(run.duration)])
                // A start is written where a run does not follow the one before: a hole.
                if index == 0 || run.start != next { entry.attributes["t"] = String(run.start) }
                if run.count > 1 { entry.attributes["r"] = String(run.count - 1) }
                timeline.children.append(.element(entry))
                next = run.start + Int64(run.count) * run.duration
            }
            var template = XMLNode(
                name: "SegmentTemplate",
                attributes: entry.times == nil
                    ? ["timescale": "1000", "media": "$Number%05d$.m4s", "startNumber": "1"]
                    : ["timescale": "1000", "media": "$Time$.m4s"]
            )
            if durations.count > 0 { template.children.append(.element(timeline)) }
            if entry.hasInitialization { template.attributes["initialization"] = "init.mp4" }
            element.children.append(.element(template))
            set.children.append(.element(element))
            period.children.append(.element(set))
        }
        return period
    }
}

extension PackageRendition.Kind {
    /// The kind of track a package keeps `representation` as.
    init(_ representation: DASHRepresentation) {
        switch representation.contentType {
        case "video": self = .video
        case "text": self = .subtitles
        default: self = .audio
        }
    }
}
