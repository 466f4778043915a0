import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import StreamCache

/// Serves the requests of one connection to the ``TestOrigin``, one after another.
struct OriginConnection {
    let connection: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>
    let content: OriginContent
    let state: OriginState
    let recorder: StatisticsRecorder

    typealias Outbound = NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>

    func run() async {
        try? await connection.executeThenClose { inbound, outbound in
            var head: HTTPRequestHead?
            var closing = false
            for try await part in inbound where !closing {
                switch part {
                case .head(let requestHead):
                    head = requestHead
                case .body:
                    continue
                case .end:
                    guard let requestHead = head else { return }
                    head = nil
                    if try await !respond(to: requestHead, outbound: outbound) {
                        // No more requests on this connection: the write side shuts after the
                        // last byte, and the connection closes once the client has closed.
                        outbound.finish()
                        closing = true
                    }
                }
            }
        }
    }

    /// Answers one request. Returns whether the connection may carry another.
    private func respond(to request: HTTPRequestHead, outbound: Outbound) async throws -> Bool {
        let conditions = state.conditions
        if conditions.latency > .zero { try await Task.sleep(for: conditions.latency) }
        let path = String(request.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
        var keepAlive = request.isKeepAlive

        if path == "/_origin/stats" {
            let json = try JSONEncoder().encode(await recorder.settled(within: .milliseconds(250)))
            try await sendSimple(
                status: .ok,
                type: "application/json",
                body: json,
                request: request,
                outbound: outbound
            )
            return keepAlive
        }
        recorder.began()
        defer { recorder.ended() }
        guard request.method == .GET || request.method == .HEAD else {
            try await sendSimple(
                status: .methodNotAllowed,
                type: "text/plain",
                body: Data("method not allowed\n".utf8),
                request: request,
                outbound: outbound
            )
            return keepAlive
        }
        if let code = conditions.faults.lazy.compactMap({ if case .status(let code) = $0 { code } else { nil } }).first
        {
            try await sendSimple(
                status: HTTPResponseStatus(statusCode: code),
                type: "text/plain",
                body: Data("fault \(code)\n".utf8),
                request: request,
                outbound: outbound
            )
            return keepAlive
        }
        if let redirect = content.redirect(at: path) {
            var headers = HTTPHeaders()
            headers.add(name: "Location", value: redirect.location)
            headers.add(name: "Content-Length", value: "0")
            try await outbound.write(
                .head(
                    HTTPResponseHead(
                        version: request.version,
                        status: HTTPResponseStatus(statusCode: redirect.status),
                        headers: headers
                    )
                )
            )
            try await outbound.write(.end(nil))
            record(request, path: path, status: redirect.status, bytes: 0)
            return keepAlive
        }
        guard let resource = content.resource(at: path) else {
            try await sendSimple(
                status: .notFound,
                type: "text/plain",
                body: Data("not found\n".utf8),
                request: request,
                outbound: outbound
            )
            return keepAlive
        }

        let flakyAttempt = conditions.faults.contains(.flaky) ? state.countRequest(path) : 0
        if flakyAttempt == 1 {
            try await sendSimple(
                status: .serviceUnavailable,
                type: "text/plain",
                body: Data("busy, try again\n".utf8),
                request: request,
                outbound: outbound,
                extraHeaders: [("Retry-After", "0")]
            )
            return keepAlive
        }

        let withValidators = !conditions.faults.contains(.noValidators)
        var etag = resource.etag
        let changingOnly = conditions.faults.contains(.changingETagOnly)
        if conditions.faults.contains(.changingETag) || changingOnly {
            etag = "\"\(etag.dropFirst().dropLast())-c\(state.nextETagSuffix())\""
        }
        let lastModified = HTTPDate.format(resource.lastModified)

        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: resource.contentType)
        headers.add(name: "Accept-Ranges", value: "bytes")
        if conditions.faults.contains(.gzipEncoding) {
            // As an origin that compresses whatever it sends, whatever the client accepts.
            headers.add(name: "Content-Encoding", value: "gzip")
        }
        if withValidators {
            headers.add(name: "ETag", value: etag)
            if !changingOnly { headers.add(name: "Last-Modified", value: lastModified) }
        }

        if withValidators, Self.notModified(request.headers, etag: etag, lastModified: lastModified) {
            try await outbound.write(
                .head(HTTPResponseHead(version: request.version, status: .notModified, headers: headers))
            )
            try await outbound.write(.end(nil))
            record(request, path: path, status: 304, bytes: 0)
            return keepAlive
        }

        var status = HTTPResponseStatus.ok
        var body = ByteRange(0, resource.length)
        var announced = body
        if let value = request.headers.first(name: "Range"), !conditions.faults.contains(.ignoreRange),
            let specifiers = RangeSpecifier.parse(value), specifiers.count == 1,
            Self.ifRangeMatches(
                request.headers,
                etag: withValidators ? etag : nil,
                lastModified: withValidators && !changingOnly ? lastModified : nil
            )
        {
            guard let range = specifiers[0].resolve(length: resource.length) else {
                headers.add(name: "Content-Range", value: "bytes */\(resource.length)")
                headers.add(name: "Content-Length", value: "0")
                try await outbound.write(
                    .head(HTTPResponseHead(version: request.version, status: .rangeNotSatisfiable, headers: headers))
                )
                try await outbound.write(.end(nil))
                record(request, path: path, status: 416, bytes: 0)
                return keepAlive
            }
            status = .partialContent
            body = range
            announced = range
            if conditions.faults.contains(.wrongRangeStart), range.count > 1 {
                body = ByteRange(range.lowerBound + 1, range.upperBound)
                announced = body
            }
            headers.add(
                name: "Content-Range",
                value: "bytes \(announced.lowerBound)-\(announced.upperBound - 1)/\(resource.length)"
            )
        }
        if !conditions.faults.contains(.noLength) { headers.add(name: "Content-Length", value: "\(announced.count)") }
        try await outbound.write(.head(HTTPResponseHead(version: request.version, status: status, headers: headers)))
        if request.method == .HEAD {
            try await outbound.write(.end(nil))
            record(request, path: path, status: Int(status.code), bytes: 0)
            return keepAlive
        }

        var cutAfter: Int64?
        var reset = false
        for fault in conditions.faults {
            switch fault {
            case .shortBody: cutAfter = min(cutAfter ?? Int64.max, body.count / 2)
            case .resetAfter(let count):
                cutAfter = min(cutAfter ?? Int64.max, Int64(count))
                reset = true
            default: break
            }
        }
        if flakyAttempt == 2 {
            cutAfter = min(cutAfter ?? Int64.max, body.count / 2)
            reset = true
        }
        let sendEnd = cutAfter.map { min(body.upperBound, body.lowerBound + $0) } ?? body.upperBound
        let sent = try await sendBody(
            resource,
            range: ByteRange(body.lowerBound, sendEnd),
            path: path,
            rate: conditions.bytesPerSecond,
            outbound: outbound
        )
        record(request, path: path, status: Int(status.code), bytes: sent)
        if sendEnd < body.upperBound {
            if reset {
                try? await (connection.channel as? SocketOptionProvider)?.setSoLinger(linger(l_onoff: 1, l_linger: 0))
                    .get()
            }
            try? await connection.channel.close()
            keepAlive = false
            return false
        }
        try await outbound.write(.end(nil))
        return keepAlive
    }

