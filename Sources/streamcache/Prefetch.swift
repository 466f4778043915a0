import ArgumentParser
import Foundation
import StreamCache
import StreamCacheOffline

extension StreamCacheCommand {
    struct Prefetch: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Cache what a player needs to start each item at once: its first seconds.",
            discussion: """
                For a playlist or MPD: the manifests of the variant a player starts with (the first \
                listed, or the best at or below --max-bitrate) and of its audio, its keys, init sections \
                and the segments that start within the seconds. For an MP4 or M4A: its first bytes, its \
                movie box wherever it is, and the samples of those seconds, from its sample tables. For \
                an MP3: the frames of those seconds, from their headers. Items are fetched in the order \
                given; each prints one line. Once fetched, the first seconds play through 'serve' with \
                the network off.
                """
        )

        @Argument(help: "The http(s) URLs of the items, in the order a player will want them.")
        var urls: [String]

        @Option(name: .long, help: "The seconds of each item to cache (default 5).")
        var seconds: Double = 5

        @Option(name: .long, help: "Start with the best variant at or below this many bits per second, e.g. 2M.")
        var maxBitrate: String?

        @Option(name: .long, help: "Items fetched at once, each on one connection (1 to 64, default 4).")
        var jobs = 4

        @Flag(name: .long, help: "Print one JSON object per item instead of a line.")
        var json = false

        @OptionGroup var originHeaders: OriginHeaderOptions

        @OptionGroup var library: LibraryOptions

        func validate() throws {
            guard seconds > 0, seconds <= PrefetchOptions.maximumSeconds else {
                throw ValidationError("invalid --seconds \(seconds): expected more than 0 and at most 86400")
            }
            guard (1...64).contains(jobs) else { throw ValidationError("invalid --jobs \(jobs): expected 1 to 64") }
            guard urls.count <= PrefetchOptions.maximumItems else {
                throw ValidationError("\(urls.count) URLs: one prefetch takes at most \(PrefetchOptions.maximumItems)")
            }
        }

        func run() async throws {
            var options = PrefetchOptions()
            options.seconds = seconds
            options.jobs = jobs
            if let maxBitrate {
                options.maxBitrate = try OfflineDownload.bitrate(maxBitrate, option: "--max-bitrate")
            }
            var urls: [URL] = []
            var credentials: [HeaderField] = []
            for text in self.urls {
                let (url, extra) = try URLArgument.parseFetching(text)
                urls.append(url)
                credentials += extra
            }
            options.headers = try originHeaders.originHeaders(extra: credentials)
            let offline = library.offlineLibrary
            let json = json
            let failures = Locked<[PrefetchOutcome]>([])
            try await library.cache.withEngine { engine in
                await engine.prefetch(urls, options: options, library: offline) { outcome in
                    if outcome.error != nil { failures.withLock { $0.append(outcome) } }
                    Self.report(outcome, json: json)
                }
            }
            let failed = failures.value
            guard let first = failed.first else { return }
            throw ExitCode(Self.status(of: first.error))
        }

        /// One line for `outcome`: on stdout when it was prefetched, on stderr when not.
        private static func report(_ outcome: PrefetchOutcome, json: Bool) {
            let url = Credentials.redacted(outcome.url.absoluteString)
            if json {
                var object: [String: Any] = [
                    "url": url, "kind": outcome.kind, "reads": outcome.reads, "bytes": outcome.bytes,
                ]
                if let failure = outcome.failure { object["error"] = failure }
                StandardOutput.writeJSONLine(object)
            } else if let failure = outcome.failure {
                Terminal.printError("streamcache: prefetch \(url): \(failure)")
            } else {
                StandardOutput.writeLine(
                    "prefetched \(url): \(outcome.kind), \(ByteCount.format(outcome.bytes)) in \(outcome.reads) reads"
                )
            }
        }

        /// The exit status of an item's failure, as every command gives it (``ExitStatus``).
        private static func status(of error: (any Error)?) -> Int32 {
            switch error {
            case let error as StreamCacheError: ExitStatus.of(error)
            case let error as OfflineError: ExitStatus.of(error)
            default: ExitStatus.failure
            }
        }
    }
}
