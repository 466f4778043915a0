import Foundation

/// What the library records of one asset, in `asset.json` in its package folder: where it comes
/// from, what was chosen, and the plan of its files. Which files are done is not recorded here:
/// a file is done when it exists under its final name (it is renamed there only once durable).
struct AssetManifest: Codable, Sendable {
    enum State: String, Codable, Sendable {
        case downloading, complete, failed
    }

    var formatVersion = 1
    var id: String
    var url: String
    var created: Date
    var state: State
    /// Why the last download failed.
    var failure: String?
    /// The package's entry point, relative to its folder: `master.m3u8` (HLS) or
    /// `manifest.mpd` (DASH).
    var entryPoint: String
    var variant: OfflineAsset.VariantInfo?
    var audio: [String]
    var subtitles: [String]
    var renditions: [PackageRendition]
    var items: [PackageItem]
    var estimatedBytes: Int64?
    /// The package's playlists by path, as written when the download began.
    var playlists: [String: String] = [:]
    /// The URLs of the origin's playlists the package was planned from (absent in manifests
    /// written before the streaming cache kept them).
    var sourcePlaylists: [String]?
    /// What besides its URL's key names the chosen renditions in the asset's id, where no URL
    /// does (a DASH MPD's representation ids); `nil`: the chosen playlists' URLs do
    /// (``OfflineLibrary/manifest(identifiedAs:keyOf:)``).
    var selectionIDs: [String]?
    /// The title the app gave the package.
    var title: String?
    /// The one file the download writes when it ends (``OfflineDownloadOptions/outputFile``).
    var outputFile: String?
    /// A live recording's state; `nil` for a package planned whole.
    var recording: RecordingState?

    /// The fields' names in `asset.json`; the entry point keeps the name packages have always
    /// had there, so every package made before reads as it did.
    private enum CodingKeys: String, CodingKey {
        case formatVersion, id, url, created, state, failure
        case entryPoint = "mainPlaylist"
        case variant, audio, subtitles, renditions, items, estimatedBytes, playlists, sourcePlaylists
        case selectionIDs, title, outputFile, recording
    }

    /// The file of the package's artwork, when the app gave one.
    static let artworkFileName = "artwork"

    /// Every origin URL the asset is made of: its playlists and its files. The streaming cache
    /// keeps them pinned while the asset exists.
    var originURLs: Set<String> { Set((sourcePlaylists ?? [url]) + items.map(\.url)) }

    static let fileName = "asset.json"

    /// The asset's duration: its longest rendition's, or where its last file ends on the
    /// presentation's timeline (an MPD of several periods).
    var duration: Double {
        max(renditions.map(\.duration).max() ?? 0, items.map { $0.start + $0.duration }.max() ?? 0)
    }

    /// Reads the manifest of the package at `folder`.
    static func load(from folder: String) throws -> AssetManifest {
        let data = try Data(contentsOf: URL(fileURLWithPath: folder + "/" + fileName))
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(AssetManifest.self, from: data)
    }

    /// Writes the manifest into `folder`, replacing the old one atomically and durably.
    func save(in folder: String) throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try PackageFile.writeAtomically(try encoder.encode(self), to: folder + "/" + Self.fileName)
    }
}

/// The asset id: the same URL and resolved selection always give the same id, so running the
/// same download again resumes it.
enum AssetID {
    /// The id of the asset whose top playlist has cache key `key` and whose chosen playlists
    /// have keys `playlists`: keys, not URLs, so a re-signed URL of an asset names the same one.
    static func make(key: String, playlists: [String]) -> String {
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
    static let shortestPrefix = 4

    /// Whether `text` could be an id (and so is safe as a folder name).
    static func isValid(_ text: String) -> Bool {
        text.count == 16 && text.allSatisfy { $0.isHexDigit && !$0.isUppercase }
    }
}

/// What a live recording keeps in its manifest beside its playlists (which list what each
/// rendition recorded, each segment file named after its origin media sequence number).
struct RecordingState: Codable, Sendable {
    struct Track: Codable, Sendable {
        /// Segments the origin listed that the package lacks: they left the window before they
        /// could be fetched, or failed every attempt.
        var lostSegments = 0
        /// Their seconds (a segment never listed counts as one target duration).
        var lostSeconds = 0.0
    }

    var tracks: [Track]
    /// Where a DASH recording's first segment starts, in seconds of its period: the package's
    /// timeline counts from there.
    var origin: Double?
    /// Why the recording ended: `endlist`, `duration`, `until`, `stopped`, or a failure's
    /// message; `nil` while it runs or can go on.
    var ended: String?
}
