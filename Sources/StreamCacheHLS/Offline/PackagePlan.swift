import Foundation
import StreamCache

/// What an offline package holds, worked out from the playlists before any segment is fetched:
/// its renditions, every file to fetch (in the order to fetch them) and its rewritten playlists.
struct PackagePlan: Sendable {
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
    /// The playlist a player opens, relative to the package folder: always `master.m3u8`, the
    /// one entry point of every package.
    var mainPlaylist = "master.m3u8"
    /// The expected size in bytes (see ``SizeEstimate``); `nil` when nothing says.
    private(set) var estimatedBytes: Int64?
    /// The variant's bit rate, for a video rendition whose segment sizes are not known.
    private var variantBitsPerSecond: Int64?
    /// Whether `master.m3u8` was made here (from a media playlist), with a `BANDWIDTH` that
    /// follows the estimate.
    private var madeEntryPoint = false

    /// Plans the package of `media` chosen by `selection` from `multivariant`.
    ///
    /// AES-128 files are decrypted into the package, which then plays in any player without
    /// its keys; with `keepingEncryption` they are kept as served, with their keys as files.
    ///
    /// - Throws: ``OfflineError`` `live` for a playlist without `EXT-X-ENDLIST`, `drm` for
    ///   SAMPLE-AES or a key format other than `identity`.
    init(
        multivariant: MultivariantPlaylist?,
        selection: MediaSelection?,
        media: [Media],
        keepingEncryption: Bool = false
    ) throws(OfflineError) {
        if let keys = multivariant?.sessionKeys { try Self.checkKeys(keys, url: nil) }
        var folders: Set<String> = []
        var folderOf: [Rendition: String] = [:]
        for (index, entry) in media.enumerated() {
            guard entry.playlist.endList else {
                throw OfflineError(
                    .live,
                    "live streams cannot be downloaded: \(entry.url.absoluteString) has no EXT-X-ENDLIST"
                )
            }
            try Self.checkKeys(entry.playlist.segments.flatMap(\.keys), url: entry.url)
            let folder = Self.folderName(entry, taken: &folders)
            if let rendition = entry.rendition { folderOf[rendition] = folder }
            let (rewritten, items) = try Self.plan(
                entry,
                index: index,
                folder: folder,
                decrypting: !keepingEncryption
            )
            renditions.append(
                PackageRendition(
                    kind: entry.kind,
                    folder: folder,
                    language: entry.rendition?.languageOrName,
                    url: entry.url.absoluteString,
                    duration: entry.playlist.totalDuration
                )
            )
            self.items += items
            playlists[folder + "/index.m3u8"] = Playlist.media(rewritten).text
        }
        variantBitsPerSecond = selection.map { $0.variant.averageBandwidth ?? $0.variant.bandwidth }
        items.sort { ($0.start, $0.kind.rank, $0.rendition) < ($1.start, $1.kind.rank, $1.rendition) }
        if let multivariant, let selection {
            playlists[mainPlaylist] = Self.rewrite(
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
        if madeEntryPoint { playlists[mainPlaylist] = Self.entryPoint(to: renditions[0], bytes: estimatedBytes) }
    }

    /// `#EXT-X-STREAM-INF` to the one rendition of a package made from a media playlist. Its
    /// `BANDWIDTH` (required, and with one variant only a hint) is the bytes over the duration
    /// where known.
    static func entryPoint(to rendition: PackageRendition, bytes: Int64?) -> String {
        var bandwidth: Int64 = 1_000_000
        if let bytes, rendition.duration > 0 { bandwidth = max(1, Int64(Double(bytes) * 8 / rendition.duration)) }
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

    private static func folderName(_ media: Media, taken: inout Set<String>) -> String {
        var base = media.kind.rawValue
        if media.kind != .video, let language = media.rendition?.languageOrName {
            let safe = language.lowercased().filter { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
            if !safe.isEmpty { base += "-" + safe }
        }
        var name = base
        var counter = 2
        while taken.contains(name) {
            name = "\(base)-\(counter)"
            counter += 1
        }
        taken.insert(name)
        return name
    }

    /// The items of one media playlist and the playlist rewritten to them; `decrypting`, the
    /// AES-128 files carry their key and IV and the playlist names no key.
    ///
    /// - Throws: ``OfflineError`` `playlist` for a segment, key or map URI that is not http(s):
    ///   kept verbatim, a `file:` URI would point the player at a file of this machine; dropped,
    ///   the package would lack it; or for an `IV` that is not 128 bits of hexadecimal.
    private static func plan(
        _ media: Media,
        index: Int,
        folder: String,
        decrypting: Bool
    ) throws(OfflineError) -> (MediaPlaylist, [PackageItem]) {
        var playlist = media.playlist
        var items: [PackageItem] = []
        var keyPaths: [String: String] = [:]
        var mapPaths: [String: String] = [:]
        var time = 0.0
        func item(
            _ kind: PackageItem.Kind,
            _ name: String,
            _ url: URL,
            _ range: SegmentByteRange?,
            _ duration: Double,
            _ decryption: Decryption?
        )
            -> PackageItem
        {
            PackageItem(
                kind: kind,
                rendition: index,
                path: folder + "/" + name,
                url: url.absoluteString,
                offset: range?.offset,
                length: range?.length,
                start: time,
                duration: duration,
                decryption: decryption
            )
        }
        for position in playlist.segments.indices {
            var segment = playlist.segments[position]
            var decryption: Decryption?
            if decrypting, let key = segment.key, let uri = key.uri {
                let sequence = playlist.mediaSequence + Int64(position)
                guard let iv = Decryption.iv(of: key, sequence: sequence) else {
                    throw OfflineError(.playlist, "\(media.url.absoluteString): invalid IV \(key.iv ?? "")")
                }
                decryption = Decryption(key: try resolve(uri, media.url).absoluteString, iv: iv)
                segment.keys = []
            }
            for keyIndex in segment.keys.indices {
                guard let uri = segment.keys[keyIndex].uri else { continue }
                let url = try resolve(uri, media.url)
                let name: String
                if let known = keyPaths[url.absoluteString] {
                    name = known
                } else {
                    name = "key\(keyPaths.count).key"
                    keyPaths[url.absoluteString] = name
                    items.append(item(.key, name, url, nil, 0, nil))
                }
                segment.keys[keyIndex].attributes.setQuoted("URI", to: name)
            }
            if var map = segment.map {
                let url = try resolve(map.uri, media.url)
                let identity = url.absoluteString + "#" + (map.byteRange?.description ?? "")
                let name: String
                if let known = mapPaths[identity] {
                    name = known
                } else {
                    name = "init\(mapPaths.count).\(fileExtension(url, default: "mp4"))"
                    mapPaths[identity] = name
                    items.append(item(.initialization, name, url, map.byteRange, 0, decryption))
                }
                map.attributes.setQuoted("URI", to: name)
                map.attributes.remove("BYTERANGE")
                segment.map = map
            }
            let name = String(format: "%05d.", position) + fileExtension(URL(string: segment.uri), default: "ts")
            if !segment.gap {
                let url = try resolve(segment.uri, media.url)
                items.append(item(.segment, name, url, segment.byteRange, segment.duration, decryption))
            }
            segment.uri = name
            segment.byteRange = nil
            playlist.segments[position] = segment
            time += segment.duration
        }
        if playlist.playlistType == nil { playlist.playlistType = "VOD" }
        return (playlist, items)
    }

    /// `uri` resolved against `base`: an http(s) URL, or the asset is refused.
    private static func resolve(_ uri: String, _ base: URL) throws(OfflineError) -> URL {
        guard let url = URL(string: uri, relativeTo: base)?.absoluteURL,
            let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", url.host != nil
        else {
            throw OfflineError(
                .playlist,
                "\(Credentials.redacted(base.absoluteString)) names \(Credentials.redacted(String(uri.prefix(200)))),"
                    + " which is not an http(s) URL: the asset is refused"
            )
        }
        return url
    }

    /// The extension of `url`'s last path component if it is a plausible one.
    private static func fileExtension(_ url: URL?, default fallback: String) -> String {
        let candidate = url?.pathExtension.lowercased() ?? ""
        guard (1...5).contains(candidate.count), candidate.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) })
        else { return fallback }
        return candidate
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

extension PackageItem.Kind {
    /// Keys, then init sections, then segments, at one presentation time.
    var rank: Int {
        switch self {
        case .key: 0
        case .initialization: 1
        case .segment: 2
        }
    }
}
