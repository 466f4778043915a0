import ArgumentParser
import Foundation
import StreamCache
import StreamCacheOffline

extension StreamCacheCommand {
    struct Get: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write bytes of a URL, from the cache where present and from the origin where not.",
            discussion: """
                Exit status 0 on success; on any failure a non-zero status, one line on stderr, and no output file. \
                Binary output is not written to a terminal unless -o - says so.
                """
        )

        @Argument(help: "The http(s) URL of the resource.")
        var url: String

        @Option(
            name: [.customShort("r"), .long],
            parsing: .unconditional,
            help: "Inclusive byte range A-B, A- for all from A, or -N for the last N bytes (default: all)."
        )
        var range: String?

        @Option(name: [.short, .long], help: "Output file, or - for stdout (default: stdout unless it is a terminal).")
        var output: String?

        @Flag(
            name: [.customShort("O"), .customLong("remote-name")],
            help: "Write to a file in the current folder named after the URL, as curl -O does."
        )
        var remoteName = false

        @Flag(
            name: [.customShort("I"), .long],
            help: "Print the response's fields (stored, or fetched with two bytes of the body), as curl -I does."
        )
        var head = false

        @Option(
            name: [.long, .customLong("download-sections")],
            help: ArgumentHelp(
                "Only this part of an MP4, M4A, MOV or MP3 file, START-END (1:02:00-1:04:30, 90-150, *-10:00) or a chapter's title, cut by ffmpeg into -o FILE.",
                discussion: """
                    ffmpeg reads the file through the cache, so only the movie box and the section's samples are \
                    fetched; the cut starts at the keyframe at or before START, as ffmpeg -ss does.
                    """,
                valueName: "START-END|CHAPTER"
            )
        )
        var section: String?

        @Flag(
            name: .long,
            help:
                "With --section: cut at its exact frames, the video's edges re-encoded (H.264); without it, from the keyframe at or before START."
        )
        var exact = false

        @OptionGroup var transfer: TransferOptions

        @OptionGroup(title: "curl's options") var curl: CurlOptions

        @OptionGroup var originHeaders: OriginHeaderOptions

        @OptionGroup var cache: CacheOptions

        func validate() throws {
            _ = try Self.parseRange(range)
            if remoteName && output != nil { throw ValidationError("give either -o FILE or -O, not both") }
            if head && (remoteName || output != nil || range != nil) {
                throw ValidationError("-I prints the fields only: it takes no -o, -O or --range")
            }
            if exact, section == nil { throw ValidationError("--exact cuts a section: give --section START-END") }
            if section != nil {
                _ = try timeSection()
                guard range == nil, !head, curl.continueAt == nil else {
                    throw ValidationError("--section cuts by time: it takes no --range, -I or -C")
                }
                guard let output, output != "-" else { throw ValidationError("--section writes a file: give -o FILE") }
                do {
                    _ = try FileSection.format(of: output)
                } catch let failure as CommandFailure {
                    throw ValidationError(failure.message)
                }
            }
            if curl.continueAt != nil, !remoteName, output == nil || output == "-" {
                throw ValidationError("-C - goes on with a file: give -o FILE or -O")
            }
        }

        func run() async throws {
            let (url, credentials) = try URLArgument.parseFetching(url)
            if head { return try await printFields(url, headers: try originHeaders.originHeaders(extra: credentials)) }
            if let section = try timeSection() {
                let headers = try originHeaders.originHeaders(extra: credentials)
                guard headers.rules.isEmpty, headers.cookies.isEmpty else {
                    throw CommandFailure(
                        "--section reads the file as a player does, with no -H, -b or -u: leave them out",
                        status: ExitStatus.usage
                    )
                }
                let path = curl.place(output ?? "-")
                try OutputFile.check(path)
                var cutting = FileSection(url: url, choice: section, output: path)
                cutting.exact = exact
                let (cut, cache, transfer, verbose) = (cutting, cache, transfer, curl.verbose)
                return try await transfer.withinMaxTime {
                    try await cut.run(cache: cache, transfer: transfer, verbose: verbose)
                }
            }
            let specifier = try Self.parseRange(range)
            let path = curl.place(remoteName ? try Self.remoteName(of: url) : output ?? "-")
            if output == nil, !remoteName, isatty(STDOUT_FILENO) == 1 {
                // curl exits 23 too, for the same refusal.
                throw CommandFailure(
                    "not writing binary data to a terminal; use -o FILE, or -o - to write it here anyway",
                    status: ExitStatus.writeError
                )
            }
            try OutputFile.check(path)
            var download = Download(
                url: url,
                headers: try originHeaders.originHeaders(extra: credentials),
                range: specifier,
                output: path,
                progress: path == "-" || transfer.silent ? nil : Progress.make(label: "get", forced: transfer.progress)
            )
            if curl.verbose {
                // Never a credential: the URL without its user information, no header values.
                Terminal.printError("> GET \(Credentials.redacted(url.absoluteString))")
                if let range { Terminal.printError("> Range: bytes=\(range)") }
                download.described = { info in
                    for line in Self.fieldLines(info) { Terminal.printError("< " + line) }
                }
            }
            let (cache, transfer, job) = (cache, transfer, download)
            try await transfer.withinMaxTime { try await job.run(cache: cache, transfer: transfer) }
        }

        /// The file `-O` writes: the URL's last path segment as written, in the current folder.
        /// `--section`, parsed: a time range or a chapter's title.
        func timeSection() throws -> SectionOption.Choice? {
            try SectionOption.choice(section)
        }

        static func remoteName(of url: URL) throws -> String {
            guard let name = RemoteFileName.of(url) else {
                throw OutputError(
                    "\(Credentials.redacted(url.absoluteString)) names no file for -O; give one with -o FILE"
                )
            }
            return name
        }

        /// `-I`: what the cache knows of `url`'s response (asking the origin for two bytes when it
        /// knows nothing, or its copy is due for revalidation), as header lines.
        private func printFields(_ url: URL, headers: OriginHeaders) async throws {
            try await cache.withEngine(transfer: transfer) { engine in
                let info = try await engine.open(url, originHeaders: headers).info()
                // Lines end in CRLF as HTTP writes them; the fields are shown as `print` shows text.
                for line in Self.fieldLines(info) + [""] { print(line, terminator: "\r\n") }
            }
        }

        /// What the cache knows of a response, as a status line and header lines.
        static func fieldLines(_ info: ContentInfo) -> [String] {
            var lines = ["HTTP/1.1 200 OK"]
            var named: Set<String> = []
            func add(_ name: String, _ value: String?) {
                guard let value, named.insert(name.lowercased()).inserted else { return }
                lines.append("\(name): \(value)")
            }
            add("Content-Length", info.length.map(String.init))
            add("Content-Type", info.contentType)
            add("ETag", info.etag)
            add("Last-Modified", info.lastModified)
            add("Accept-Ranges", info.byteRangeAccess ? "bytes" : "none")
            for field in info.stored.originFields { add(field.name, field.value) }
            return lines
        }

        /// Parses `A-B` (inclusive), `A-` or `-N` (the last N bytes); `nil`: the whole resource.
        static func parseRange(_ text: String?) throws -> RangeSpecifier {
            guard let text else { return .from(first: 0, last: nil) }
            guard let specifiers = RangeSpecifier.parse("bytes=" + text), specifiers.count == 1,
                specifiers[0] != .suffix(count: 0)
            else {
                throw ValidationError("invalid --range '\(text)': expected A-B, A- or -N with 0 ≤ A ≤ B")
            }
            return specifiers[0]
        }
    }
}
