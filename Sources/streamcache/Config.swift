import ArgumentParser
import Foundation
import StreamCache

extension StreamCacheCommand {
    struct Config: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show or change the settings stored in the cache directory (budget, caching overrides).",
            discussion: """
                The settings belong to the cache directory: every command on it keeps to them until they are \
                changed. Lowering the budget evicts least recently used resources at once. The overrides go \
                against what origins ask (RFC 9111); use them knowingly.
                """
        )

        @Option(
            name: .long,
            help: "The cache's byte budget, e.g. 512M or 20G (default 2G).",
            transform: ByteCount.parse
        )
        var maxSize: Int64?

        @Option(
            name: .long,
            parsing: .upToNextOption,
            help: "Store responses marked no-store all the same: from these hosts, or * for all; none to stop.",
            transform: HostArgument.parse
        )
        var ignoreNoStore: [String] = []

        @Option(
            name: .long,
            help: "Serve stale copies offline even when they say must-revalidate or no-cache (on|off)."
        )
        var serveStaleAlways: Toggle?

        @Option(
            name: .long,
            parsing: .upToNextOption,
            help: ArgumentHelp(
                "Leave query parameters out of cache keys: NAME,NAME… for every host, HOST=NAME,NAME… for one, "
                    + "signed-cdn for the common signing parameters; none to stop.",
                valueName: "rule"
            ),
            transform: KeyRuleArgument.parse
        )
        var keyIgnoreQuery: [String] = []

        @Option(
            name: .long,
            help: "The share of the budget bytes only a prefetch brought may take, e.g. 10% (default 10%).",
            transform: Self.percent
        )
        var prefetchShare: Double?

        /// `10%` (or `10`) as 0.1; 0% to 100%.
        static func percent(_ text: String) throws -> Double {
            let number = text.hasSuffix("%") ? String(text.dropLast()) : text
            guard let value = Double(number.trimmingCharacters(in: .whitespaces)), (0...100).contains(value) else {
                throw ValidationError("invalid --prefetch-share '\(text)': expected a percentage from 0% to 100%")
            }
            return value / 100
        }

        enum Toggle: String, ExpressibleByArgument {
            case on, off
        }

        @OptionGroup var cache: CacheOptions

        func run() async throws {
            var settings = try CacheSettings.load(from: cache.directory)
            var changed = false
            if !ignoreNoStore.isEmpty {
                settings.ignoreNoStore = ignoreNoStore == ["none"] ? nil : ignoreNoStore
                changed = true
            }
            if !keyIgnoreQuery.isEmpty {
                settings.keyIgnoreQuery = keyIgnoreQuery == ["none"] ? nil : keyIgnoreQuery
                changed = true
            }
            if let serveStaleAlways {
                settings.serveStaleAlways = serveStaleAlways == .on ? true : nil
                changed = true
            }
            if let prefetchShare {
                settings.prefetchShare = prefetchShare
                changed = true
            }
            if let maxSize { settings.maxSize = maxSize }
            if changed || maxSize != nil { try settings.save(to: cache.directory) }
            if !keyIgnoreQuery.isEmpty {
                // The rules reach what was cached before them.
                let rekeyed = try await cache.withEngine { engine in try await engine.applyKeyRules() }
                if rekeyed.moved + rekeyed.merged > 0 {
                    print(
                        "re-keyed \(rekeyed.moved) cached resource(s) under the new rules"
                            + (rekeyed.merged > 0 ? ", \(rekeyed.merged) merged into another of the same key" : "")
                    )
                }
            }
            if let maxSize {
                Warning.checkBudget(maxSize)
                // Enforce the new budget now, and say what it cost.
                let (evicted, cut, freed) = try await cache.withEngine { engine in
                    let before = try await engine.index.allResources()
                    await engine.evictIfNeeded()
                    let after = try await engine.index.allResources()
                    let kept = Dictionary(uniqueKeysWithValues: after.map { ($0.0.id, $0.1.count) })
                    let evicted = before.filter { kept[$0.0.id] == nil }.count
                    let cut = before.filter { record, ranges in kept[record.id].map { $0 < ranges.count } ?? false }
                        .count
                    let freed = before.reduce(Int64(0)) { $0 + $1.1.count - (kept[$1.0.id] ?? 0) }
                    return (evicted, cut, freed)
                }
                if freed > 0 {
                    print(
                        "evicted \(evicted) resource(s)" + (cut > 0 ? ", cut \(cut)" : "")
                            + ": \(ByteCount.format(freed)) freed to fit the new budget"
                    )
                }
            }
            print(
                "max-size \(ByteCount.format(settings.effectiveMaxSize))\(settings.maxSize == nil ? " (default)" : "")"
            )
            print("ignore-no-store \(settings.ignoreNoStore?.joined(separator: " ") ?? "none")")
            print("serve-stale-always \(settings.serveStaleAlways == true ? "on" : "off")")
            print("key-ignore-query \(settings.keyIgnoreQuery?.joined(separator: " ") ?? "none")")
            let share = (settings.prefetchShare ?? CacheConfiguration().prefetchShare) * 100
            print(
                "prefetch-share \(share.formatted(.number.precision(.fractionLength(0...1))))%\(settings.prefetchShare == nil ? " (default)" : "")"
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

/// A `--key-ignore-query` rule, checked as it is read: `none` alone, or a rule
/// (``CacheKeyRules/parseRule(_:)``).
enum KeyRuleArgument {
    static func parse(_ text: String) throws -> String {
        guard text != "none" else { return text }
        do {
            _ = try CacheKeyRules.parseRule(text)
        } catch {
            throw ValidationError(error.reason)
        }
        return text
    }
}

/// A host of `--ignore-no-store`: a host name as URLs carry it, `*` or `none`.
enum HostArgument {
    static func parse(_ text: String) throws -> String {
        guard text == "*" || text == "none" || HostName.isWellFormed(text) else {
            throw ValidationError("'\(text)' is not a host name (ASCII, an international name in its xn-- form)")
        }
        return text
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
