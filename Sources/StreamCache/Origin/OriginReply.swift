/// An origin's answer that is not the resource's bytes (a `404`, a `503`, a `3xx` the engine does
/// not follow, a `201`), kept so a server can pass it on as it came: status, end-to-end fields and
/// the start of its body.
public struct OriginReply: Hashable, Sendable {
    /// The status the origin answered with.
    public var status: Int
    /// Its end-to-end header fields (hop-by-hop ones and framing left out).
    public var fields: [HeaderField]
    /// Its body, at most ``limit`` bytes.
    public var body: [UInt8]

    /// The most of an answer's body kept.
    public static let limit = 64 << 10

    /// Reads at most ``limit`` bytes of `body` (the rest is dropped with the connection).
    static func capture(_ head: OriginResponseHead, _ body: OriginBody) async -> OriginReply {
        var bytes: [UInt8] = []
        do {
            for try await chunk in body {
                bytes += chunk.prefix(limit - bytes.count)
                if bytes.count >= limit { break }
            }
        } catch {
            // A body cut short is passed on as far as it came.
        }
        let fields = StoredFields(fields: head.headers).fields.filter { !$0.hasName("Content-Encoding") }
        return OriginReply(status: head.status, fields: fields, body: bytes)
    }
}

extension OriginAnswer {
    /// The answer with `transform` applied to the content information it carries.
    func mappingInfo(_ transform: (inout ContentInfo) -> Void) -> OriginAnswer {
        switch self {
        case .partial(let range, var info):
            transform(&info)
            return .partial(range: range, info: info)
        case .full(var info):
            transform(&info)
            return .full(info: info)
        case .endOfResource(let total, var info):
            transform(&info)
            return .endOfResource(total: total, info: info)
        case .notModified:
            return self
        }
    }

    /// The answer with the variant of `request` recorded in its stored fields
    /// (``StoredFields/recordingVariant(of:)``).
    func recordingVariant(of request: [HeaderField]) -> OriginAnswer {
        mappingInfo { $0.stored = $0.stored.recordingVariant(of: request) }
    }

    /// Judges `head` as ``judge(_:first:last:)`` does; an error status, or a redirect that was not
    /// followed, gets the origin's answer attached (``StreamCacheError/reply``) so it can be
    /// passed on.
    static func judge(
        _ head: OriginResponseHead,
        body: OriginBody,
        first: Int64,
        last: Int64?,
        keepsCoding: Bool
    ) async throws
        -> OriginAnswer
    {
        do {
            return try judge(head, first: first, last: last, keepsCoding: keepsCoding)
        } catch var error as StreamCacheError where error.kind == .originStatus || error.kind == .tooManyRedirects {
            guard head.status != 416 else { throw error }
            error.reply = await OriginReply.capture(head, body)
            throw error
        }
    }
}
