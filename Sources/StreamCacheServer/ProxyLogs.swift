import Foundation
import HTTPTypes
import Logging
import StreamCache

/// Where the proxy records its exchanges: an access log and an error log in the W3C Extended Log
/// File Format (each optional), and the logger (failures only, at `notice`).
public struct ProxyLogs: Sendable {
    static let accessFields = [
        "date", "time", "c-ip", "cs-method", "cs-uri", "cs(Range)", "cs(User-Agent)", "sc-status", "sc-bytes",
        "x-cache-bytes", "x-origin-bytes", "time-taken", "x-outcome",
    ]
    static let errorFields = ["date", "time", "c-ip", "cs-method", "cs-uri", "sc-status", "x-reason"]

    let access: W3CLog?
    let errors: W3CLog?
    let logger: Logger
    /// Entries posted from event loops, written by ``writePosted()``.
    private let posted: AsyncStream<LogEntry>
    private let poster: AsyncStream<LogEntry>.Continuation

    /// Opens the log files that are given.
    ///
    /// - Throws: ``ProxyLogError`` if one cannot be opened.
    public init(accessLogPath: String?, errorLogPath: String?, logger: Logger) throws {
        access = try accessLogPath.map { try W3CLog(path: $0, fields: Self.accessFields) }
        errors = try errorLogPath.map { try W3CLog(path: $0, fields: Self.errorFields) }
        self.logger = logger
        (posted, poster) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(100_000))
    }

    /// Whether exchanges that went well are written anywhere (an access log is kept).
    var recordsEveryExchange: Bool { access != nil }

    func record(_ exchange: Exchange) async {
        await record(exchange.logEntry)
    }

    /// Hands `entry` to ``writePosted()``, from code that cannot wait (an event loop).
    func post(_ entry: LogEntry) {
        poster.yield(entry)
    }

    /// Writes the posted entries until ``finishPosting()``.
    func writePosted() async {
        for await entry in posted { await record(entry) }
    }

    /// Ends ``writePosted()`` once the entries posted so far are written.
    func finishPosting() {
        poster.finish()
    }

    func record(_ entry: LogEntry) async {
        guard access != nil || (errors != nil && entry.failure != nil) else {
            if let failure = entry.failure.map(Credentials.redacted) {
                logger.notice("request failed", metadata: ["status": "\(entry.status)", "reason": "\(failure)"])
            }
            return
        }
        let stamp = W3CLog.timestamp(entry.date).split(separator: " ").map(String.init)
        let uri = Credentials.redacted(entry.uri)
        let status = String(entry.status)
        await access?.write([
            stamp[0], stamp[1], entry.clientIP, entry.method, uri, entry.range, entry.userAgent, status,
            String(entry.sentBytes), String(entry.cacheBytes), String(entry.originBytes),
            String(format: "%.3f", entry.seconds), entry.failure == nil ? entry.outcome : "failed",
        ])
        if let failure = entry.failure.map(Credentials.redacted) {
            await errors?.write([stamp[0], stamp[1], entry.clientIP, entry.method, uri, status, failure])
            logger.notice("request failed", metadata: ["status": "\(status)", "reason": "\(failure)"])
        }
    }
}

/// One exchange as the logs write it.
struct LogEntry: Sendable {
    var date: Date
    var clientIP: String?
    var method: String
    /// The request target, as the client sent it.
    var uri: String
    var range: String?
    var userAgent: String?
    var status: Int
    /// Body bytes sent to the client, and of them those that were in the cache when asked for
    /// and those that arrived from the origin while the request waited.
    var sentBytes: Int64
    var cacheBytes: Int64
    var originBytes: Int64
    var seconds: Double
    /// Why the request failed or was refused (the error log's `x-reason`).
    var failure: String?
    /// How a response ended that is no failure of the proxy (`client-went-away`).
    var outcome: String?
}
