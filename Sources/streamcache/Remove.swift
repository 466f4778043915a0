import ArgumentParser
import Foundation
import StreamCache

extension StreamCacheCommand {
    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rm",
            abstract: "Remove resources from the cache."
        )

        @Argument(
            help:
                "URLs of the resources to remove; an HLS playlist goes with what it lists that no other cached playlist lists."
        )
        var urls: [String] = []

        @Flag(name: .long, help: "Remove every resource.")
        var all = false

        @Option(name: .long, help: "Remove every resource whose URL starts with this.")
        var prefix: String?

        @OptionGroup var cache: CacheOptions

        func validate() throws {
            let ways = [!urls.isEmpty, all, prefix != nil].filter { $0 }.count
            if ways == 1 { return }
            throw ValidationError(
                ways == 0 ? "give the URLs to remove, --prefix URL or --all" : "give one of URLs, --prefix or --all"
            )
        }

        func run() async throws {
            try await cache.withEngine(evicts: false) { engine in
                if all {
                    let count = try await engine.removeAll()
                    print("removed \(count) resource(s)")
                    return
                }
                if let prefix {
                    guard !prefix.isEmpty else { throw ValidationError("--prefix needs the start of a URL") }
                    let keys = try await engine.index.allResources().filter { $0.0.url.hasPrefix(prefix) }.map(\.0.key)
                    let count = try await engine.remove(keys: Set(keys))
                    print("removed \(count) resource(s)")
                    return
                }
                var missing: [String] = []
                for text in urls {
                    let url = try URLArgument.parse(text)
                    guard ListingGroups.isPlaylist(url.absoluteString) else {
                        if try await engine.remove(url) { print("removed \(text)") } else { missing.append(text) }
                        continue
                    }
                    let key = engine.configuration.cacheKey(url)
                    let removal = StreamRemoval(
                        try await engine.index.allResources(),
                        directory: cache.directory,
                        configuration: engine.configuration
                    )
                    let count = try await engine.remove(keys: removal.keys(removedWith: key))
                    guard count > 0 else {
                        missing.append(text)
                        continue
                    }
                    print("removed \(text)" + (count > 1 ? " and \(count - 1) file(s) it lists" : ""))
                }
                if !missing.isEmpty {
                    throw StreamCacheError(.invalidURL, "not in the cache: \(missing.joined(separator: " "))")
                }
            }
        }
    }
}
