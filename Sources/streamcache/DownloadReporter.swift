import Foundation
import StreamCacheOffline

/// Shows an offline download's events: a progress line on a terminal, plain lines otherwise,
/// or one JSON object per event on stdout (`--json`).
struct DownloadReporter: Sendable {
    enum Outcome: Sendable {
        case none, finished, failed, dryRun
    }

    let json: Bool
    let dryRun: Bool
    let interactive: Bool
    /// `--silent`: errors only.
    let silent: Bool
    private(set) var outcome = Outcome.none
    /// What the download failed with, when it did.
    private(set) var failure: OfflineError?
    /// The asset, once it is finished.
    private(set) var finishedID: String?
    private var completed: [String] = []
    private var started = ContinuousClock.now
    private var lastLine: ContinuousClock.Instant?
    private var fractionAtStart: Double?

    /// Progress shows on stderr whether it is a terminal or not (plain lines then).
    init(json: Bool, dryRun: Bool, silent: Bool = false) {
        self.json = json
        self.dryRun = dryRun
        self.silent = silent
        interactive = Terminal.stderrIsTerminal
    }

    mutating func report(_ event: DownloadEvent) {
        switch event {
        case .selection(let selection):
            outcome = dryRun ? .dryRun : .none
            if json { return emit(["event": "selection"].merging(Self.object(selection)) { $1 }) }
            let lines = Self.describe(selection)
            for line in lines {
                if dryRun { print(line) } else { note(line) }
            }
            started = .now
        case .progress(let progress):
            if fractionAtStart == nil { fractionAtStart = progress.fraction }
            if json {
                return emit([
                    "event": "progress",
                    "loaded": progress.loaded.map { [$0.lowerBound, $0.upperBound] },
                    "expected": [progress.expected.lowerBound, progress.expected.upperBound],
                    "fraction": progress.fraction,
                    "bytes": progress.bytes,
                    "files": progress.files,
                    "filesDone": progress.filesDone,
                    "completed": completed,
                ])
            }
            showProgress(progress)
        case .recording(let recording):
            if json {
                return emit([
                    "event": "recording",
                    "id": recording.id,
                    "seconds": recording.seconds,
                    "segments": recording.segments,
                    "lostSeconds": recording.lostSeconds,
                    "lostSegments": recording.lostSegments,
                ])
            }
            showRecording(recording)
        case .mediaSelectionCompleted(let kind, let language):
            let name = kind + (language.map { " " + $0 } ?? "")
            completed.append(name)
            if json {
                emit(["event": "completed", "rendition": name, "completed": completed])
            } else {
                clearLine()
                note("\(name): every file on disk")
            }
        case .finished(let id, let path):
            outcome = .finished
            finishedID = id
            if json { return emit(["event": "finished", "id": id, "path": path, "completed": completed]) }
            clearLine()
            note("done in \(Progress.duration(seconds)): \(path)")
            print(id)
        case .failed(let error):
            outcome = .failed
            failure = error
            if json { return emit(["event": "failed", "error": error.message, "kind": error.kind.description]) }
            clearLine()
            Terminal.printError("streamcache: error: \(error.message)")
        }
    }

    /// The one line for SIGINT or SIGTERM.
    func interrupted() {
        if json {
            emit([
                "event": "failed", "error": "interrupted; run the same command again to resume", "kind": "interrupted",
            ])
            return
        }
        clearLine()
        Terminal.printError("interrupted; run the same command again to resume")
    }