    /// Sends bytes `range` of `resource`, paced to `rate` bytes per second if given.
    private func sendBody(
        _ resource: OriginResource,
        range: ByteRange,
        path: String,
        rate: Int?,
        outbound: Outbound
    ) async throws -> Int64 {
        let reader = try resource.reader()
        // About 50 chunks a second, so a slow origin trickles as a real one does.
        let chunkSize = rate.map { max(1, min(64 << 10, $0 / 50)) } ?? (256 << 10)
        let clock = ContinuousClock()
        let start = clock.now
        var offset = range.lowerBound
        while offset < range.upperBound {
            let count = Int(min(Int64(chunkSize), range.upperBound - offset))
            var buffer = connection.channel.allocator.buffer(capacity: count)
            let got = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { pointer in
                reader.read(at: offset, count: count, into: UnsafeMutableRawBufferPointer(rebasing: pointer[..<count]))
            }
            guard got > 0 else { break }
            try await outbound.write(.body(.byteBuffer(buffer)))
            recorder.sent(path: path, range: ByteRange(offset, offset + Int64(got)))
            offset += Int64(got)
            if let rate {
                let due = start + .seconds(Double(offset - range.lowerBound) / Double(rate))
                if due > clock.now { try await Task.sleep(until: due, clock: clock) }
            }
        }
        return offset - range.lowerBound
    }

    private func sendSimple(
        status: HTTPResponseStatus,
        type: String,
        body: Data,
        request: HTTPRequestHead,
        outbound: Outbound,
        extraHeaders: [(String, String)] = []
    ) async throws {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: type)
        for (name, value) in extraHeaders { headers.add(name: name, value: value) }
        headers.add(name: "Content-Length", value: "\(body.count)")
        try await outbound.write(.head(HTTPResponseHead(version: request.version, status: status, headers: headers)))
        if request.method != .HEAD { try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: body)))) }
        try await outbound.write(.end(nil))
        let path = String(request.uri.split(separator: "?").first ?? "")
        if path != "/_origin/stats" { record(request, path: path, status: Int(status.code), bytes: 0) }
    }

    private func record(_ request: HTTPRequestHead, path: String, status: Int, bytes: Int64) {
        recorder.finished(
            .init(
                path: path,
                range: request.headers.first(name: "Range"),
                status: status,
                bodyBytes: bytes,
                headers: request.headers.map { "\($0.name): \($0.value)" }
            )
        )
    }

    static func notModified(_ headers: HTTPHeaders, etag: String, lastModified: String) -> Bool {
        if let match = headers.first(name: "If-None-Match") {
            return match == "*"
                || match.split(separator: ",").contains { Self.weakStrip($0) == Self.weakStrip(Substring(etag)) }
        }
        if let since = headers.first(name: "If-Modified-Since") { return since == lastModified }
        return false
    }

    /// Whether `If-Range` (if any) still names the current version.
    static func ifRangeMatches(_ headers: HTTPHeaders, etag: String?, lastModified: String?) -> Bool {
        guard let value = headers.first(name: "If-Range") else { return true }
        if value.hasPrefix("\"") { return value == etag }
        return value == lastModified
    }

    private static func weakStrip(_ tag: Substring) -> Substring {
        let trimmed = tag.drop(while: { $0 == " " })
        return trimmed.hasPrefix("W/") ? trimmed.dropFirst(2) : trimmed
    }
}

/// HTTP dates (RFC 9110 IMF-fixdate).
enum HTTPDate {
    static func format(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}
