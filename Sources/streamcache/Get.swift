import ArgumentParser
import Foundation
import StreamCache

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

        @OptionGroup var transfer: TransferOptions

        @OptionGroup var originHeaders: OriginHeaderOptions

        @OptionGroup var cache: CacheOptions

        func validate() throws {
            _ = try Self.parseRange(range)
            if remoteName && output != nil { throw ValidationError("give either -o FILE or -O, not both") }
        }

        func run() async throws {
            let (url, credentials) = try URLArgument.parseFetching(url)
            let specifier = try Self.parseRange(range)
            let path = remoteName ? try Self.remoteName(of: url) : output ?? "-"
            if output == nil, !remoteName, isatty(STDOUT_FILENO) == 1 {
                // curl exits 23 too, for the same refusal.
                throw CommandFailure(
                    "not writing binary data to a terminal; use -o FILE, or -o - to write it here anyway",
                    status: ExitStatus.writeError
                )
            }
            try OutputFile.check(path)
            try await Download(
                url: url,
                headers: try originHeaders.fields() + credentials,
                range: specifier,
                output: path,
                progress: path == "-" ? nil : Progress.make(label: "get", forced: transfer.progress)
            ).run(cache: cache, timeout: transfer.timeoutDuration)
        }

        /// The file `-O` writes: the URL's last path segment as written, in the current folder.
        static func remoteName(of url: URL) throws -> String {
            guard let name = RemoteFileName.of(url) else {
                throw OutputError(
                    "\(Credentials.redacted(url.absoluteString)) names no file for -O; give one with -o FILE"
                )
            }
            return name
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
