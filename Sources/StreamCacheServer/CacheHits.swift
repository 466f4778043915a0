import Foundation
import NIOCore
import NIOHTTP1
import StreamCache

/// Which requests the proxy answers straight from a cache file on the event loop, and the
/// answers, encoded (``ProxyConnectionHandler`` sends them).
///
/// Only what the responder would answer the same way from the cache without waiting: a `GET`
/// without a body that admission served as a player's (``RequestAdmission``), of `/<URL>` (not
/// a manifest, which is rewritten), whose range is all written in the cache file of a version
/// the origin confirmed within the revalidation interval: as its open session publishes it, or,
/// when no session of the process has it open, as the index records it
/// (``CacheEngine/sessionlessFile(key:)``). Anything else, including every field the responder would
/// refuse or combine, goes to the responder.
struct CacheHits: CacheHitAnswering {
    let engine: CacheEngine
    /// The fields configured for origin requests: with the player's, what a stored response's
    /// variant is told by.
    let originHeaders: OriginHeaders

    /// Ranges up to this size are read into the buffer that holds the encoded head; larger ones
    /// are sent with `sendfile` from a descriptor of their own (a `FileRegion`).
    static let bufferedLimit: Int64 = 64 * 1024

    /// A response to send from a cache file.
    struct Answer {
        let status: HTTPResponseStatus
        /// The response head encoded (status line, fields, blank line), with room after it for
        /// the body when it is at most ``CacheHits/bufferedLimit`` bytes, read into it in
        /// place.
        var head: ByteBuffer
        let resource: ServableFile
        let range: ByteRange
    }

    /// A request target judged once: a connection asks for the same one again and again. (A
    /// class, so that a range's answer updates it in place rather than copying it back.)
    final class Target {
        let uri: String
        let url: URL
        let key: String
        /// The digest of the values of the parameters the key leaves out
        /// (``CacheConfiguration/tokenDigest(_:)``).
        let tokenDigest: String?
        /// Whether the path names a playlist, judged when a generic content type (or none)
        /// first leaves it to the path.
        private var pathVerdict: Bool?
        /// The last content type judged, and what it says (`nil`: generic, the path decides).
        private var typeCheck: (contentType: String, namesManifest: Bool?)?
        /// What the last answer said of the resource, kept while it holds, and its fields
        /// encoded.
        private var representation: (judged: ResponseDecision.Representation, fields: ByteBuffer)?

        init(uri: String, url: URL, key: String, tokenDigest: String?) {
            self.uri = uri
            self.url = url
            self.key = key
            self.tokenDigest = tokenDigest
        }

        /// Whether the resource is a manifest (``ManifestFormats``), which the responder rewrites.
        func isManifest(_ contentType: String?) -> Bool {
            guard let contentType else { return pathNamesManifest() }
            if typeCheck?.contentType != contentType {
                typeCheck = (contentType, ManifestFormats.typeNames(contentType))
            }
            return typeCheck?.namesManifest ?? pathNamesManifest()
        }

        /// What an answer about `info` says at `now`, judged again only when the info or the
        /// age differs from the last answer's.
        func representation(
            of info: ContentInfo,
            at now: Date,
            shared: Bool
        ) -> (
            judged: ResponseDecision.Representation, fields: ByteBuffer
        ) {
            if let representation, representation.judged.holds(info, at: now) { return representation }
            let judged = ResponseDecision.Representation(info, at: now, shared: shared)
            var fields = ByteBuffer()
            for field in judged.fields { fields.writeField(field) }
            representation = (judged, fields)
            return (judged, fields)
        }

        private func pathNamesManifest() -> Bool {
            if let pathVerdict { return pathVerdict }
            let verdict = ManifestFormats.pathNames(url)
            pathVerdict = verdict
            return verdict
        }
    }

    /// The target `uri` names, if it is an origin URL the engine fetches and judging it does not
    /// wait (a name to look up is the responder's, in a task).
    func target(_ uri: String) -> Target? {
        guard uri.hasPrefix("/"), !uri.hasPrefix(OfflineFiles.prefix),
            let target = try? ProxyTarget(requestTarget: uri),
            (try? CacheEngine.validateWithoutWaiting(target.url, configuration: engine.configuration)) == true
        else { return nil }
        return Target(
            uri: uri,
            url: target.url,
            key: engine.configuration.cacheKey(target.url),
            tokenDigest: engine.configuration.tokenDigest(target.url)
        )
    }

