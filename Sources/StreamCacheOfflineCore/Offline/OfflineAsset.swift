/// An asset of the offline library as a user sees it: what it is, how far it got, what it
/// takes on disk.
public struct OfflineAsset: Codable, Sendable, Hashable {
    /// Where an asset is in its life.
    public enum State: String, Codable, Sendable {
        /// A process is downloading it now.
        case downloading
        /// Its download stopped before the end (the process was stopped or killed); it can resume.
        case incomplete
        /// Every file is on disk: it plays offline.
        case complete
        /// Its last download failed; it can resume.
        case failed
    }

    /// The chosen variant.
    public struct VariantInfo: Codable, Sendable, Hashable {
        public var bandwidth: Int64
        public var resolution: String?
        public var codecs: String?

        package init(
            bandwidth: Int64,
            resolution: String? = nil,
            codecs: String? = nil
        ) {
            self.bandwidth = bandwidth
            self.resolution = resolution
            self.codecs = codecs
        }
    }

    public var id: String
    /// The URL it was downloaded from.
    public var url: String
    public var state: State
    /// The part of its duration on disk, 0 to 1.
    public var progress: Double
    /// Bytes its package takes on disk.
    public var bytes: Int64
    /// Seconds.
    public var duration: Double
    public var variant: VariantInfo?
    /// Languages of the audio renditions downloaded (empty: the variant's own audio).
    public var audio: [String]
    /// Languages of the subtitle renditions downloaded.
    public var subtitles: [String]
    /// The playlist to play: an absolute path in the package folder.
    public var path: String
    public var created: String
    /// Why its last download failed.
    public var failure: String?
    /// The title the app gave it, or its playlist gives (`EXT-X-SESSION-DATA` `com.apple.hls.title`).
    public var title: String?
    /// Its artwork, an absolute path in the package folder, when the app gave one.
    public var artworkPath: String?

    /// What a live recording made of it has; `nil` for an asset planned whole.
    public var recording: Recording?

    /// The parts of the stream's timeline it holds (`1:02:00-1:04:30`), as `download --section`
    /// took them; `nil` for the whole stream.
    public var sections: [String]? = nil

    /// A live recording's account of itself.
    public struct Recording: Codable, Sendable, Hashable {
        /// Segments the origin listed that the package lacks (over every rendition): they left
        /// the window before they could be fetched, or failed every attempt. Each loss is marked
        /// with `EXT-X-DISCONTINUITY` in the package, never joined as if continuous.
        public var lostSegments: Int
        /// Their seconds, in the first rendition.
        public var lostSeconds: Double
        /// Why the recording ended (`endlist`, `duration`, `until`, `stopped`, or what failed);
        /// `nil` while it records, or when it was killed (run again, it goes on).
        public var ended: String?
    }

    /// Whether it plays with no network.
    public var isPlayableOffline: Bool { state == .complete }
}
