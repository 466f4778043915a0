import Foundation
import StreamCache
import StreamCacheOfflineCore

/// What an HLS package holds, worked out from the playlists before any segment is fetched:
/// its renditions, every file to fetch (in the order to fetch them) and its rewritten playlists.
struct HLSPackagePlan: Sendable {
    /// A media playlist to download, with what it is.
    struct Media: Sendable {
        var kind: PackageRendition.Kind
        var rendition: Rendition?
        var url: URL
        var playlist: MediaPlaylist
    }

    var renditions: [PackageRendition] = []
    /// In presentation-time order across renditions; keys and init sections before the first
    /// segment that needs them.
    var items: [PackageItem] = []
    /// Playlist text by path relative to the package folder.
    var playlists: [String: String] = [:]
    /// Each rendition's first segment, for a package of sections.
    var timelineHeads: [TimelineHead] = []
    /// The playlist a player opens, relative to the package folder: always `master.m3u8`, the
    /// one entry point of every HLS package.
    var entryPoint = Self.entryPoint
    /// Every HLS package's entry point.
    static let entryPoint = "master.m3u8"
    /// The expected size in bytes (see ``SizeEstimate``); `nil` when nothing says.
    private(set) var estimatedBytes: Int64?
    /// The variant's bit rate, for a video rendition whose segment sizes are not known.
    private var variantBitsPerSecond: Int64?
    /// Whether the package is a live recording's: its files and playlists come as it records.
    private(set) var isRecording = false
    /// Whether `master.m3u8` was made here (from a media playlist), with a `BANDWIDTH` that
    /// follows the estimate.
    private var madeEntryPoint = false

    /// Plans the package of `media` chosen by `selection` from `multivariant`.
    ///
    /// AES-128 files are decrypted into the package, which then plays in any player without
    /// its keys; with `keepingEncryption` they are kept as served, with their keys as files.
    ///
    /// With `recording`, the playlists may be live: the package gets its renditions, folders and
    /// empty `EVENT` playlists, and no files (a ``HLSLiveRecorder`` adds them as it records).
    ///
    /// With `sections`, only the segments that play in them are planned, with the keys and init
    /// sections they need; each playlist lists those, with a discontinuity where the timeline
    /// skips.
    ///
    /// - Throws: ``OfflineError`` `live` for a playlist without `EXT-X-ENDLIST` unless
    ///   `recording`, `drm` for SAMPLE-AES or a key format other than `identity`, `section` for
    ///   sections of a live stream or past a playlist's end.
    init(
        multivariant: MultivariantPlaylist?,
        selection: MediaSelection?,
        media: [Media],
        keepingEncryption: Bool = false,
        recording: Bool = false,
        sections: TimeSections = TimeSections()
    ) throws(OfflineError) {
        if recording, !sections.isWhole {
            throw OfflineError(
                .section,
                "a live stream has no timeline to cut yet: record a part of it with --duration or --until instead of --section"
            )
        }
        if let keys = multivariant?.sessionKeys { try Self.checkKeys(keys, url: nil) }
        isRecording = recording
        var folders = PackageFolderNames()
        var folderOf: [Rendition: String] = [:]
        for (index, entry) in media.enumerated() {
            guard entry.playlist.endList || recording else {
                throw OfflineError(
                    .live,
                    "\(entry.url.absoluteString) has no EXT-X-ENDLIST: a live stream is recorded, not planned whole"
                )
            }
            try Self.checkKeys(entry.playlist.segments.flatMap(\.keys), url: entry.url)
            if !recording { try sections.checkWithin(entry.playlist.totalDuration, of: entry.url.absoluteString) }
            let folder = Self.folderName(entry, taken: &folders)
            if let rendition = entry.rendition { folderOf[rendition] = folder }
            renditions.append(
                PackageRendition(
                    kind: entry.kind,
                    folder: folder,
                    language: entry.rendition?.languageOrName,
                    url: entry.url.absoluteString,
                    duration: 0
                )
            )
            if recording {
                // Its files and playlist come as the recording goes (``HLSLiveRecorder``).
                playlists[folder + "/index.m3u8"] = RecordedPlaylist(origin: entry.playlist).text(ended: false)
                continue
            }
            let (rewritten, items, head) = try Self.plan(
                entry,
                index: index,
                folder: folder,
                decrypting: !keepingEncryption,
                sections: sections
            )
            renditions[renditions.count - 1].duration = rewritten.totalDuration
            if let head { timelineHeads.append(head) }
            self.items += items
            playlists[folder + "/index.m3u8"] = Playlist.media(rewritten).text
        }
        variantBitsPerSecond = selection.map { $0.variant.averageBandwidth ?? $0.variant.bandwidth }
        items.sort { ($0.start, $0.kind.rank, $0.rendition) < ($1.start, $1.kind.rank, $1.rendition) }
        if let multivariant, let selection {
            playlists[entryPoint] = Self.rewrite(
                multivariant,
                selection: selection,
                variantPlaylist: renditions[0].playlistPath,
                folders: folderOf
            )
        } else {
            // Downloaded from a media playlist: a multivariant one of that rendition alone.
            madeEntryPoint = true
        }
        estimate(lengths: [:])
    }

    /// The files whose length makes the estimate better (see ``SizeEstimate/probes``).
    var sizeProbes: [String] {
        SizeEstimate(items: items, renditions: renditions.count).probes
    }

    /// Works out ``estimatedBytes`` again with the `lengths` of some of the files (by origin URL).
    mutating func estimate(lengths: [String: Int64]) {
        let kinds = renditions.map(\.kind)
        estimatedBytes = SizeEstimate(items: items, renditions: renditions.count).bytes(lengths: lengths) {
            kinds[$0] == .video ? variantBitsPerSecond : nil
        }
        if madeEntryPoint {
            playlists[entryPoint] = Self.multivariantPlaylist(to: renditions[0], bytes: estimatedBytes)
        }
    }

