import Foundation
import StreamCache
import StreamCacheOffline
import StreamCacheServer

#if canImport(Glibc)
import Glibc
#endif

/// `get URL --section START-END -o FILE`: a time section of a progressive MP4, M4A, MOV or MP3
/// file, cut by ffmpeg by stream copy (from the keyframe at or before START; an audio file to
/// its frame) as `ffmpeg -ss START -to END -i URL -c copy` cuts it; with ``exact``, at the
/// section's own frames (``ExactCut``, which reads the packets of the section and of the group
/// of pictures before it to plan its parts).
///
/// ffmpeg reads the file as a player does, through a loopback server of the cache in this
/// process: the movie box wherever it is, then the samples of the section, each range from the
/// cache where it is there and from the origin where it is not. The engine fetches in small
/// spans, so what ffmpeg does not read is not fetched: a second section reads what the first
/// fetched from the cache.
struct FileSection {
    let url: URL
    /// The section: a part of the timeline, or the chapter of a title, which the file's header
    /// says where it is.
    let choice: SectionOption.Choice
    /// Where the file goes (beside it first, then renamed: a failed run leaves nothing).
    let output: String
    /// Cut at the section's exact frames (``SectionCut/exact``).
    var exact = false

    /// Bytes the engine fetches at first where ffmpeg reads, and at most as it reads on: its
    /// reads are small and seek, and what a span fetches past them is the section's waste.
    static let firstFetchSpan: Int64 = 64 << 10
    static let fetchSpan: Int64 = 256 << 10

    /// The ffmpeg muxer of each extension `-o` may have.
    static let formats = ["mp4": "mp4", "m4a": "mp4", "mov": "mov", "mp3": "mp3", "mkv": "matroska", "ts": "mpegts"]

    /// ffmpeg's muxer for `path`, by its extension.
    ///
    /// - Throws: ``CommandFailure`` (64) naming the extensions there are.
    static func format(of path: String) throws -> String {
        guard let format = formats[(path as NSString).pathExtension.lowercased()] else {
            throw CommandFailure(
                "-o with --section writes .mp4, .m4a, .mov, .mp3, .mkv or .ts; \(path) has none of them",
                status: ExitStatus.usage
            )
        }
        return format
    }

    /// Writes the section.
    ///
    /// - Throws: ``CommandFailure`` with ffmpeg's last line when it cannot cut the file (not
    ///   media, a section past its end), and when ffmpeg is not installed.
    func run(cache: CacheOptions, transfer: TransferOptions, verbose: Bool) async throws {
        let ffmpeg = try PackageMuxer.find().ffmpeg
        let format = try Self.format(of: output)
        let temporary = LocalPath.appending(
            ".\(LocalPath.lastComponent(of: output)).\(getpid()).partial",
            to: LocalPath.folder(of: output)
        )
        try await cache.withEngine(
            configure: { configuration in
                configuration.firstFetchSpan = Self.firstFetchSpan
                configuration.maxFetchSpan = Self.fetchSpan
                // ffmpeg reads a little and seeks: the fetch keeps near what it has read.
                configuration.fetchAheadLimit = Self.firstFetchSpan
                configuration.readChunkSize = Int(Self.firstFetchSpan)
                // What one ffmpeg leaves when it seeks is rarely read again: a request it leaves
                // is dropped at once, not finished. An exact cut's ffprobe and ffmpeg runs each
                // read the file's head and the section again: what one leaves, the next reads,
                // so a request left is finished (within a second), not asked for again.
                configuration.orphanGrace = exact ? .seconds(1) : .zero
            },
            timeout: transfer.timeoutDuration,
            connectTimeout: transfer.connectTimeoutDuration,
            bytesPerSecond: try transfer.bytesPerSecond()
        ) { engine in
            let info = try await engine.open(url, originHeaders: OriginHeaders()).info()
            guard info.byteRangeAccess else {
                throw CommandFailure(
                    "\(url.originName) ignores Range, so a section would cost the whole file: get it whole, then cut it with ffmpeg"
                )
            }
            // A small send buffer too: the cache reads little ahead of what ffmpeg has read.
            let server = InAppServer(engine: engine, sendBufferSize: Int(Self.firstFetchSpan))
            try await server.start()
            let section: TimeSection
            let ran: (status: Int32, errors: String)
            do {
                let local = try await server.url(for: url).absoluteString
                section = try await resolve(reading: local, ffmpeg: ffmpeg)
                if !transfer.silent { Terminal.printError("cutting \(section) of \(url.originName) with ffmpeg") }
                ran = try await cut(
                    section,
                    of: local,
                    into: temporary,
                    ffmpeg: ffmpeg,
                    format: format,
                    verbose: verbose
                )
            } catch {
                await server.stop()
                throw error
            }
            await server.stop()
            let (status, errors) = ran
            guard status == 0 else {
                unlink(temporary)
                let last = errors.split(separator: "\n").last.map(String.init) ?? "exit status \(status)"
                throw CommandFailure("ffmpeg could not cut \(section) of \(url.originName): \(last.prefix(300))")
            }
            // ffmpeg writes a file without a frame for a section past the end.
            guard let played = await PackageMuxer(ffmpeg: ffmpeg).duration(of: temporary), played > 0 else {
                unlink(temporary)
                throw CommandFailure(
                    "section \(section) starts past the end of \(url.originName): ffmpeg found nothing to cut there",
                    status: ExitStatus.usage
                )
            }
        }
        guard rename(temporary, output) == 0 else {
            unlink(temporary)
            throw OutputError("cannot write \(output): \(String(cString: strerror(errno)))")
        }
        if !transfer.silent { Terminal.printError("wrote \(output)") }
    }

