import ArgumentParser
import Foundation
import Logging
import NIOCore
import StreamCache
import StreamCacheOffline
import StreamCacheHTTP
import StreamCacheServer

extension StreamCacheCommand {
    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the loopback caching proxy: players stream http://HOST:PORT/<origin URL> through the cache.",
            discussion: """
                Prints 'listening on http://HOST:PORT' first, then serves until SIGINT or SIGTERM.
                Example: mpv http://127.0.0.1:PORT/https://example.com/episode.mp3
                """
        )

        @Option(name: .long, help: "The address to bind (anything but loopback exposes the cache).")
        var host: String = "127.0.0.1"

        @Option(
            name: .long,
            help: "The port: the same every launch, so players' saved URLs keep working (0: any free port)."
        )
        var port: Int = Self.defaultPort

        /// `serve`'s port unless told otherwise.
        static let defaultPort = 8954

        @Option(name: .long, help: "Append a W3C extended access log to this file.")
        var accessLog: String?

        @Option(name: .long, help: "Append a W3C extended log of failed and refused requests to this file.")
        var errorLog: String?

        @Option(
            name: [.customShort("H"), .long],
            help: "A header for origin requests, 'Name: value' or 'host=Name: value' for one host (repeatable)."
        )
        var header: [String] = []

        @Option(
            name: [.customShort("b"), .long],
            help: ArgumentHelp(
                "A Netscape cookie file (as curl -b and yt-dlp --cookies read); each cookie goes to the origins it names.",
                valueName: "file"
            )
        )
        var cookie: [String] = []

        /// The cookies of the `-b` files. A `name=value` list names no origin, so `serve` takes
        /// none.
        func cookies() throws -> [OriginCookie] {
            try cookie.flatMap { text in
                guard !text.contains("=") else {
                    throw CommandFailure(
                        "serve takes cookies from a Netscape cookie file (-b FILE), where each names its domain",
                        status: ExitStatus.usage
                    )
                }
                return try OriginHeaderOptions.cookies(text)
            }
        }

        @Option(
            name: .long,
            help:
                "A web page origin allowed to use the proxy, e.g. https://player.example (repeatable; others get 403)."
        )
        var allowOrigin: [String] = []

        @Option(name: .long, help: "Seconds a connection may stay without a complete request before it is closed.")
        var idleTimeout: Double = 30

        @Option(
            name: .long,
            help:
                "Set the cache's byte budget, e.g. 20G; stored in the cache directory for every command (default 2G).",
            transform: ByteCount.parse
        )
        var maxSize: Int64?

        @Option(
            name: .long,
            help: "The offline library served at /offline/ID/ (default: as for packages download)."
        )
        var library: String?

        @Option(
            name: .long,
            help: ArgumentHelp(
                "Fetch from origins no faster than this many bytes per second in all (500k, 2M).",
                valueName: "rate"
            )
        )
        var limitRate: String?

        @Flag(
            name: .long,
            help: """
                Keep a shared cache's duties (RFC 9111): s-maxage, proxy-revalidate, private and \
                Authorization, and CDN-Cache-Control. The default with a --host beyond loopback.
                """
        )
        var shared = false

        @OptionGroup var cache: CacheOptions

        /// Whether the cache serves several users: asked to, or listening beyond loopback.
        var isShared: Bool {
            shared || !["127.0.0.1", "::1", "localhost", "[::1]"].contains(host.lowercased())
        }

        /// `--limit-rate` in bytes per second.
        func bytesPerSecond() throws -> Int64? { try TransferRate.option(limitRate) }

        func validate() throws {
            guard (0...65535).contains(port) else { throw ValidationError("invalid port \(port)") }
            _ = try bytesPerSecond()
            guard idleTimeout > 0, idleTimeout <= 86400 else {
                throw ValidationError("invalid --idle-timeout \(idleTimeout): expected seconds between 0 and 86400")
            }
            for origin in allowOrigin where !WebPagePolicy.isValidOrigin(origin) {
                throw ValidationError("invalid --allow-origin '\(origin)': expected scheme://host[:port]")
            }
            for line in header where OriginHeaders.Rule(parsing: line) == nil {
                throw ValidationError("invalid --header '\(line)': expected 'Name: value' or 'host=Name: value'")
            }
        }

        /// Checks the cache directory's budget every second, and keeps `engine` to it when
        /// `streamcache config --max-size` (or another `serve`) changes it.
        static func followBudget(of directory: CacheDirectory, engine: CacheEngine) -> Task<Void, Never> {
            Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(1))
                    guard let budget = try? CacheSettings.load(from: directory).effectiveMaxSize,
                        budget != engine.budget
                    else { continue }
                    await engine.changeBudget(to: budget)
                    Warning.checkBudget(budget)
                }
            }
        }

        func run() async throws {
            var configuration = ProxyConfiguration()
            configuration.host = host
            configuration.port = port
            configuration.originHeaders = OriginHeaders(
                header.compactMap(OriginHeaders.Rule.init(parsing:)),
                cookies: try cookies()
            )
            configuration.allowedOrigins = allowOrigin
            configuration.offlineLibrary = LibraryOptions.library(library, cache: cache)
            configuration.idleTimeout = .milliseconds(Int64(idleTimeout * 1000))
            // Blocking reloads are held by the origin for up to a few target durations.
            configuration.reloadOrigin = HTTPOriginClient(readTimeout: .seconds(60), logger: cache.logger)
            let logs: ProxyLogs
            do {
                logs = try ProxyLogs(accessLogPath: accessLog, errorLogPath: errorLog, logger: cache.logger)
            } catch {
                throw StreamCacheError(.storage, "\(error)")
            }
            if let maxSize {
                var settings = try CacheSettings.load(from: cache.directory)
                settings.maxSize = maxSize
                try settings.save(to: cache.directory)
                Warning.checkBudget(maxSize)
            }
            DescriptorLimit.raiseToHard()
            // Owned by this command: returns freed memory to the system while serving (glibc keeps
            // it otherwise, so RSS stayed at its peak long after a burst of players).
            let trimmer = Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(10))
                    MemoryTrim.trim()
                }
            }
            defer { trimmer.cancel() }
            let listener = ListenerAuthority.Bound()
            try await cache.withEngine(
                configure: {
                    $0.refuseURL = listener.refusal(of:)
                    $0.refusalWaits = listener.judgingWaits(_:)
                    $0.retriesErrorStatuses = false
                    $0.isShared = isShared
                    // Players decode what the origin coded, as they would from the origin.
                    $0.keepsEncodedContent = true
                },
                bytesPerSecond: try bytesPerSecond()
            ) { engine in
                let budgets = Self.followBudget(of: cache.directory, engine: engine)
                defer { budgets.cancel() }
                let server = ProxyServer(engine: engine, configuration: configuration, logs: logs, logger: cache.logger)
                do {
                    try await server.run { host, port in
                        listener.bind(host: host, port: port)
                        let shown = host.contains(":") ? "[\(host)]" : host
                        StandardOutput.write(Data("listening on http://\(shown):\(port)\n".utf8))
                    }
                } catch let error as StreamCacheError {
                    throw error
                } catch let error as IOError where error.errnoCode == EADDRINUSE {
                    throw StreamCacheError(
                        .storage,
                        "port \(port) is in use on \(host); choose another with --port (0 picks a free one)"
                    )
                } catch let error as IOError where error.errnoCode == EADDRNOTAVAIL {
                    throw CommandFailure(
                        "cannot serve on \(host): not an address of this machine",
                        status: ExitStatus.usage
                    )
                } catch is SocketAddressError.UnknownHost {
                    throw CommandFailure(
                        "cannot serve on \(host): not a name or address of this machine",
                        status: ExitStatus.usage
                    )
                } catch {
                    throw StreamCacheError(.storage, "cannot serve on \(host):\(port): \(error)")
                }
            }
        }
    }
}

/// The number of files the process may have open.
enum DescriptorLimit {
    /// Raises the soft limit to the hard one, as servers do: the common soft limit of 1,024 is
    /// spent by a few hundred players each holding a connection and a cache file.
    static func raiseToHard() {
        var limit = rlimit()
        guard getrlimit(openFiles, &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        var raised = limit
        #if canImport(Darwin)
        // macOS takes at most OPEN_MAX for an unlimited hard limit.
        raised.rlim_cur = min(limit.rlim_max, rlim_t(OPEN_MAX))
        #else
        raised.rlim_cur = limit.rlim_max
        #endif
        _ = setrlimit(openFiles, &raised)
    }

    #if canImport(Glibc)
    private static let openFiles = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    private static let openFiles = RLIMIT_NOFILE
    #endif
}

/// Hands memory the allocator holds but no longer uses back to the system.
enum MemoryTrim {
    static func trim() {
        #if os(Linux)
        _ = glibcMallocTrim(0)
        #endif
    }
}

#if os(Linux)
/// glibc's `malloc_trim` (declared in `malloc.h`, which the Glibc module does not export).
@_silgen_name("malloc_trim")
private func glibcMallocTrim(_ pad: Int) -> Int32
#endif
