import ArgumentParser
import Foundation
import StreamCache
import StreamCacheHTTP

extension StreamCacheCommand {
    /// For the benchmarks: how fast the origin client alone drains a body, without the cache.
    struct Drain: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Download a URL with the origin client and discard it (benchmark baseline).",
            shouldDisplay: false
        )

        @Argument(help: "The http(s) URL to download.")
        var url: String

        func run() async throws {
            let url = try URLArgument.parse(url)
            let origin = HTTPOriginClient()
            let bytes: Result<Int64, Error>
            do {
                bytes = .success(
                    try await origin.fetch(OriginRequest(url: url)) { _, body in
                        var count: Int64 = 0
                        for try await chunk in body { count += Int64(chunk.count) }
                        return count
                    }
                )
            } catch {
                bytes = .failure(error)
            }
            // Shut down whether or not the download worked: the client must not outlive it.
            try await origin.shutdown()
            print(try bytes.get())
        }
    }
}
