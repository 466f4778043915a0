import Foundation
import HTTPTypes
import NIOCore
import StreamCache

/// A player's request of a method the cache does not answer itself (a licence server's `POST`, a
/// `PUT`, a `DELETE`), relayed to its origin with its body, and the origin's answer relayed back
/// as it came: status, end-to-end fields (`Set-Cookie` too: the answer is this player's) and
/// body. Nothing of it is stored; an answer that is not an error marks what the cache holds of
/// the URL stale (``CacheEngine/relay(_:_:)``).
struct RelayedRequest {
    let engine: CacheEngine
    let originHeaders: OriginHeaders
    /// The client to send it with, if not the engine's.
    var client: (any OriginClient)?

    /// The most of an answer that is relayed: a licence, a form's answer, not a download.
    static let answerLimit = 16 << 20

    /// Whether the proxy relays `method`: any but `CONNECT` (a tunnel) and `TRACE` (its answer
    /// would echo the player's fields, cookies included, back to a web page).
    static func relays(_ method: HTTPRequest.Method) -> Bool {
        method != .connect && method != .trace
    }

    /// The origin's answer to `request`, sent to `url` with `body`.
    func answer(
        _ request: HTTPRequest,
        to url: URL,
        body: RequestBody?,
        exchange: inout Exchange
    ) async throws -> ProxyResponse {
        var sent: [UInt8]?
        if let body {
            guard let bytes = await body.bytes() else {
                throw ProxyRefusal(.contentTooLarge, "a relayed request carries at most \(RequestBody.limit >> 20) MiB")
            }
            sent = bytes
        }
        var fields = ForwardedFields.of(request.headerFields.map { ($0.name.rawName, $0.value) })
        if let type = request.headerFields[.contentType] { fields.append(HeaderField("Content-Type", type)) }
        var origin = OriginRequest(
            url: url,
            headers: ForwardedFields.adding(fields, to: originHeaders).fields(for: url, firstURL: url)
        )
        // NIO's decoder reads `M-SEARCH` as its `MSEARCH`, a method no server knows.
        origin.method = request.method.rawValue == "MSEARCH" ? "M-SEARCH" : request.method.rawValue
        origin.body = sent
        let (head, answer) = try await engine.relay(origin, through: client) { head, body in
            var bytes: [UInt8] = []
            for try await chunk in body {
                guard bytes.count + chunk.count <= Self.answerLimit else {
                    throw StreamCacheError(
                        .originProtocolViolation,
                        "origin \(url.originName) answered a \(request.method.rawValue) with more than \(Self.answerLimit >> 20) MiB"
                    )
                }
                bytes += chunk
            }
            return (head, bytes)
        }
        let status = HTTPResponse.Status(code: head.status)
        exchange.status = status
        exchange.outcome = "relayed"
        exchange.originBytes += Int64(answer.count)
        exchange.sentBytes = Int64(answer.count)
        var response = ProxyResponse(status: status, headers: Self.endToEnd(head.headers))
        if !answer.isEmpty { response.body = .bytes(ByteBuffer(bytes: answer)) }
        response.headers[.contentLength] = status == .noContent || status == .notModified ? nil : String(answer.count)
        return response
    }

    /// The fields of an answer that go on to the player: all but this hop's (RFC 9110 §7.6.1,
    /// and those `Connection` names) and the framing, which the proxy sets for its own body.
    static func endToEnd(_ fields: [HeaderField]) -> HTTPFields {
        let hop = HeaderField.connectionNames(in: fields)
        let framing: Set<String> = [
            "connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
            "content-length",
        ]
        var relayed = HTTPFields()
        for field in fields {
            let name = field.name.lowercased()
            guard !hop.contains(where: { HeaderField.namesMatch(field.name, $0) }), !framing.contains(name),
                let fieldName = HTTPField.Name(field.name)
            else {
                continue
            }
            relayed.append(HTTPField(name: fieldName, value: field.value))
        }
        return relayed
    }
}
