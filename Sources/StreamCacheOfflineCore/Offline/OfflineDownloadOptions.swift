import Foundation
import StreamCache

/// How an offline download runs.
public struct OfflineDownloadOptions: Sendable {
    /// Files fetched at once.
    public var jobs = 4
    /// Resolve the selection and estimate the size; of the segments, fetch only the first bytes
    /// of a sample (to learn their sizes).
    public var dryRun = false
    /// Request headers for the origin (per host), as the streaming cache sends them.
    public var headers = OriginHeaders()
    /// Attempts per request before the download fails.
    public var maxAttempts = 3
    /// The pause before a second attempt; it doubles for each one after.
    public var retryBackoff: Duration = .milliseconds(500)
    /// Byte ranges of one file that follow each other are fetched in one request up to this size.
    public var runLimit: Int64 = 8 << 20
    /// Keep AES-128 segments encrypted as the origin serves them, with their keys as files of
    /// the package; by default they are decrypted, so the package plays in any player.
    public var keepsEncryption = false
    /// Refuse to start when the expected size does not fit on the library's disk.
    public var checksFreeSpace = true
    /// Learn the lengths of a sample of the files to estimate the size (the first bytes of
    /// each); without it the estimate comes from the manifest alone.
    package var estimatesSize = true
    /// The title to keep with the package, for the app's downloads list
    /// (`AVAssetDownloadConfiguration.artworkData`'s companion); `nil` keeps the one it has.
    public var title: String?
    /// Artwork to keep with the package (JPEG or PNG bytes, as `AVAssetDownloadConfiguration.artworkData`);
    /// `nil` keeps the one it has.
    public var artwork: Data?
    /// The parts of the timeline to keep (`--section`): only the segments that play in them, and
    /// the init sections and keys those need, are fetched. Empty: the whole stream.
    package var sections = TimeSections()
    /// How a live stream is recorded.
    public var recording = RecordingOptions()
    /// The one file the command writes from the package when the download ends (an absolute
    /// path or template, `-o`), kept with the package so that a resume by id writes it too
    /// (``OfflineLibrary/outputFile(of:)``); `nil` keeps what the package has.
    public var outputFile: String?

    public init() {}
}