    /// `#EXT-X-STREAM-INF` to the one rendition of a package made from a media playlist. Its
    /// `BANDWIDTH` (required, and with one variant only a hint) is the bytes over the duration
    /// where known.
    static func multivariantPlaylist(to rendition: PackageRendition, bytes: Int64?) -> String {
        var bandwidth: Int64 = 1_000_000
        if let bytes, rendition.duration > 0 {
            bandwidth = Int64(min(max(1, Double(bytes) * 8 / rendition.duration), 1e15))
        }
        return "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=\(bandwidth)\n\(rendition.playlistPath)\n"
    }

    /// Refuses what needs a DRM system to play.
    private static func checkKeys(_ keys: [Key], url: URL?) throws(OfflineError) {
        for key in keys where key.method != "AES-128" || key.keyFormat != "identity" {
            throw OfflineError(
                .drm,
                "DRM-protected content cannot be downloaded (METHOD=\(key.method), KEYFORMAT=\(key.keyFormat))"
                    + (url.map { " in \($0.absoluteString)" } ?? "")
            )
        }
    }

    private static func folderName(_ media: Media, taken: inout PackageFolderNames) -> String {
        taken.claim(media.kind.rawValue, language: media.kind == .video ? nil : media.rendition?.languageOrName)
    }

    /// The items of one media playlist and the playlist rewritten to them.
    private static func plan(
        _ media: Media,
        index: Int,
        folder: String,
        decrypting: Bool,
        sections: TimeSections
    ) throws(OfflineError) -> (MediaPlaylist, [PackageItem], TimelineHead?) {
        var playlist = media.playlist
        var head: TimelineHead?
        let firstSequence = playlist.mediaSequence
        var kept: [Segment] = []
        var skipped = false
        var items: [PackageItem] = []
        var planner = SegmentPlanner(
            url: media.url,
            rendition: index,
            folder: folder,
            decrypting: decrypting,
            naming: .counted
        )
        planner.writesImpliedIVs = !sections.isWhole
        var time = 0.0
        for position in playlist.segments.indices {
            let original = playlist.segments[position]
            defer { time += original.duration }
            func markHead(_ first: Segment) {
                // The stream's first segment, where its timeline begins: the sections are cut
                // at their places on it (``TimelineHead``).
                guard position == 0, !sections.isWhole else { return }
                head = TimelineHead(
                    initialization: first.map.map { folder + "/" + $0.uri },
                    segment: folder + "/" + first.uri
                )
            }
            guard sections.keep(time, duration: original.duration) else {
                if position == 0, !sections.isWhole {
                    let (first, needed) = try planner.plan(original, sequence: firstSequence, position: 0, time: 0)
                    markHead(first)
                    items += needed
                }
                // The renditions' discontinuities stay numbered alike.
                if kept.isEmpty, original.discontinuity { playlist.discontinuitySequence += 1 }
                skipped = true
                continue
            }
            var (segment, needed) = try planner.plan(
                original,
                sequence: firstSequence + Int64(position),
                position: position,
                time: time
            )
            markHead(segment)
            // Where the package skips a part of the timeline, its timestamps jump.
            if skipped, !kept.isEmpty { segment.discontinuity = true }
            if kept.isEmpty { playlist.mediaSequence = firstSequence + Int64(position) }
            skipped = false
            items += needed
            kept.append(segment)
        }
        playlist.segments = kept
        if playlist.playlistType == nil { playlist.playlistType = "VOD" }
        return (playlist, items, head)
    }

    /// The multivariant playlist with only the chosen variant and renditions, pointing at the
    /// package's media playlists.
    private static func rewrite(
        _ playlist: MultivariantPlaylist,
        selection: MediaSelection,
        variantPlaylist: String,
        folders: [Rendition: String]
    ) -> String {
        var rewritten = playlist
        let groups = [
            ("AUDIO", selection.variant.audio), ("SUBTITLES", selection.variant.subtitles),
            ("VIDEO", selection.variant.video), ("CLOSED-CAPTIONS", selection.variant.closedCaptions),
        ]
        var kept: [Rendition] = []
        for rendition in playlist.renditions {
            guard groups.contains(where: { $0.0 == rendition.type && $0.1 == rendition.groupId }) else { continue }
            if let folder = folders[rendition] {
                var copy = rendition
                copy.attributes.setQuoted("URI", to: folder + "/index.m3u8")
                kept.append(copy)
            } else if rendition.uri == nil {
                kept.append(rendition)
            }
        }
        // The audio group keeps a default rendition (subtitles stay off unless marked so).
        if let group = selection.variant.audio {
            let members = kept.indices.filter { kept[$0].type == "AUDIO" && kept[$0].groupId == group }
            if let first = members.first, !members.contains(where: { kept[$0].isDefault }) {
                kept[first].attributes.setUnquoted("DEFAULT", to: "YES")
                kept[first].attributes.setUnquoted("AUTOSELECT", to: "YES")
            }
        }
        var variant = selection.variant
        variant.uri = variantPlaylist
        for (type, group) in groups {
            guard let group, !(type == "CLOSED-CAPTIONS" && group == "NONE") else { continue }
            if !kept.contains(where: { $0.type == type && $0.groupId == group }) { variant.attributes.remove(type) }
        }
        rewritten.renditions = kept
        rewritten.variants = [variant]
        rewritten.iframeVariants = []
        rewritten.sessionKeys = []
        return Playlist.multivariant(rewritten).text
    }
}
