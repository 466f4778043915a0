import ArgumentParser
import Foundation
import StreamCache

extension StreamCacheCommand {
    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rm",
            abstract: "Remove resources from the cache."
        )

        @Argument(help: "URLs of the resources to remove.")
        var urls: [String] = []

        @Flag(name: .long, help: "Remove every resource.")
        var all = false

        @OptionGroup var cache: CacheOptions

        func validate() throws {
            if all == urls.isEmpty { return }
            throw ValidationError(all ? "give either URLs or --all, not both" : "give the URLs to remove, or --all")
        }

        func run() async throws {
            try await cache.withEngine(evicts: false) { engine in
                if all {
                    let count = try await engine.removeAll()
                    print("removed \(count) resource(s)")
                    return
                }
                var missing: [String] = []
                for text in urls {
                    let url = try URLArgument.parse(text)
                    if try await engine.remove(url) { print("removed \(text)") } else { missing.append(text) }
                }
                if !missing.isEmpty {
                    throw StreamCacheError(.invalidURL, "not in the cache: \(missing.joined(separator: " "))")
                }
            }
        }
    }
}
