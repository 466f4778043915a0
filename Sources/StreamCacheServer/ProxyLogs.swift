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

    /// Opens the log files that are given.
    ///
    /// - Throws: ``ProxyLogError`` if one cannot be opened.
    public init(accessLogPath: String?, errorLogPath: String?, logger: Logger) throws {
        access = try accessLogPath.map { try W3CLog(path: $0, fields: Self.accessFields) }
        errors = try errorLogPath.map { try W3CLog(path: $0, fields: Self.errorFields) }
        self.logger = logger
    }

    func record(_ exchange: Exchange) async {
        guard access != nil || (errors != nil && exchange.failure != nil) else {
            if let failure = exchange.failure.map(Credentials.redacted) {
                logger.notice(
                    "request failed",
                    metadata: ["status": "\(exchange.status.code)", "reason": "\(failure)"]
                )
            }
            return
        }
        let stamp = W3CLog.timestamp(exchange.date).split(separator: " ").map(String.init)
        let method = exchange.request.method.rawValue
        let uri = Credentials.redacted(exchange.request.head.path ?? "-")
        let status = String(exchange.status.code)
        let headers = exchange.request.headers
        await access?.write([
            stamp[0], stamp[1], exchange.clientIP, method, uri, headers[.range], headers[.userAgent], status,
            String(exchange.sentBytes), String(exchange.cacheBytes), String(exchange.originBytes),
            String(format: "%.3f", exchange.seconds), exchange.failure == nil ? exchange.outcome : "failed",
        ])
        if let failure = exchange.failure.map(Credentials.redacted) {
            await errors?.write([stamp[0], stamp[1], exchange.clientIP, method, uri, status, failure])
            logger.notice("request failed", metadata: ["status": "\(status)", "reason": "\(failure)"])
        }
    }
}
