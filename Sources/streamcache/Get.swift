import ArgumentParser
import Foundation
import StreamCache

extension StreamCacheCommand {
    struct Get: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write bytes of a URL, from the cache where present and from the origin where not.",
            discussion:
                "Exit status 0 on success; on any failure a non-zero status, one line on stderr, and no output file."
        )

        @Argument(help: "The http(s) URL of the resource.")
        var url: String

        @Option(
            name: .long,
            help: "Inclusive byte range A-B, or A- for all from A to the end (default: the whole resource)."
        )
        var range: String?

        @Option(name: [.short, .long], help: "Output file, or - for stdout.")
        var output: String = "-"

        @OptionGroup var originHeaders: OriginHeaderOptions

        @OptionGroup var cache: CacheOptions

        func run() async throws {
            let (url, credentials) = try URLArgument.parseFetching(url)
            let (offset, length) = try Self.parseRange(range)
            let headers = try originHeaders.fields() + credentials
            try await cache.withEngine { engine in
                let stream = try await engine.read(url, offset: offset, length: length, headers: headers)
                let output = try OutputFile(path: output)
                var written: Int64 = 0
                for try await chunk in stream {
                    try output.write(chunk)
                    written += Int64(chunk.count)
                }
                let last = length.map { offset + $0 - 1 }
                if written == 0, length != 0, let total = await stream.currentInfo().length, total > 0 || offset > 0,
                    RangeSpecifier.from(first: offset, last: last).resolve(length: total) == nil
                {
                    throw StreamCacheError(
                        .rangeNotSatisfiable,
                        "range starts at \(offset), past the end of the \(total)-byte resource"
                    )
                }
                try output.commit()
            }
        }

        /// Parses `A-B` (inclusive) or `A-` into an offset and a length (`nil`: to the end).
        static func parseRange(_ text: String?) throws -> (Int64, Int64?) {
            guard let text else { return (0, nil) }
            let invalid = StreamCacheError(
                .invalidRange,
                "invalid --range '\(text)': expected A-B or A- with 0 ≤ A ≤ B"
            )
            let parts = text.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, let first = Int64(parts[0]), first >= 0, parts[0].allSatisfy(\.isNumber) else {
                throw invalid
            }
            if parts[1].isEmpty { return (first, nil) }
            guard parts[1].allSatisfy(\.isNumber), let last = Int64(parts[1]), last >= first, last < Int64.max else {
                throw invalid
            }
            return (first, last - first + 1)
        }
    }
}
