import Foundation
import StreamCache
import StreamCacheOffline

#if canImport(Glibc)
import Glibc
#endif

/// One file from an offline package: its video, audio and subtitles muxed by ffmpeg without
/// re-encoding (stream copy), AES-128 segments kept encrypted decrypted with the package's keys.
/// The container follows the file's extension: MP4 (subtitles as `mov_text`), M4A (audio only),
/// Matroska, MPEG-TS (no subtitles).
struct PackageMuxer {
    /// The ffmpeg it runs.
    let ffmpeg: String

    /// ffmpeg, found on `PATH`.
    ///
    /// - Throws: ``CommandFailure`` saying how to install it, when it is not there.
    static func find(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> PackageMuxer {
        let folders = (environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":")
        for folder in folders where !folder.isEmpty {
            let candidate = String(folder) + "/ffmpeg"
            if access(candidate, X_OK) == 0 { return PackageMuxer(ffmpeg: candidate) }
        }
        throw CommandFailure(
            "-o needs ffmpeg to write one file, and it is not on PATH: install it (apt-get install ffmpeg, "
                + "brew install ffmpeg), or leave out -o to keep the package only"
        )
    }

    /// ffmpeg's arguments for writing the package whose entry point is `entryPoint` to
    /// `temporary`, a file in the container `container` names (an extension of
    /// ``OutputTemplate/extensions``), with the WebVTT files `subtitles` as subtitle streams; its
    /// audio alone if `audioOnly`.
    static func arguments(
        entryPoint: String,
        subtitles: [SubtitleTracks.Track],
        temporary: String,
        container: String,
        audioOnly: Bool = false
    ) -> [String] {
        var arguments =
            [
                "-nostdin", "-hide_banner", "-loglevel", "error", "-y",
            ] + Self.packageInput + ["-i", entryPoint]
        for track in subtitles { arguments += ["-i", track.path] }
        var maps: [String]
        let format = Self.format(of: container)
        switch container {
        case "m4a": maps = ["-map", "0:a"]
        case "ts": maps = ["-map", "0:v?", "-map", "0:a?"]
        default:
            // Subtitles come from their own inputs only (``SubtitleTracks``).
            maps = ["-map", "0:v?", "-map", "0:a?"]
            for (index, track) in subtitles.enumerated() {
                maps += ["-map", "\(index + 1):s"]
                if let language = track.language { maps += ["-metadata:s:s:\(index)", "language=\(language)"] }
            }
        }
        if audioOnly { maps = ["-map", "0:a"] }
        arguments += maps + ["-c", "copy"]
        if format == "mp4", container != "m4a" { arguments += ["-c:s", "mov_text"] }
        return arguments + ["-f", format, temporary]
    }

    /// ffmpeg's input options for a package's entry point: its own files and keys only
    /// (segments may be named .m4s, .vtt or .key).
    static let packageInput = ["-allowed_extensions", "ALL", "-protocol_whitelist", "file,crypto,data"]

    /// ffmpeg's name of the format of `container`, a file extension of
    /// ``OutputTemplate/extensions``.
    static func format(of container: String) -> String {
        switch container {
        case "ts": "mpegts"
        case "mkv": "matroska"
        default: "mp4"
        }
    }

    /// Writes `asset` to `path` (beside it first, then renamed: a failed run leaves no file), its
    /// audio alone if `audioOnly`.
    ///
    /// - Throws: ``CommandFailure`` with ffmpeg's last line when it fails; the package is kept.
    func write(
        _ asset: OfflineAsset,
        to path: String,
        audioOnly: Bool = false,
        section: TimeSection? = nil,
        exact: Bool = false,
        verbose: Bool,
        silent: Bool
    ) async throws {
        let folder = LocalPath.folder(of: path)
        let temporary = LocalPath.appending(".\(LocalPath.lastComponent(of: path)).\(getpid()).partial", to: folder)
        let chosen = try section.map { try SectionCut(asset: asset, section: $0) }
        if chosen != nil, try PeriodJoin(asset: asset, path: path) != nil {
            throw CommandFailure(
                "package \(asset.id) has several periods, and sections are cut from one timeline: export it whole",
                status: ExitStatus.usage
            )
        }
        if !silent { Terminal.printError("writing \(path) with ffmpeg") }
        if var cut = chosen ?? SectionCut(asset: asset) {
            cut.exact = exact
            try await cut.write(to: temporary, as: path, with: self, audioOnly: audioOnly, verbose: verbose)
        } else if let periods = try PeriodJoin(asset: asset, path: path) {
            try await periods.write(to: temporary, as: path, with: self, audioOnly: audioOnly, verbose: verbose)
        } else {
            try await write(
                entryPoint: asset.path,
                of: asset,
                to: temporary,
                as: path,
                audioOnly: audioOnly,
                verbose: verbose
            )
        }
        guard rename(temporary, path) == 0 else {
            unlink(temporary)
            throw OutputError("cannot write \(path): \(String(cString: strerror(errno)))")
        }
        let bytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int64) ?? nil
        if !silent { Terminal.printError("wrote \(path)" + (bytes.map { " (\(ByteCount.format($0)))" } ?? "")) }
    }

