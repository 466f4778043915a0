import Foundation

/// What the library records of one asset, in `asset.json` in its package folder: where it comes
/// from, what was chosen, and the plan of its files. Which files are done is not recorded here:
/// a file is done when it exists under its final name (it is renamed there only once durable).
package struct AssetManifest: Codable, Sendable {
    package enum State: String, Codable, Sendable {
        case downloading, complete, failed
    }

    package var formatVersion = 1
    package var id: String
    package var url: String
    package var created: Date
    package var state: State
    /// Why the last download failed.
    package var failure: String?
    /// The package's entry point, relative to its folder: its format's (``OfflineFormat``),
    /// `master.m3u8` or `manifest.mpd`.
    package var entryPoint: String
    package var variant: OfflineAsset.VariantInfo?
    package var audio: [String]
    package var subtitles: [String]
    package var renditions: [PackageRendition]
    package var items: [PackageItem]
    package var estimatedBytes: Int64?
    /// The package's playlists by path, as written when the download began.
    package var playlists: [String: String] = [:]
    /// The URLs of the origin's playlists the package was planned from (absent in manifests
    /// written before the streaming cache kept them).
    package var sourcePlaylists: [String]?
    /// What besides its URL's key names the chosen renditions in the asset's id, where no URL
    /// does (an MPD's representation ids); `nil`: the chosen playlists' URLs do
    /// (``OfflineLibrary/manifest(identifiedAs:keyOf:)``).
    package var selectionIDs: [String]?
    /// The title the app gave the package.
    package var title: String?
    /// The one file the download writes when it ends (``OfflineDownloadOptions/outputFile``).
    package var outputFile: String?
    /// A live recording's state; `nil` for a package planned whole.
    package var recording: RecordingState?

    /// The parts of the timeline the package holds; `nil`: all of it.
    package var sections: TimeSections?
    /// Each rendition's first segment, in a package of sections (``TimelineHead``).
    package var timelineHeads: [TimelineHead]?

    /// The fields' names in `asset.json`; the entry point keeps the name packages have always
    /// had there, so every package made before reads as it did.
    private enum CodingKeys: String, CodingKey {
        case formatVersion, id, url, created, state, failure
        case entryPoint = "mainPlaylist"
        case variant, audio, subtitles, renditions, items, estimatedBytes, playlists, sourcePlaylists
        case selectionIDs, title, outputFile, recording, sections, timelineHeads
    }

    /// The file of the package's artwork, when the app gave one.
    package static let artworkFileName = "artwork"

    /// Every origin URL the asset is made of: its playlists and its files. The streaming cache
    /// keeps them pinned while the asset exists.
    package var originURLs: Set<String> { Set((sourcePlaylists ?? [url]) + items.map(\.url)) }

    package static let fileName = "asset.json"

    /// The asset's duration: its longest rendition's, or where its last file ends on the
    /// presentation's timeline (an MPD of several periods); a package of sections lasts as long
    /// as the segments it keeps.
    package var duration: Double {
        if sections != nil { return renditions.map(\.duration).max() ?? 0 }
        return max(renditions.map(\.duration).max() ?? 0, items.map { $0.start + $0.duration }.max() ?? 0)
    }

    /// Reads the manifest of the package at `folder`.
    package static func load(from folder: String) throws -> AssetManifest {
        let data = try Data(contentsOf: URL(fileURLWithPath: folder + "/" + fileName))
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(AssetManifest.self, from: data)
    }

    /// Writes the manifest into `folder`, replacing the old one atomically and durably.
    package func save(in folder: String) throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try PackageFile.writeAtomically(try encoder.encode(self), to: folder + "/" + Self.fileName)
    }

    package init(
        id: String,
        url: String,
        created: Date,
        state: State,
        failure: String? = nil,
        entryPoint: String,
        variant: OfflineAsset.VariantInfo? = nil,
        audio: [String],
        subtitles: [String],
        renditions: [PackageRendition],
        items: [PackageItem],
        estimatedBytes: Int64? = nil,
        playlists: [String: String] = [:],
        sourcePlaylists: [String]? = nil,
        selectionIDs: [String]? = nil,
        title: String? = nil,
        outputFile: String? = nil,
        recording: RecordingState? = nil
    ) {
        self.id = id
        self.url = url
        self.created = created
        self.state = state
        self.failure = failure
        self.entryPoint = entryPoint
        self.variant = variant
        self.audio = audio
        self.subtitles = subtitles
        self.renditions = renditions
        self.items = items
        self.estimatedBytes = estimatedBytes
        self.playlists = playlists
        self.sourcePlaylists = sourcePlaylists
        self.selectionIDs = selectionIDs
        self.title = title
        self.outputFile = outputFile
        self.recording = recording
    }
}

/// The asset id: the same URL and resolved selection always give the same id, so running the
/// same download again resumes it.
package enum AssetID {
    /// The id of the asset whose top playlist has cache key `key` and whose chosen playlists
    /// have keys `playlists`: keys, not URLs, so a re-signed URL of an asset names the same one.
    package static func make(key: String, playlists: [String]) -> String {
        // FNV-1a, 64 bits: stable across processes and platforms (Swift's Hasher is seeded).
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in ([key] + playlists).joined(separator: "\n").utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// The fewest characters of an id that name an asset where an id does.
    package static let shortestPrefix = 4

    /// Whether `text` could be an id (and so is safe as a folder name).
    package static func isValid(_ text: String) -> Bool {
        text.count == 16 && text.allSatisfy { $0.isHexDigit && !$0.isUppercase }
    }
}

/// What a live recording keeps in its manifest beside its playlists (which list what each
/// rendition recorded, each segment file named after its origin media sequence number).
package struct RecordingState: Codable, Sendable {
    package struct Track: Codable, Sendable {
        /// Segments the origin listed that the package lacks: they left the window before they
        /// could be fetched, or failed every attempt.
        package var lostSegments = 0
        /// Their seconds (a segment never listed counts as one target duration).
        package var lostSeconds = 0.0

        package init() {}
    }

    package var tracks: [Track]
    /// Where a recording named by times began, in seconds of its period: the package's
    /// timeline counts from there.
    package var origin: Double?
    /// Why the recording ended: `endlist`, `duration`, `until`, `stopped`, or a failure's
    /// message; `nil` while it runs or can go on.
    package var ended: String?

    package init(
        tracks: [Track],
        origin: Double? = nil,
        ended: String? = nil
    ) {
        self.tracks = tracks
        self.origin = origin
        self.ended = ended
    }
}
