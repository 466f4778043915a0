import ArgumentParser
import StreamCache

/// Options of commands that download: progress, a timeout for a silent origin, a rate limit and
/// how often to try, as curl's options of the same names.
struct TransferOptions: ParsableArguments {
    @Flag(name: .long, help: "Show progress on stderr even when it is not a terminal.")
    var progress = false

    @Flag(
        name: [.short, .long, .customShort("q"), .customLong("quiet")],
        help: "No progress or notes on stderr; errors are still said."
    )
    var silent = false

    @Option(name: .long, help: "Seconds to wait for the origin to connect and between bytes (default 10 and 30).")
    var timeout: Double?

    @Option(name: .long, help: "Seconds to wait for the origin to connect, as curl's option (default 10).")
    var connectTimeout: Double?

    @Option(name: .long, help: "Seconds the whole command may take, as curl's option; then it stops with status 28.")
    var maxTime: Double?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Fetch from the origin no faster than this many bytes per second (500k, 2M).",
            valueName: "rate"
        )
    )
    var limitRate: String?

    @Option(
        name: .long,
        help:
            "Try a request that failed (a connection error, a timeout, a 5xx, a 429) this many times again (default 2)."
    )
    var retry: Int?

    func validate() throws {
        for (name, value) in [("--timeout", timeout), ("--connect-timeout", connectTimeout), ("--max-time", maxTime)] {
            if let value, !(value > 0 && value <= 86400) {
                throw ValidationError("invalid \(name) \(value): give seconds above 0, at most 86400 (one day)")
            }
        }
        _ = try bytesPerSecond()
        if let retry, !(0...20).contains(retry) {
            throw ValidationError("invalid --retry \(retry): give 0 to 20")
        }
    }

    var timeoutDuration: Duration? { timeout.map { .milliseconds(Int64($0 * 1000)) } }

    var connectTimeoutDuration: Duration? { (connectTimeout ?? timeout).map { .milliseconds(Int64($0 * 1000)) } }

    /// Runs `body`, stopped with status 28 once `--max-time` has passed, as curl stops.
    func withinMaxTime<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        guard let maxTime else { return try await body() }
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: .milliseconds(Int64(maxTime * 1000)))
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let result = first else {
                throw CommandFailure(
                    "the operation timed out after \(maxTime) s (--max-time)",
                    status: ExitStatus.timeout
                )
            }
            return result
        }
    }

    /// The attempts a request gets: one, and `--retry` more (3 in all by default).
    var attempts: Int? { retry.map { $0 + 1 } }

    /// `--limit-rate` in bytes per second.
    func bytesPerSecond() throws -> Int64? { try TransferRate.option(limitRate) }
}

extension CacheOptions {
    /// Runs `body` with an engine that fetches as `transfer` says: its timeout, its rate limit
    /// and its attempts.
    func withEngine<Result>(
        transfer: TransferOptions,
        _ body: (CacheEngine) async throws -> Result
    ) async throws
        -> Result
    {
        try await withEngine(
            configure: { if let attempts = transfer.attempts { $0.maxAttempts = attempts } },
            timeout: transfer.timeoutDuration,
            connectTimeout: transfer.connectTimeoutDuration,
            bytesPerSecond: try transfer.bytesPerSecond(),
            body
        )
    }
}

/// Rates as curl's `--limit-rate` takes them: bytes per second, `k`, `m` or `g` for 1024,
/// 1024² or 1024³ of them (`500k`, `2M`, `1.5m`).
enum TransferRate {
    /// `--limit-rate TEXT` in bytes per second, `nil` without the option.
    ///
    /// - Throws: `ValidationError` for anything but a rate above 0.
    static func option(_ text: String?) throws -> Int64? {
        guard let text else { return nil }
        guard let rate = bytesPerSecond(text) else {
            throw ValidationError(
                "invalid --limit-rate '\(text.prefix(40))': expected bytes per second above 0, such as 500k or 2M"
            )
        }
        return rate
    }

    static func bytesPerSecond(_ text: String) -> Int64? {
        var number = Substring(text)
        var factor = 1.0
        if let last = number.last,
            let unit = ["k": 1024.0, "m": 1_048_576, "g": 1_073_741_824][Character(last.lowercased())]
        {
            factor = unit
            number = number.dropLast()
        }
        guard let value = Double(number), value.isFinite, value * factor >= 1, value * factor < 1e15 else {
            return nil
        }
        return Int64(value * factor)
    }
}
