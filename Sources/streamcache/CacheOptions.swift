import ArgumentParser
import Foundation
import Logging
import StreamCache
import StreamCacheHTTP

/// Options every cache command shares.
struct CacheOptions: ParsableArguments {
    @Option(
        name: .long,
        help:
            "The cache directory (default: $STREAMCACHE_DIR, else $XDG_CACHE_HOME/streamcache, else ~/.cache/streamcache)."
    )
    var cacheDir: String?

    var directory: CacheDirectory {
        cacheDir.map { CacheDirectory(path: $0) } ?? .default()
    }

    /// The command's logger on stderr: errors only, everything with `STREAMCACHE_DEBUG` set.
    var logger: Logger {
        var logger = Logger(label: "streamcache")
        logger.logLevel = ProcessInfo.processInfo.environment["STREAMCACHE_DEBUG"] == nil ? .error : .debug
        return logger
    }

    /// Runs `body` with an engine on this cache directory, and closes the HTTP client afterwards.
    ///
    /// - Parameters:
    ///   - timeout: how long the origin may take to accept a connection and between bytes.
    ///   - connectTimeout: how long it may take to accept a connection, if not `timeout`.
    ///   - bytesPerSecond: the most the origin's bodies may bring in, all requests together
    ///     (`--limit-rate`).
    ///   - evicts: whether the engine keeps the cache within its stored budget (`rm` does not).
    func withEngine<Result>(
        configure: (inout CacheConfiguration) -> Void = { _ in },
        timeout: Duration? = nil,
        connectTimeout: Duration? = nil,
        bytesPerSecond: Int64? = nil,
        evicts: Bool = true,
        _ body: (CacheEngine) async throws -> Result
    ) async throws -> Result {
        let logger = logger
        try directory.prepare()
        let settings = try CacheSettings.load(from: directory)
        let client = HTTPOriginClient(
            connectTimeout: connectTimeout ?? timeout ?? .seconds(10),
            readTimeout: timeout ?? .seconds(30),
            logger: logger
        )
        var configuration = CacheConfiguration()
        configuration.maxSize = evicts ? settings.effectiveMaxSize : .max
        settings.apply(to: &configuration)
        configure(&configuration)
        do {
            let engine = try CacheEngine(
                directory: directory,
                origin: bytesPerSecond.map { RateLimitedOrigin(client, bytesPerSecond: $0) } ?? client,
                configuration: configuration,
                logger: logger
            )
            if let note = engine.recoveryNote { Warning.print(note) }
            let result: Result
            do {
                result = try await body(engine)
            } catch {
                await engine.shutdown()
                throw error
            }
            await engine.shutdown()
            try? await client.shutdown()
            return result
        } catch {
            try? await client.shutdown()
            throw error
        }
    }
}

/// Sizes as people write them: `1048576`, `512K`, `512M`, `2G`, `1.5G` (powers of 1024).
enum ByteCount {
    static func parse(_ text: String) throws -> Int64 {
        let units: [Character: Double] = [
            "K": 1024, "M": 1024 * 1024, "G": 1024 * 1024 * 1024, "T": 1024 * 1024 * 1024 * 1024,
        ]
        var number = text.trimmingCharacters(in: .whitespaces).uppercased()
        if number.hasSuffix("IB") { number.removeLast(2) } else if number.hasSuffix("B") { number.removeLast() }
        var factor = 1.0
        if let last = number.last, let unit = units[last] {
            factor = unit
            number.removeLast()
        }
        guard let value = Double(number), value > 0, value * factor >= 1, value * factor < 9e18 else {
            throw ValidationError(
                "invalid size '\(text)': expected a positive number of bytes, optionally with K, M, G or T (e.g. 512M)"
            )
        }
        return Int64(value * factor)
    }

    /// Bytes as messages show them (``ByteSize/text(_:)``).
    static func format(_ bytes: Int64) -> String { ByteSize.text(bytes) }
}

/// Parsing an origin URL argument. A URL that cannot be one is a usage error (status 64).
enum URLArgument {
    /// The URL a command is given; credentials in it are refused (the cache would keep them).
    static func parse(_ text: String) throws -> URL {
        try asUsageError {
            let url = try absolute(text)
            try CacheEngine.validate(url)
            return url
        }
    }

    /// What `body` returns; a ``StreamCacheError`` it throws becomes a usage error.
    private static func asUsageError<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as StreamCacheError {
            throw CommandFailure(error.message, status: ExitStatus.usage)
        }
    }

    /// `text` as a URL with a scheme, or one line saying what is missing.
    private static func absolute(_ text: String) throws -> URL {
        guard text.contains("://"), let url = URL(string: text), url.scheme != nil else {
            throw StreamCacheError(
                .invalidURL,
                "not an absolute URL: \(Credentials.redacted(text)) (add http:// or https://)"
            )
        }
        return url
    }

    /// The URL of a command that fetches it, with `user:password@` taken out of it and sent as
    /// `Authorization: Basic` to that origin (as curl does); the cache keeps the URL without them.
    static func parseFetching(_ text: String) throws -> (URL, [HeaderField]) {
        try asUsageError {
            let url = try absolute(text)
            let (plain, authorization) = Credentials.split(url)
            try CacheEngine.validate(plain)
            return (plain, authorization.map { [$0] } ?? [])
        }
    }
}
