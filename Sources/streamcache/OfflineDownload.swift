import ArgumentParser
import Foundation
import StreamCache
import StreamCacheDASHModel
import StreamCacheOffline

extension StreamCacheCommand {
    /// `streamcache download URL` (and `streamcache packages download URL`): an HLS or DASH stream
    /// for offline playback.
    struct OfflineDownload: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "download",
            abstract: "Download an HLS or DASH stream for offline playback (resumes when run again).",
            discussion: """
                Chooses one variant (the highest bandwidth unless told), its audio and any subtitles, and \
                downloads them into a package folder that plays from disk. On success the last line on stdout \
                is the asset id; `streamcache serve` plays it at /offline/ID/master.m3u8 (HLS) or \
                /offline/ID/manifest.mpd (DASH). Stopped or killed, the same command resumes where it was. \
                A live or EVENT HLS playlist is recorded until it ends, --duration or --until, or Ctrl-C, \
                then kept as VOD; meanwhile `serve` plays what it has.
                """
        )

        @Argument(
            help:
                "The URL of an HLS playlist (multivariant or media) or a DASH MPD, or the id (or its first 4+ characters) of an asset to resume."
        )
        var url: String

        @Option(name: .long, help: "Choose the best variant at or below this many bits per second (e.g. 2M).")
        var maxBitrate: String?

        @Option(name: .long, help: "Choose the lowest variant at or above this many bits per second.")
        var minBitrate: String?

        @Option(
            name: .long,
            help: "Choose no variant larger than WIDTHxHEIGHT (1280x720) or taller than a height (720p)."
        )
        var maxResolution: String?

        @Option(name: .long, help: "Audio: 'default', 'all', or languages such as 'en,de'.")
        var audio = "default"

        @Option(
            name: [.long, .customLong("sub-langs")],
            help: "Subtitles: 'none', 'all', or languages such as 'en,fr' (yt-dlp's --sub-langs)."
        )
        var subtitles = "none"

        @Option(
            name: [.long, .customShort("N"), .customLong("concurrent-fragments")],
            help: "Files fetched at once (yt-dlp's -N)."
        )
        var jobs = 4

        @Flag(
            name: .long,
            help: "Print the selection and the estimated size; fetch only the first bytes of a few segments."
        )
        var dryRun = false

        @Flag(
            name: .long,
            help: "Keep AES-128 segments encrypted as served, with their keys (by default they are decrypted)."
        )
        var keepEncryption = false

        @Flag(name: .long, help: "Print one JSON object per event on stdout.")
        var json = false

        @Flag(
            name: [.customShort("F"), .long],
            help: "List the variants, renditions or representations with the ids -f takes, and download nothing."
        )
        var listFormats = false

        @Option(
            name: [.customShort("f"), .customLong("format")],
            help: ArgumentHelp(
                "Choose tracks by the ids -F lists, joined by + (v2+a1+s1); a kind not named is chosen as without -f.",
                valueName: "ids"
            )
        )
        var format: String?

        @Flag(
            name: [.customShort("x"), .customLong("extract-audio")],
            help: ArgumentHelp(
                "Audio alone: an audio-only variant or the audio rendition (DASH: audio representations), and -o writes the audio (.m4a).",
                discussion: """
                    A stream whose audio is only inside its video variants is fetched whole; -o still \
                    writes its audio alone.
                    """
            )
        )
        var extractAudio = false

        @Option(
            name: .long,
            help: "Live streams: stop after this much recorded media (e.g. 90s, 20m, 1h)."
        )
        var duration: String?

        @Option(name: .long, help: "Live streams: stop at this local time (HH:MM or HH:MM:SS).")
        var until: String?

        @Flag(
            name: .long,
            help: "Live streams: begin with the oldest segment the playlist lists, not at the live edge."
        )
        var fromStart = false

        @Option(
            name: [.long, .customLong("download-sections")],
            help: ArgumentHelp(
                "Only this part of the timeline: START-END, such as 1:02:00-1:04:30, 90-150, *-10:00 or 1:00:00-*, or a chapter's title (repeatable).",
                discussion: """
                    Only the segments that play in a section are fetched, with their init sections and keys; -o \
                    cuts the sections at the keyframe at or before each start and joins them. A title names a chapter \
                    of the stream's chapter list (HLS com.apple.hls.chapters), case aside.
                    """,
                valueName: "START-END|CHAPTER"
            )
        )
        var section: [String] = []

        @Option(
            name: [.customShort("o"), .customLong("output")],
            help: ArgumentHelp(
                "Also write one file, muxed by ffmpeg without re-encoding: .mp4, .m4a, .mkv or .ts by extension.",
                discussion: "A template such as '%(title)s.%(ext)s' (fields: title, id, height, ext).",
                valueName: "file"
            )
        )
        var output: String?

        @Flag(
            name: .long,
            help: "With -o: keep only the file, as without --keep-package (the package's bytes stay cached, unpinned)."
        )
        var noPackage = false

        @Flag(name: .long, help: "With -o: keep the package as well as the file.")
        var keepPackage = false

        @OptionGroup var singleFile: SingleFileOptions

        @OptionGroup var transfer: TransferOptions

        @OptionGroup var originHeaders: OriginHeaderOptions

        @OptionGroup var library: LibraryOptions

        func validate() throws {
            guard maxBitrate == nil || minBitrate == nil else {
                throw ValidationError("give --max-bitrate or --min-bitrate, not both")
            }
            _ = try criteria()
            guard (1...64).contains(jobs) else { throw ValidationError("invalid --jobs \(jobs): expected 1 to 64") }
            _ = try recordingOptions()
            let sections = try SectionOption.choices(section)
            if !sections.isEmpty, duration != nil || until != nil || fromStart {
                throw ValidationError(
                    "--section cuts a stream's timeline; --duration, --until and --from-start record a live one"
                )
            }
            let direct = URL(string: url).map(DirectFile.names) ?? false
            if direct, !section.isEmpty {
                throw ValidationError(
                    "download --section cuts HLS and DASH streams; for a media file's URL use get URL --section START-END -o FILE"
                )
            }
            if let output, !direct {
                do {
                    _ = try OutputTemplate(output)
                } catch let failure as CommandFailure {
                    throw ValidationError(failure.message)
                }
            }
            if singleFile.exact, section.isEmpty || output == nil {
                throw ValidationError("--exact cuts a section: give --section START-END and -o FILE")
            }
            guard output != nil || !noPackage else { throw ValidationError("--no-package goes with -o FILE") }
            guard output != nil || !keepPackage else { throw ValidationError("--keep-package goes with -o FILE") }
            guard !(noPackage && keepPackage) else { throw ValidationError("give --keep-package or --no-package") }
        }

        /// `--duration`, `--until` and `--from-start`.
        func recordingOptions(now: Date = Date()) throws -> RecordingOptions {
            var options = RecordingOptions()
            options.fromStart = fromStart
            if let duration {
                guard let seconds = RecordingTime.seconds(duration), seconds > 0 else {
                    throw ValidationError("invalid --duration '\(duration)': expected a time such as 90s, 20m or 1h")
                }
                options.duration = .seconds(seconds)
            }
            if let until {
                guard let date = RecordingTime.date(until, after: now) else {
                    throw ValidationError(
                        "invalid --until '\(until)': expected a local time to come, such as 18:30 or 18:30:15"
                    )
                }
                options.until = date
            }
            return options
        }

        /// `--section`, each parsed, none overlapping another: a chapter's title as the part of
        /// the timeline the stream's chapter list gives it (``Chapters/ofStream(_:)``).
        func timeSections(of url: URL?) async throws -> TimeSections {
            let choices = try SectionOption.choices(section)
            var chapters: [Chapter] = []
            if choices.contains(where: { if case .chapter = $0 { true } else { false } }) {
                guard let url else {
                    throw CommandFailure(
                        "a chapter is found by the stream's URL: give the URL, not a package's id",
                        status: ExitStatus.usage
                    )
                }
                chapters = try await Chapters.ofStream(url)
            }
            let sections = try choices.map { choice in
                switch choice {
                case .time(let section): section
                case .chapter(let title):
                    try Chapters.section(titled: title, in: chapters, of: url?.originName ?? "the stream")
                }
            }
            do {
                return try SectionOption.apart(TimeSections(sections))
            } catch let invalid as ValidationError {
                throw CommandFailure(invalid.message, status: ExitStatus.usage)
            }
        }

        /// `1280x720`, or `720p`: a height, any width.
        static func resolution(_ text: String) -> Resolution? {
            let lowered = text.lowercased()
            guard lowered.hasSuffix("p") else { return Resolution(parsing: lowered) }
            guard let height = Int(lowered.dropLast()), lowered.count <= 7 else { return nil }
            return Resolution(width: Int.max, height: height)
        }

        func criteria() throws -> MediaSelectionCriteria {
            var criteria = MediaSelectionCriteria()
            if let maxBitrate { criteria.bitrate = .atMost(try Self.bitrate(maxBitrate, option: "--max-bitrate")) }
            if let minBitrate { criteria.bitrate = .atLeast(try Self.bitrate(minBitrate, option: "--min-bitrate")) }
            if let maxResolution {
                guard let size = Self.resolution(maxResolution), size.width > 0, size.height > 0 else {
                    throw ValidationError(
                        "invalid --max-resolution '\(maxResolution.prefix(40))': expected WIDTHxHEIGHT or a height such as 720p"
                    )
                }
                criteria.maxResolution = size
            }
            guard let audio = MediaSelectionCriteria.Languages(parsing: audio) else {
                throw ValidationError("invalid --audio '\(audio)': expected default, all, or languages such as en,de")
            }
            guard let subtitles = MediaSelectionCriteria.Languages(parsing: subtitles) else {
                throw ValidationError(
                    "invalid --subtitles '\(subtitles)': expected none, all, or languages such as en,fr"
                )
            }
            criteria.audio = audio
            criteria.subtitles = subtitles
            if let format {
                guard let choice = FormatChoice(parsing: format) else {
                    throw ValidationError(
                        "invalid -f '\(format.prefix(40))': expected ids that -F lists, such as v2 or v2+a1+s1"
                    )
                }
                criteria.formats = choice
            }
            criteria.audioOnly = extractAudio
            if extractAudio, criteria.formats?.video != nil {
                throw ValidationError("-x takes audio alone: give -f audio ids (a1), not a video one")
            }
            return criteria
        }

        func downloadOptions(sections: TimeSections) throws -> OfflineDownloadOptions {
            var options = OfflineDownloadOptions()
            options.jobs = jobs
            options.dryRun = dryRun
            options.keepsEncryption = keepEncryption
            options.headers = try originHeaders.originHeaders()
            options.recording = try recordingOptions()
            options.sections = sections
            if let attempts = transfer.attempts { options.maxAttempts = attempts }
            // Where it is now: a resume by id may run from another folder.
            options.outputFile = output.map { path in
                path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
            }
            return options
        }

        /// Bits per second: `800000`, `800k`, `2M`, `1.5M` (powers of 1000).
        static func bitrate(_ text: String, option: String) throws -> Int64 {
            var number = text.trimmingCharacters(in: .whitespaces).lowercased()
            var factor = 1.0
            if let last = number.last, let unit = ["k": 1e3, "m": 1e6, "g": 1e9][last] {
                factor = unit
                number.removeLast()
            }
            guard let value = Double(number), value > 0, value * factor < 1e15 else {
                throw ValidationError("invalid \(option) '\(text)': expected bits per second, e.g. 2000000 or 2M")
            }
            return Int64(value * factor)
        }

        func run() async throws {
            if listFormats { return try await listTheFormats() }
            let offline = library.offlineLibrary
            let resumed = try offline.id(named: url)
            if resumed == nil, !self.url.contains("://"), !self.url.contains("/"), !self.url.contains(".") {
                // Neither a URL nor an asset of the library: say both.
                throw CommandFailure(
                    "no asset \(self.url) in the library, and it is not a URL (see streamcache packages ls)",
                    status: ExitStatus.usage
                )
            }
            let url = resumed == nil ? try URLArgument.parse(url) : nil
            // Packages the library held whole before: -o writes a file of one, and leaves it.
            let heldBefore = Set(offline.assets().filter(\.isPlayableOffline).map(\.id))
            if let url, DirectFile.names(url) {
                let path = try DirectFile.path(of: url, template: output)
                if dryRun { return print("\(url.absoluteString) is a media file: download writes it as \(path)") }
                try OutputFile.check(path)
                try await Download(
                    url: url,
                    headers: try originHeaders.originHeaders(),
                    range: .from(first: 0, last: nil),
                    output: path,
                    progress: transfer.silent ? nil : Progress.make(label: "download", forced: transfer.progress)
                ).run(cache: library.cache, transfer: transfer)
                if !transfer.silent { Terminal.printError("wrote \(path)") }
                return
            }
            // ffmpeg and the output's folder are checked before any byte is fetched. A resume by id
            // writes the file its first run was asked for.
            let output = output ?? resumed.flatMap(offline.outputFile(of:))
            let single = try output.map {
                var single = try SingleFileOutput(
                    $0,
                    force: singleFile.force,
                    verbose: singleFile.verbose,
                    silent: transfer.silent
                )
                single.audioOnly = extractAudio
                single.exact = singleFile.exact
                return single
            }
            let criteria = try criteria()
            let options = try downloadOptions(sections: try await timeSections(of: url))
            let reporter = DownloadReporter(json: json, dryRun: dryRun, silent: transfer.silent)
            let outcome: DownloadReporter
            do {
                // A live recording ends at the first signal with the package finished; anything
                // else stops, to resume.
                let stop = options.recording.stop
                outcome = try await Interrupted.run(endsGracefully: {
                    guard stop.isRecording else { return false }
                    stop.request()
                    return true
                }) {
                    // The download retries each file itself (with backoff, `maxAttempts` in a
                    // row): the engine's reads try once, so retries do not multiply.
                    try await transfer.withinMaxTime {
                        try await library.cache.withEngine(
                            configure: { configuration in
                                configuration.maxAttempts = 1
                                // A download reads every file to its end: one request per file (up to
                                // the largest span) rather than spans that grow from 1 MiB, as a
                                // player that may seek away is asked for; each request costs the
                                // origin's latency.
                                configuration.firstFetchSpan = configuration.maxFetchSpan
                            },
                            timeout: transfer.timeoutDuration,
                            connectTimeout: transfer.connectTimeoutDuration,
                            bytesPerSecond: try transfer.bytesPerSecond()
                        ) { engine in
                            var reporter = reporter
                            let events =
                                if let url {
                                    offline.download(url, criteria: criteria, options: options, engine: engine)
                                } else {
                                    offline.resume(id: resumed ?? "", options: options, engine: engine)
                                }
                            for await event in events {
                                reporter.report(event)
                            }
                            try Task.checkCancellation()
                            return reporter
                        }
                    }
                }
            } catch let interrupted as Interrupted {
                reporter.interrupted()
                throw ExitCode(interrupted.exitCode)
            }
            switch outcome.outcome {
            case .dryRun: return
            case .finished:
                guard let single, let id = outcome.finishedID, let asset = offline.asset(id) else { return }
                try await single.write(asset)
                // One file, as yt-dlp leaves: the package this command made goes once the file
                // is written.
                if !keepPackage, !heldBefore.contains(id) { try await Self.removePackage(id, library: library) }
            case .failed, .none: throw ExitCode(outcome.failure.map(ExitStatus.of) ?? ExitStatus.failure)
            }
        }

        /// `-F`: the tracks of the stream at `url`, with their ids.
        private func listTheFormats() async throws {
            let inspect = try ManifestInspect.parse([url])
            let (bytes, kind) = try await inspect.load()
            let rows: [[String]]
            if kind == .dash {
                let presentation: MediaPresentation
                do {
                    presentation = try MediaPresentation(parsing: bytes)
                } catch {
                    throw CommandFailure("invalid MPD \(url): \(error)")
                }
                rows = FormatList.rows(of: presentation, url: try URLArgument.parse(url))
            } else {
                let playlist: Playlist
                do {
                    playlist = try Playlist(parsing: bytes, url: url)
                } catch {
                    throw CommandFailure("invalid playlist \(url): \(error)")
                }
                guard case .multivariant(let multivariant) = playlist else {
                    // One stream: nothing to choose; what it holds is inspect's summary.
                    print("a media playlist: one format, the stream itself (nothing for -f to choose)")
                    return print(PlaylistDescription.text(of: playlist), terminator: "")
                }
                rows = FormatList.rows(
                    of: multivariant,
                    seconds: await Self.duration(of: multivariant, at: url, inspect)
                )
            }
            if json { return StandardOutput.write(try FormatList.json(rows) + Data("\n".utf8)) }
            print(FormatList.text(rows), terminator: "")
        }

        /// The length of a VOD stream in seconds, from its first variant's media playlist; `nil`
        /// for a live one or one that cannot be read (sizes are then not estimated).
        private static func duration(
            of playlist: MultivariantPlaylist,
            at base: String,
            _ inspect: ManifestInspect
        ) async -> Double? {
            guard let first = playlist.variants.first, let url = URL(string: first.uri, relativeTo: URL(string: base))
            else { return nil }
            guard let bytes = try? await inspect.fetch(url.absoluteURL),
                case .media(let media)? = try? Playlist(parsing: bytes, url: url.absoluteString), media.endList
            else { return nil }
            return media.totalDuration
        }

        /// Deletes the package `id`, its files left in the streaming cache unpinned.
        static func removePackage(_ id: String, library: LibraryOptions) async throws {
            let offline = library.offlineLibrary
            let urls = offline.urlsOnlyIn(id)
            try offline.remove(id)
            try await PackageRemove.release(urls, keepCached: true, library: library)
        }
    }
}
