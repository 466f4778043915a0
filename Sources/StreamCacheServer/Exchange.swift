import Foundation
import HTTPTypes
import NIOCore
import StreamCache

/// One request and what the proxy did with it, for the logs.
struct Exchange: Sendable {
    let request: HTTPRequest
    private let client: SocketAddress?
    let startedAt = ContinuousClock.now
    let date = Date()
    var status: HTTPResponse.Status = .ok
    /// Body bytes sent to the client.
    var sentBytes: Int64 = 0
    /// ...of which were in the cache when asked for.
    var cacheBytes: Int64 = 0
    /// ...of which arrived from the origin while the request waited.
    var originBytes: Int64 = 0
    /// Why the request failed or was refused, one line (the error log's `x-reason`).
    var failure: String?
    /// How the response ended when that is no failure of the proxy: `client-went-away` for a
    /// player that hung up (to seek, as players do).
    var outcome: String?
    /// Whether the response's body writes the log entry once it has ended (a streamed body);
    /// otherwise the responder writes it when the response is made.
    var recordedByBody = false

    init(request: HTTPRequest, context: ProxyRequestContext) {
        self.request = request
        self.client = context.remoteAddress
    }

    /// The client's IP address.
    var clientIP: String? { client?.ipAddress }

    mutating func delivered(_ chunk: CachedChunk) {
        sentBytes += Int64(chunk.count)
        // Every body byte the origin sent for the read, kept or not; the bytes sent from the cache.
        originBytes += chunk.originBytes
        if !chunk.fromOrigin { cacheBytes += Int64(chunk.count) }
    }

    /// `416` for a range that starts at or past the end of a `length`-byte representation.
    mutating func refuseRange(of length: Int64) -> ProxyResponse {
        var response = refuse(ProxyRefusal(.rangeNotSatisfiable, "the range starts past the end"))
        response.headers[.contentRange] = "bytes */\(length)"
        return response
    }

    /// A response that refuses the request with a one-line reason.
    mutating func refuse(_ refusal: ProxyRefusal) -> ProxyResponse {
        status = refusal.status
        failure = refusal.reason
        let body = refusal.reason + "\n"
        sentBytes = request.method == .head ? 0 : Int64(body.utf8.count)
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; charset=utf-8"
        headers[.contentLength] = String(body.utf8.count)
        return ProxyResponse(
            status: refusal.status,
            headers: headers,
            body: request.method == .head ? .empty : .bytes(ByteBuffer(string: body))
        )
    }

    /// A response for a failure of the engine: the origin's error status passed through, `502` for
    /// an origin that cannot be used, `504` for one that timed out, `500` for the cache itself.
    mutating func fail(_ error: StreamCacheError) -> ProxyResponse {
        if let reply = error.reply { return passOn(reply, error: error) }
        let status: HTTPResponse.Status
        switch error.kind {
        case .originStatus:
            status = HTTPResponse.Status(code: error.status ?? 502)
        case .originTimeout, .staleNotAllowed:
            status = .gatewayTimeout
        case .invalidURL, .unsupportedScheme, .invalidRange:
            status = .badRequest
        case .rangeNotSatisfiable:
            status = .rangeNotSatisfiable
        case .diskFull:
            status = HTTPResponse.Status(code: 507, reasonPhrase: "Insufficient Storage")
        case .storage, .index:
            status = .internalServerError
        default:
            status = .badGateway
        }
        return refuse(ProxyRefusal(status, error.message))
    }

    /// The origin's own answer, as it came: status, end-to-end fields, body (RFC 9111: an error
    /// answer reaches the client; it is not stored).
    private mutating func passOn(_ reply: OriginReply, error: StreamCacheError) -> ProxyResponse {
        status = HTTPResponse.Status(code: reply.status)
        failure = error.message
        var headers = HTTPFields()
        for field in reply.fields {
            guard let name = HTTPField.Name(field.name) else { continue }
            headers.append(HTTPField(name: name, value: field.value))
        }
        headers[.contentLength] = String(reply.body.count)
        sentBytes = request.method == .head ? 0 : Int64(reply.body.count)
        originBytes += Int64(reply.body.count)
        return ProxyResponse(
            status: status,
            headers: headers,
            body: request.method == .head ? .empty : .bytes(ByteBuffer(bytes: reply.body))
        )
    }

    /// Notes an error that ended the body after the head went out.
    mutating func note(_ error: Error) {
        if let error = error as? StreamCacheError {
            failure = error.message
        } else {
            // A player that drops its connection (a seek) is normal, not an error.
            outcome = "client-went-away"
        }
    }

    /// The exchange as the logs write it.
    var logEntry: LogEntry {
        LogEntry(
            date: date,
            clientIP: clientIP,
            method: request.method.rawValue,
            uri: request.path ?? "-",
            range: request.headerFields[.range],
            userAgent: request.headerFields[.userAgent],
            status: status.code,
            sentBytes: sentBytes,
            cacheBytes: cacheBytes,
            originBytes: originBytes,
            seconds: seconds,
            failure: failure,
            outcome: outcome
        )
    }

    var seconds: Double { startedAt.duration(to: .now).seconds }
}

extension Duration {
    /// The duration in seconds, as the logs' `time-taken` gives it.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
