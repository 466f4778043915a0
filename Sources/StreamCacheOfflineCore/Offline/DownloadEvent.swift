/// What an offline download reports, in order: the selection first, then progress and each
/// media selection as it completes, then `finished` or `failed` last (AVAssetDownloadDelegate's
/// `willDownloadVariants`, `didLoad timeRange`, `didCompleteFor mediaSelection`,
/// `didFinishDownloadingTo`, `didCompleteWithError`).
public enum DownloadEvent: Sendable {
    /// The variant and renditions that will be downloaded, before any segment is fetched.
    case selection(DownloadSelection)
    /// After each file the package gets.
    case progress(DownloadProgress)
    /// After each segment a live recording lists, and when it ends.
    case recording(RecordingProgress)
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
    /// Whether the stream is live and is recorded (until it ends or is stopped): `duration` is
    /// what was recorded before, and `files` are those planned so far.
    public var isRecording = false

    package init(
        id: String,
        variant: OfflineAsset.VariantInfo? = nil,
        audio: [String],
        subtitles: [String],
        duration: Double,
        estimatedBytes: Int64? = nil,
        files: Int,
        filesDone: Int,
        isRecording: Bool = false
    ) {
        self.isRecording = isRecording
        self.id = id
        self.variant = variant
        self.audio = audio
        self.subtitles = subtitles
        self.duration = duration
        self.estimatedBytes = estimatedBytes
        self.files = files
        self.filesDone = filesDone
    }
}

/// How far a live recording is.
public struct RecordingProgress: Sendable, Hashable {
    public var id: String
    /// Seconds recorded (of the first rendition).
    public var seconds: Double
    /// Segments listed in the package, over every rendition.
    public var segments: Int
    /// Seconds of the first rendition the package lacks: segments that left the origin's window
    /// before they could be fetched, or failed every attempt.
    public var lostSeconds: Double
    /// Segments lost, over every rendition.
    public var lostSegments: Int

    package init(
        id: String,
        seconds: Double,
        segments: Int,
        lostSeconds: Double,
        lostSegments: Int
    ) {
        self.id = id
        self.seconds = seconds
        self.segments = segments
        self.lostSeconds = lostSeconds
        self.lostSegments = lostSegments
    }
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

extension DownloadEvent {
    /// The last event of a recording of `manifest` into `folder` that holds `recorded` seconds:
    /// `finished`, or `failed` saying what it holds.
    package static func recordingEnded(
        _ manifest: AssetManifest,
        in folder: String,
        recorded: Double,
        failure: OfflineError?
    ) -> DownloadEvent {
        let entryPoint = folder + "/" + manifest.entryPoint
        guard let failure else { return .finished(id: manifest.id, path: entryPoint) }
        return .failed(
            OfflineError(
                failure.kind,
                "\(failure.message); the recording ends with \(Int(recorded)) s in \(entryPoint)"
            )
        )
    }
}

extension DownloadSelection {
    /// The selection of the recording `manifest`, which holds `recorded` seconds.
    package init(recording manifest: AssetManifest, recorded: Double) {
        self.init(manifest, filesDone: 0, isRecording: true)
        duration = recorded
    }
}
