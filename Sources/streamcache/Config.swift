import ArgumentParser
import Foundation
import StreamCache

extension StreamCacheCommand {
    struct Config: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show or change the settings stored in the cache directory (its byte budget).",
            discussion: """
                The budget belongs to the cache directory: every command on it keeps to it until it is changed. \
                Lowering it evicts least recently used resources at once.
                """
        )

        @Option(
            name: .long,
            help: "The cache's byte budget, e.g. 512M or 20G (default 2G).",
            transform: ByteCount.parse
        )
        var maxSize: Int64?

        @OptionGroup var cache: CacheOptions

        func run() async throws {
            var settings = try CacheSettings.load(from: cache.directory)
            if let maxSize {
                settings.maxSize = maxSize
                try settings.save(to: cache.directory)
                // Enforce the new budget now.
                try await cache.withEngine { engine in await engine.evictIfNeeded() }
            }
            print(
                "max-size \(ByteCount.format(settings.effectiveMaxSize))\(settings.maxSize == nil ? " (default)" : "")"
            )
            print("cache-dir \(cache.directory.path)")
        }
    }

    struct Pin: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Pin resources: pinned resources are never evicted."
        )

        @Argument(help: "URLs of cached resources.")
        var urls: [String]

        @OptionGroup var cache: CacheOptions

        func run() async throws {
            try await Pinning.set(true, urls: urls, cache: cache)
        }
    }

    struct Unpin: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Unpin resources: they may be evicted again, least recently used first."
        )

        @Argument(help: "URLs of cached resources.")
        var urls: [String]

        @OptionGroup var cache: CacheOptions

        func run() async throws {
            try await Pinning.set(false, urls: urls, cache: cache)
        }
    }
}

/// What `pin` and `unpin` share.
enum Pinning {
    static func set(_ pinned: Bool, urls: [String], cache: CacheOptions) async throws {
        guard !urls.isEmpty else { throw ValidationError("give the URLs to \(pinned ? "pin" : "unpin")") }
        try await cache.withEngine(evicts: false) { engine in
            var missing: [String] = []
            for text in urls {
                let url = try URLArgument.parse(text)
                if try await engine.setPinned(pinned, url) {
                    print("\(pinned ? "pinned" : "unpinned") \(text)")
                } else {
                    missing.append(text)
                }
            }
            if !missing.isEmpty {
                throw StreamCacheError(.invalidURL, "not in the cache: \(missing.joined(separator: " "))")
            }
        }
    }
}