    /// Writes the package `asset` as the MPD or playlist at `entryPoint` plays it to `temporary`,
    /// a file of the container `path` (where it goes once written) names.
    ///
    /// - Throws: ``CommandFailure`` with ffmpeg's last line when it fails; nothing is left at
    ///   `temporary` then.
    func write(
        entryPoint: String,
        of asset: OfflineAsset,
        to temporary: String,
        as path: String,
        audioOnly: Bool,
        verbose: Bool
    ) async throws {
        let container = (path as NSString).pathExtension.lowercased()
        let subtitles =
            ["mp4", "mkv"].contains(container) && !audioOnly
            ? try SubtitleTracks.of(
                entryPoint: entryPoint,
                into: LocalPath.folder(of: temporary),
                name: LocalPath.lastComponent(of: temporary)
            ) : []
        defer { for track in subtitles where track.isJoined { unlink(track.path) } }
        let arguments = Self.arguments(
            entryPoint: entryPoint,
            subtitles: subtitles,
            temporary: temporary,
            container: container,
            audioOnly: audioOnly
        )
        try await run(arguments, writing: temporary, for: asset, path: path, verbose: verbose)
    }

    /// Runs ffmpeg with `arguments`, which write `temporary`.
    ///
    /// - Throws: ``CommandFailure`` naming `path` and `asset` with ffmpeg's last line when it
    ///   fails; nothing is left at `temporary` then.
    func run(
        _ arguments: [String],
        writing temporary: String,
        for asset: OfflineAsset,
        path: String,
        verbose: Bool
    )
        async throws
    {
        if verbose { Terminal.printError(([ffmpeg] + arguments).map(Self.quoted).joined(separator: " ")) }
        let (status, errors) = try await Self.run(ffmpeg, arguments, writing: temporary)
        guard status == 0 else {
            unlink(temporary)
            let last = errors.split(separator: "\n").last.map(String.init) ?? "exit status \(status)"
            throw CommandFailure(
                "ffmpeg could not write \(path) (\(last.prefix(300))); the package is kept at \(asset.path): "
                    + "streamcache export \(asset.id) FILE tries again"
            )
        }
    }

    /// Where the media at `path` begins, in seconds of its own timestamps, as ffprobe (beside
    /// ffmpeg) says; `nil` if it cannot tell.
    func startTime(of path: String) async -> Double? {
        await seconds("start_time", of: path)
    }

    /// How long the media at `path` plays, as ffprobe says; `nil` if it cannot tell.
    func duration(of path: String) async -> Double? {
        await seconds("duration", of: path)
    }

