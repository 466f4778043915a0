import Foundation
import HTTPTypes
import NIOCore
import StreamCache
import StreamCacheOffline

/// Answers `/offline/<id>/<file>` from the offline library: a file of the package from disk,
/// and one not downloaded yet from the cache engine (the origin bytes it will hold), so an
/// asset plays while it downloads and, once complete, with no origin at all.
struct OfflineFiles: Sendable {
    let library: OfflineLibrary
    let engine: CacheEngine

    static let prefix = "/offline/"

    /// The size of each piece of a file read from disk.
    private static let chunkSize = 256 << 10

    func respond(to target: String, exchange: inout Exchange) async throws -> ProxyResponse {
        let relative = target.dropFirst(Self.prefix.count)
        guard !relative.contains("?"), !relative.contains("%"),
            let slash = relative.firstIndex(of: "/")
        else {
            throw ProxyRefusal(.notFound, "no such offline file")
        }
        let id = String(relative[..<slash])
        let path = String(relative[relative.index(after: slash)...])
        guard !path.split(separator: "/").contains(where: { $0 == ".." || $0 == "." }),
            let source = library.source(id: id, path: path)
        else {
            throw ProxyRefusal(.notFound, "no such offline file: \(relative)")
        }
        switch source {
        case .file(let file):
            return try await serveFile(file, exchange: &exchange)
        case .origin(let url, let offset, let length):
            return try await serveFromCache(url, offset: offset, length: length, name: path, exchange: &exchange)
        }
    }

    private func serveFile(_ path: String, exchange: inout Exchange) async throws -> ProxyResponse {
        // Opened from the library folder down, following no link: nothing planted in a package
        // leads out of it.
        let root = library.directory
        guard path.hasPrefix(root + "/") else { throw ProxyRefusal(.notFound, "no such offline file") }
        let descriptor = LocalPath.openBeneath(root, String(path.dropFirst(root.count + 1)))
        guard descriptor >= 0 else { throw ProxyRefusal(.notFound, "no such offline file") }
        var stats = stat()
        guard fstat(descriptor, &stats) == 0 else {
            close(descriptor)
            throw ProxyRefusal(.internalServerError, "cannot read \(path)")
        }
        let file = OpenFile(descriptor: descriptor)
        guard let (status, range, fields) = plan(length: Int64(stats.st_size), name: path, exchange: &exchange) else {
            return exchange.refuseRange(of: Int64(stats.st_size))
        }
        exchange.status = status
        if exchange.request.method == .head { return ProxyResponse(status: status, headers: fields) }
        exchange.cacheBytes = range.count
        exchange.sentBytes = range.count
        return ProxyResponse(
            status: status,
            headers: fields,
            body: .stream(length: Int(range.count)) { writer in
                var offset = range.lowerBound
                while offset < range.upperBound {
                    let count = Int(min(Int64(Self.chunkSize), range.upperBound - offset))
                    var buffer = ByteBufferAllocator().buffer(capacity: count)
                    let read = try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { pointer in
                        let result = pread(file.descriptor, pointer.baseAddress!, count, off_t(offset))
                        guard result > 0 else { throw ProxyRefusal(.internalServerError, "cannot read \(path)") }
                        return result
                    }
                    offset += Int64(read)
                    try await writer.write(buffer)
                }
            }
        )
    }

    private func serveFromCache(
        _ url: URL,
        offset: Int64,
        length: Int64?,
        name: String,
        exchange: inout Exchange
    ) async throws -> ProxyResponse {
        let resource = try await engine.open(url)
        var total = length
        if total == nil {
            total = try await resource.info().length.map { $0 - offset }
        }
        guard let total else { throw ProxyRefusal(.badGateway, "the origin did not say how long \(name) is") }
        guard let (status, range, fields) = plan(length: total, name: name, exchange: &exchange) else {
            return exchange.refuseRange(of: total)
        }
        exchange.status = status
        if exchange.request.method == .head { return ProxyResponse(status: status, headers: fields) }
        let read = try await StartedRead(resource, offset: offset + range.lowerBound, length: range.count)
        let exchange = exchange
        return ProxyResponse(
            status: status,
            headers: fields,
            body: .stream(length: Int(range.count)) { writer in
                var exchange = exchange
                try await read.stream(into: writer, allocator: ByteBufferAllocator(), exchange: &exchange)
            }
        )
    }

    /// The status, range and headers for a file of `length` bytes (see ``ResponseDecision``;
    /// `If-Range` is not honoured: a package file never changes); `nil` for a range past its end.
    private func plan(
        length: Int64,
        name: String,
        exchange: inout Exchange
    ) -> (HTTPResponse.Status, ByteRange, HTTPFields)? {
        let decision = ResponseDecision(
            info: ContentInfo(length: length, contentType: Self.contentType(name)),
            range: exchange.request.headerFields[.range],
            ifRange: nil
        )
        guard case .send(let partial, let range?) = decision.outcome else { return nil }
        return (partial ? .partialContent : .ok, range, decision.httpFields)
    }

    static func contentType(_ name: String) -> String {
        let last = LocalPath.lastComponent(of: name)
        let fileExtension = last.lastIndex(of: ".").map { String(last[last.index(after: $0)...]) } ?? ""
        return switch fileExtension.lowercased() {
        case "m3u8": "application/vnd.apple.mpegurl"
        case "mpd": "application/dash+xml"
        case "ts": "video/mp2t"
        case "mp4", "m4s", "m4v": "video/mp4"
        case "m4a": "audio/mp4"
        case "aac": "audio/aac"
        case "vtt", "webvtt": "text/vtt"
        default: "application/octet-stream"
        }
    }
}

/// A file descriptor closed when the response that reads it is gone.
private final class OpenFile: Sendable {
    let descriptor: Int32

    init(descriptor: Int32) { self.descriptor = descriptor }

    deinit { close(descriptor) }
}