    private mutating func showProgress(_ progress: DownloadProgress) {
        let interval: Duration = interactive ? .milliseconds(100) : .seconds(2)
        let isLast = progress.filesDone == progress.files
        if let lastLine, lastLine.duration(to: .now) < interval, !isLast { return }
        lastLine = .now
        var parts = ["download", String(format: "%3.0f%%", progress.fraction * 100), ByteCount.format(progress.bytes)]
        let elapsed = seconds
        if elapsed > 0.2 {
            parts.append(ByteCount.format(Int64(Double(progress.bytesThisRun) / elapsed)) + "/s")
            let gained = progress.fraction - (fractionAtStart ?? 0)
            if gained > 0, progress.fraction < 1 {
                parts.append("\(Progress.duration((1 - progress.fraction) * elapsed / gained)) left")
            }
        }
        let line = parts.joined(separator: "  ")
        if interactive, !silent {
            StandardStream.error.write(Data("\r\(line)\u{1B}[K".utf8))
        } else {
            note(line)
        }
    }

    private mutating func showRecording(_ recording: RecordingProgress) {
        let interval: Duration = interactive ? .milliseconds(100) : .seconds(2)
        if let lastLine, lastLine.duration(to: .now) < interval { return }
        lastLine = .now
        var line = "recording  \(Self.mediaDuration(recording.seconds))  \(recording.segments) segments"
        if recording.lostSegments > 0 {
            line += "  \(recording.lostSegments) lost (\(Self.mediaDuration(recording.lostSeconds)))"
        }
        if interactive, !silent {
            StandardStream.error.write(Data("\r\(line)\u{1B}[K".utf8))
        } else {
            note(line)
        }
    }

    /// A line on stderr that is not an error: none with `--silent`.
    private func note(_ line: String) {
        if !silent { Terminal.printError(line) }
    }

    private func clearLine() {
        if interactive && !json { StandardStream.error.write(Data("\r\u{1B}[K".utf8)) }
    }

    private var seconds: Double {
        let duration = started.duration(to: .now)
        return Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    private func emit(_ object: [String: Any]) {
        StandardOutput.writeJSONLine(object)
    }

    static func object(_ selection: DownloadSelection) -> [String: Any] {
        var object: [String: Any] = [
            "id": selection.id,
            "audio": selection.audio,
            "subtitles": selection.subtitles,
            "duration": selection.duration,
            "files": selection.files,
            "filesDone": selection.filesDone,
        ]
        if let variant = selection.variant { object["variant"] = StreamCacheCommand.PackageList.object(variant) }
        if let bytes = selection.estimatedBytes { object["estimatedBytes"] = bytes }
        if selection.isRecording { object["recording"] = true }
        return object
    }

    /// A media duration as a player shows it: `0:06`, `42:10`, `1:02:03`.
    static func mediaDuration(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        let (hours, minutes, rest) = (whole / 3600, whole % 3600 / 60, whole % 60)
        return hours > 0
            ? String(format: "%d:%02d:%02d", hours, minutes, rest) : String(format: "%d:%02d", minutes, rest)
    }

    static func describe(_ selection: DownloadSelection) -> [String] {
        var variant = "variant: "
        if let chosen = selection.variant {
            variant += Bitrate.text(chosen.bandwidth)
            if let resolution = chosen.resolution { variant += "  \(resolution)" }
            if let codecs = chosen.codecs { variant += "  \(codecs)" }
        } else {
            variant += "the playlist's only stream"
        }
        let audio = selection.audio.isEmpty ? "the variant's own" : selection.audio.joined(separator: ", ")
        let subtitles = selection.subtitles.isEmpty ? "none" : selection.subtitles.joined(separator: ", ")
        let size = selection.estimatedBytes.map { "about " + ByteCount.format($0) } ?? "size unknown"
        if selection.isRecording {
            return [
                "asset \(selection.id)",
                variant,
                "audio: \(audio)  subtitles: \(subtitles)",
                "live: recording"
                    + (selection.duration > 0 ? " on after the \(Self.mediaDuration(selection.duration)) recorded" : "")
                    + " until the stream ends or Ctrl-C",
            ]
        }
        return [
            "asset \(selection.id)",
            variant,
            "audio: \(audio)  subtitles: \(subtitles)",
            "\(Self.mediaDuration(selection.duration)) long, \(size), \(selection.files) files"
                + (selection.filesDone > 0 ? " (\(selection.filesDone) already on disk)" : ""),
        ]
    }
}