    /// The answer to `request` from a cache file, or `nil` for the responder to answer it.
    ///
    /// - Parameter target: the judged target of the connection's last request, replaced when
    ///   `request` names another.
    func answer(
        _ request: ProxyRequest,
        framing: ResponseFraming,
        target: inout Target?,
        allocator: ByteBufferAllocator
    ) -> Answer? {
        let head = request.head
        let fields = request.fields
        guard head.method == .GET, request.verdict == .serve, !fields.isTheResponders else { return nil }
        // A shared cache answers no request with credentials from what it stored (RFC 9111 §3.5).
        if engine.configuration.isShared, head.headers.contains(name: "authorization") { return nil }
        if target?.uri != head.uri { target = self.target(head.uri) }
        guard let judged = target else { return nil }
        let key = judged.key
        // Published by this process's open session, else read from the index and the file; not
        // for a URL that names a playlist, which the responder rewrites (no index read, no open).
        guard
            let resource = engine.publishedFile(key: key)
                ?? (judged.isManifest(nil) ? nil : engine.sessionlessFile(key: key)),
            let length = resource.info.length,
            length > 0, !judged.isManifest(resource.info.contentType),
            // Bytes that came with other values of the parameters the key leaves out are proven
            // by a read first.
            resource.tokenDigest == judged.tokenDigest,
            // Coded content, for a server whose engine does not pass it on: the read refuses it.
            engine.configuration.keepsEncodedContent || resource.info.contentCoding == nil
        else { return nil }
        if resource.info.stored.variesOnRequestFields {
            // The variant of other values of the fields it varies on is not this request's
            // (RFC 9111 §4.1): the responder asks the origin.
            let sent = ForwardedFields.adding(
                ForwardedFields.of(head.headers.map { ($0.name, $0.value) }),
                to: originHeaders
            )
            guard resource.info.stored.matches(sent.fields(for: judged.url, firstURL: judged.url)) else { return nil }
        }

        let representation = judged.representation(
            of: resource.info,
            at: Date(),
            shared: engine.configuration.isShared
        )
        let decision = ResponseDecision(representation.judged, range: fields.range, ifRange: fields.ifRange)
        guard case .send(let partial, let range?) = decision.outcome, resource.covers(range) else { return nil }
        let body = range.count <= Self.bufferedLimit ? Int(range.count) : 0
        // The status line, the range's fields, the sandbox fields and `Connection` fit in 240
        // bytes (the buffer grows if they do not), and the body follows them.
        var encoded = allocator.buffer(capacity: representation.fields.readableBytes + 240 + body)
        encoded.writeStaticString(framing.statusLineStart)
        encoded.writeStaticString(partial ? "206 Partial Content\r\n" : "200 OK\r\n")
        // The representation's fields as the last answer encoded them (a send carries them all).
        encoded.writeImmutableBuffer(representation.fields)
        for field in decision.bytesFields { encoded.writeField(field) }
        framing.writeFields(into: &encoded)
        encoded.writeStaticString("\r\n")
        return Answer(
            status: partial ? .partialContent : .ok,
            head: encoded,
            resource: resource,
            range: range
        )
    }
}

/// What answers requests from cache files on the event loop, for ``ProxyConnectionHandler``:
/// ``CacheHits`` over the engine, or anything that can say no (a connection runs without an
/// engine in its tests).
protocol CacheHitAnswering: Sendable {
    /// The answer to `request` from a cache file, framed as `framing` says, or `nil` for the
    /// responder to answer it; `target` is the connection's last judged target, kept between
    /// its requests.
    func answer(
        _ request: ProxyRequest,
        framing: ResponseFraming,
        target: inout CacheHits.Target?,
        allocator: ByteBufferAllocator
    ) -> CacheHits.Answer?
}

extension ByteBuffer {
    /// Writes `Name: value` and the line's end.
    fileprivate mutating func writeField(_ field: HeaderField) {
        writeString(field.name)
        writeStaticString(": ")
        writeString(field.value)
        writeStaticString("\r\n")
    }
}