    /// The format's `field` (`start_time`, `duration`) of the media at `path`, in seconds, as
    /// ffprobe (beside ffmpeg) says; `nil` if it cannot tell.
    private func seconds(_ field: String, of path: String) async -> Double? {
        let output = await probe(["-v", "error", "-show_entries", "format=" + field, "-of", "csv=p=0", path])
        return output.flatMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    /// What ffprobe, beside ffmpeg, prints for `arguments`; `nil` where it is not there or fails.
    func probe(_ arguments: [String]) async -> String? {
        let ffprobe = (ffmpeg as NSString).deletingLastPathComponent + "/ffprobe"
        guard access(ffprobe, X_OK) == 0,
            let (status, output) = try? await Self.run(ffprobe, arguments, writing: nil, output: true), status == 0
        else { return nil }
        return output
    }

    /// One packet of a stream: its presentation and decode times (seconds on the media's clock)
    /// and whether it starts a group of pictures.
    struct Packet: Equatable {
        var time: Double
        var decodeTime: Double
        var isKey: Bool
    }

    /// The packets of the first video stream of the media at `path` (of its first stream if it
    /// has no video), in the order stored; `nil` if ffprobe cannot tell. `options` are ffprobe's
    /// input options; `interval` limits what it reads (`-read_intervals`).
    func packets(of path: String, options: [String] = [], reading interval: String? = nil) async -> [Packet]? {
        for stream in ["v:0", "0"] {
            let arguments =
                options + ["-v", "error", "-select_streams", stream] + (interval.map { ["-read_intervals", $0] } ?? [])
                + ["-show_entries", "packet=pts_time,dts_time,flags", "-of", "csv=p=0", path]
            guard let output = await probe(arguments) else { return nil }
            let packets = output.split(whereSeparator: \.isNewline).compactMap { line -> Packet? in
                let fields = line.split(separator: ",", omittingEmptySubsequences: false)
                guard fields.count >= 3, let time = Double(fields[0]) else { return nil }
                return Packet(time: time, decodeTime: Double(fields[1]) ?? time, isKey: fields[2].hasPrefix("K"))
            }
            if !packets.isEmpty { return packets }
        }
        return nil
    }

    /// The kinds of stream (`video`, `audio`, `subtitle`) ffprobe, beside ffmpeg, finds in the
    /// package whose entry point is `entryPoint`; `nil` if it cannot tell.
    func streamKinds(of entryPoint: String) async -> Set<String>? {
        let arguments = [
            "-v", "error", "-allowed_extensions", "ALL", "-protocol_whitelist", "file,crypto,data",
            "-show_entries", "stream=codec_type", "-of", "csv=p=0", entryPoint,
        ]
        guard let output = await probe(arguments) else { return nil }
        return Set(output.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) })
    }

    /// Runs `executable`, which writes `file` (if any), to its end: its status and what it wrote
    /// on stderr (on stdout with `output`). The process is the
    /// command's: killed when the calling task is cancelled, as a signal to the command cancels
    /// it, and by a second signal before the command exits (``ChildProcesses``). (SIGKILL: a
    /// child inherits the command's trapped SIGINT and SIGTERM as ignored, and what it wrote is
    /// removed anyway.)
    static func run(
        _ executable: String,
        _ arguments: [String],
        writing file: String?,
        output: Bool = false
    ) async throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        let pipe = Pipe()
        process.standardOutput = output ? pipe : FileHandle.nullDevice
        process.standardError = output ? FileHandle.nullDevice : pipe
        try process.run()
        let pid = process.processIdentifier
        ChildProcesses.started(pid, writing: file)
        defer { ChildProcesses.ended(pid) }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                Thread.detachNewThread {
                    let data = pipe.fileHandleForReading.readDataToEndOfFile()
                    process.waitUntilExit()
                    continuation.resume(returning: (process.terminationStatus, String(decoding: data, as: UTF8.self)))
                }
            }
        } onCancel: {
            kill(pid, SIGKILL)
        }
    }

    /// `text` as a shell word.
    static func quoted(_ text: String) -> String {
        let plain = text.allSatisfy { $0.isLetter || $0.isNumber || "-_./:,+=%@".contains($0) }
        return plain && !text.isEmpty ? text : "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
