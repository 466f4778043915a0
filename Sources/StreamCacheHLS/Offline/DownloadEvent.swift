/// What an offline download reports, in order: the selection first, then progress and each
/// media selection as it completes, then `finished` or `failed` last (AVAssetDownloadDelegate's
/// `willDownloadVariants`, `didLoad timeRange`, `didCompleteFor mediaSelection`,
/// `didFinishDownloadingTo`, `didCompleteWithError`).
public enum DownloadEvent: Sendable {
    /// The variant and renditions that will be downloaded, before any segment is fetched.
    case selection(DownloadSelection)
    /// After each file the package gets.
    case progress(DownloadProgress)
    /// Every file of one rendition is on disk.
    case mediaSelectionCompleted(kind: String, language: String?)
    /// Every file is on disk; `path` is the playlist to play.
    case finished(id: String, path: String)
    case failed(OfflineError)
}

/// The resolved selection of a download.
public struct DownloadSelection: Sendable, Hashable {
    /// The asset id (the same for the same URL and selection).
    public var id: String
    public var variant: OfflineAsset.VariantInfo?
    public var audio: [String]
    public var subtitles: [String]
    /// Seconds.
    public var duration: Double
    /// `BANDWIDTH` × duration where the playlists give no sizes; `nil` when nothing says.
    public var estimatedBytes: Int64?
    /// Segments, init sections and keys to fetch in all.
    public var files: Int
    /// Of those, already on disk from an earlier run.
    public var filesDone: Int
}

/// How far a download is.
public struct DownloadProgress: Sendable, Hashable {
    /// Time ranges (seconds) that play from disk.
    public var loaded: [ClosedRange<Double>]
    /// The time range the download will have loaded when it is done.
    public var expected: ClosedRange<Double>
    /// The part of the duration on disk, 0 to 1.
    public var fraction: Double
    /// Bytes on disk in the package's media files.
    public var bytes: Int64
    /// Bytes fetched by this run (from the origin or the streaming cache).
    public var bytesThisRun: Int64
    /// Files done, of `files`.
    public var filesDone: Int
    public var files: Int
}