    /// The section `choice` names: a chapter's from the chapters ffprobe finds in the file's
    /// header, read at `local` (through the cache).
    ///
    /// - Throws: ``CommandFailure`` (64) where no one chapter has the title.
    private func resolve(reading local: String, ffmpeg: String) async throws -> TimeSection {
        switch choice {
        case .time(let section): return section
        case .chapter(let title):
            let chapters = await Chapters.probe(local, with: PackageMuxer(ffmpeg: ffmpeg))
            return try Chapters.section(titled: title, in: chapters, of: url.originName)
        }
    }

    /// ffmpeg's cut of `section` into `temporary`, reading the file at `local` (the cache's
    /// loopback server): its status and what it wrote on stderr.
    private func cut(
        _ section: TimeSection,
        of local: String,
        into temporary: String,
        ffmpeg: String,
        format: String,
        verbose: Bool
    ) async throws -> (status: Int32, errors: String) {
        let muxer = PackageMuxer(ffmpeg: ffmpeg)
        if exact, format != "mp3", let first = await muxer.startTime(of: local) {
            let (start, end) = (first + section.start, section.end.map { first + $0 })
            // ffprobe reads the packets of the section, of the group of pictures before it, and
            // those stored after END that play before it (``reorderMargin``).
            let interval =
                SectionCut.seconds(start) + "%" + (end.map { SectionCut.seconds($0 + Self.reorderMargin) } ?? "")
            if let exactCut = await ExactCut.prepare(
                local,
                inputOptions: Self.readOptions,
                first: first,
                from: start,
                to: end,
                reading: interval,
                with: muxer
            ) {
                do {
                    let cutApart = try await exactCut.write(
                        to: temporary,
                        format: format,
                        scratch: temporary,
                        with: muxer
                    ) { arguments, file in
                        if verbose { Terminal.printError(([ffmpeg] + arguments).joined(separator: " ")) }
                        let ran = try await PackageMuxer.run(ffmpeg, arguments, writing: file)
                        if ran.0 != 0 { throw FailedRun(status: ran.0, errors: ran.1) }
                    }
                    if cutApart { return (0, "") }
                } catch let failed as FailedRun {
                    return (failed.status, failed.errors)
                }
            }
        }
        var arguments = ["-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-ss", Self.seconds(section.start)]
        if let end = section.end { arguments += ["-to", Self.seconds(end)] }
        arguments += Self.readOptions + ["-i", local]
        // An MP3 has no video: its frames are cut where they are, exact with stream copy.
        arguments += exact && format != "mp3" ? SectionCut.exactCodecs : ["-c", "copy"]
        // The file's chapters would outlast the section (a chapter track of the whole length).
        arguments += ["-map_chapters", "-1"]
        arguments += ["-f", format, temporary]
        if verbose { Terminal.printError(([ffmpeg] + arguments).joined(separator: " ")) }
        return try await PackageMuxer.run(ffmpeg, arguments, writing: temporary)
    }

    /// How far past END an exact cut's packets are read: frames that play before END may be
    /// stored after one that plays past it, as far back as the encoder reorders (a few frames).
    static let reorderMargin = 0.5

    /// ffmpeg's options for reading the file: a small socket buffer, so that what ffmpeg has not
    /// read when it seeks is not fetched.
    private static let readOptions = ["-recv_buffer_size", "65536"]

    /// An ffmpeg run of an exact cut that failed: its status and what it wrote on stderr.
    private struct FailedRun: Error {
        let status: Int32
        let errors: String
    }

    private static func seconds(_ value: Double) -> String { String(format: "%.3f", value) }
}
