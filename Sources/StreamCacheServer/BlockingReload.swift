import Foundation
import HTTPTypes
import NIOCore
import StreamCache

/// A low-latency HLS playlist request with delivery directives (`_HLS_msn`, `_HLS_part`,
/// `_HLS_skip`; RFC 8216bis §6.2.5): the origin holds it until the segment or part it names
/// exists. Each answers a question of its moment once, so it is relayed (``RelayedRequest``),
/// never stored (otherwise one cached file per reload), and rewritten to point at the proxy;
/// it goes over connections of its own (``ProxyConfiguration/reloadOrigin``), so held reloads
/// never take the connections segments need.
struct BlockingReload {
    let relay: RelayedRequest
    let pathPrefix: String

    /// Whether `url` asks for a blocking reload or a playlist delta.
    static func isBlocking(_ url: URL) -> Bool {
        guard let query = url.query(percentEncoded: true) else { return false }
        return query.split(separator: "&").contains { item in
            let name = item.split(separator: "=", maxSplits: 1).first ?? ""
            return name == "_HLS_msn" || name == "_HLS_part" || name == "_HLS_skip"
        }
    }

    /// The origin's answer to `request` for `url`, a playlist of `format`, rewritten.
    func answer(
        _ request: HTTPRequest,
        url: URL,
        format: any ManifestFormat.Type,
        exchange: inout Exchange
    ) async throws -> ProxyResponse {
        var response = try await relay.answer(request, to: url, body: nil, exchange: &exchange)
        exchange.outcome = "reload"
        guard (200..<300).contains(response.status.code), case .bytes(let buffer) = response.body else {
            return response
        }
        let original = Array(buffer.readableBytesView)
        guard original.count <= format.maximumSize else {
            throw ProxyRefusal(.badGateway, "the \(format.documentName) is larger than \(format.maximumSize >> 20) MiB")
        }
        let text: String?
        let pathPrefix = pathPrefix
        do {
            text = try await ManifestWork.run(size: original.count) {
                try format.read(original, from: url, pathPrefix: pathPrefix).rewritten
            }
        } catch {
            throw ProxyRefusal(.badGateway, "invalid \(format.documentName) from the origin: \(error)")
        }
        guard let text else { return response }
        let rewritten = ByteBuffer(string: text)
        response.body = request.method == .head ? .empty : .bytes(rewritten)
        response.headers[.contentType] = format.rewrittenType
        response.headers[.contentLength] = String(rewritten.readableBytes)
        // The bytes are the proxy's, not the origin's: its validators do not describe them.
        response.headers[.eTag] = nil
        response.headers[.lastModified] = nil
        exchange.sentBytes = Int64(request.method == .head ? 0 : rewritten.readableBytes)
        return response
    }
}
