import ArgumentParser
import Foundation
import StreamCache
import StreamCacheHTTP

extension StreamCacheCommand {
    /// For the benchmarks: how fast an origin client alone drains a body, without the cache.
    struct Drain: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Download a URL with an origin client and discard it (benchmark baseline).",
            shouldDisplay: false
        )

        enum Client: String, ExpressibleByArgument, CaseIterable {
            case asyncHTTPClient = "async-http-client"
            case urlSession = "urlsession"
        }

        @Argument(help: "The http(s) URL to download.")
        var url: String

        @Option(name: .long, help: "The client: async-http-client or urlsession.")
        var client: Client = .asyncHTTPClient

        func run() async throws {
            let url = try URLArgument.parse(url)
            let httpClient = client == .asyncHTTPClient ? HTTPOriginClient() : nil
            let origin: any OriginClient = httpClient ?? URLSessionOriginClient()
            let bytes = try await origin.fetch(OriginRequest(url: url)) { _, body in
                var count: Int64 = 0
                for try await chunk in body { count += Int64(chunk.count) }
                return count
            }
            try await httpClient?.shutdown()
            print(bytes)
        }
    }
}
