import Foundation
import HTTPTypes
import Logging
import NIOCore
import StreamCache

/// Answers the player's requests from the cache engine (`docs/proxy.md`).
///
/// Refuses what admission refused (``RequestAdmission``) and what names neither
/// `/<http(s) URL>` nor an offline package's file, decides the
/// response from `Range`/`If-Range` and what is known of the resource, and streams the bytes as
/// the engine yields them. A request of another method than `GET` and `HEAD` is relayed to the
/// origin (``RelayedRequest``). A client that hangs up ends its read, which stops origin fetches
/// nobody else needs.
struct ProxyResponder: Sendable {
    let engine: CacheEngine
    let originHeaders: OriginHeaders
    let logs: ProxyLogs
    let offline: OfflineFiles
    /// What the paths of this server begin with before `/<URL>`: `/<key>` on a server with an
    /// access key, else nothing. Rewritten playlists point at paths that begin with it.
    let pathPrefix: String
    /// The client blocking reloads go through, if not the engine's (``BlockingReload``).
    var reloadOrigin: (any OriginClient)? = nil
    /// What answers `POST /prefetch`; `nil` where the server takes none.
    var prefetches: PrefetchRequests? = nil

    /// Answers `request`, which admission judged `verdict` (``RequestAdmission``) and which
    /// carries `body` (a method other than `GET` and `HEAD`); its access-log entry is written
    /// once, here or by a streamed body at its end.
    func respond(
        to request: HTTPRequest,
        verdict: ProxyRequest.Verdict,
        body: RequestBody? = nil,
        context: ProxyRequestContext
    ) async -> ProxyResponse {
        var exchange = Exchange(request: request, context: context)
        let response: ProxyResponse
        do {
            response = try await decide(request, verdict: verdict, body: body, exchange: &exchange)
        } catch let refusal as ProxyRefusal {
            response = exchange.refuse(refusal)
        } catch let error as StreamCacheError {
            response = exchange.fail(error)
        } catch {
            // The client went away (its connection closed, which cancelled the answer): nobody
            // reads this one, and the log says so as nginx does, 499.
            exchange.note(error)
            exchange.status = Self.clientClosedRequest
            response = ProxyResponse(status: Self.clientClosedRequest)
        }
        if !exchange.recordedByBody { await logs.record(exchange) }
        return response
    }

    /// The answer admission's verdict calls for, with CORS fields for an allowed web player.
    private func decide(
        _ request: HTTPRequest,
        verdict: ProxyRequest.Verdict,
        body: RequestBody?,
        exchange: inout Exchange
    ) async throws -> ProxyResponse {
        switch verdict {
        case .refuse(let refusal):
            throw refusal
        case .serve:
            return try await answer(request, body: body, exchange: &exchange)
        case .serveTo(let origin):
            var response = try await answer(request, body: body, exchange: &exchange)
            response.headers[.accessControlAllowOrigin] = origin
            response.headers[.accessControlExposeHeaders] = "Content-Range, Content-Length, Accept-Ranges, ETag"
            response.headers[.vary] = "Origin"
            if request.method == .options {
                response.headers[.accessControlAllowMethods] = "GET, HEAD"
                response.headers[.accessControlAllowHeaders] = "Range, If-Range"
            }
            return response
        }
    }

    private static let clientClosedRequest = HTTPResponse.Status(code: 499, reasonPhrase: "Client Closed Request")

    /// Answers a request from a client that may use the proxy.
    private func answer(
        _ request: HTTPRequest,
        body: RequestBody?,
        exchange: inout Exchange
    ) async throws -> ProxyResponse {
        if request.method == .options, request.headerFields[.origin] != nil {
            // The preflight of an allowed web player.
            exchange.status = .noContent
            return ProxyResponse(status: .noContent)
        }
        let path = request.path ?? ""
        if path == PrefetchRequests.path, let prefetches {
            guard request.method == .post else {
                var response = exchange.refuse(ProxyRefusal(.methodNotAllowed, "\(path) takes POST"))
                response.headers[.allow] = "POST"
                return response
            }
            return try await prefetches.answer(request, body: body, exchange: &exchange)
        }
        guard request.method == .get || request.method == .head else {
            guard RelayedRequest.relays(request.method), path != "/", !path.hasPrefix(OfflineFiles.prefix) else {
                var response = exchange.refuse(ProxyRefusal(.methodNotAllowed, "\(request.method) is not served here"))
                response.headers[.allow] = "GET, HEAD"
                return response
            }
            let target = try ProxyTarget(requestTarget: path)
            return try await RelayedRequest(engine: engine, originHeaders: originHeaders)
                .answer(request, to: target.url, body: body, exchange: &exchange)
        }
        if path == "/" {
            exchange.status = .ok
            var response = await RootPage.response(
                authority: request.authority,
                engine: engine,
                library: offline.library
            )
            if request.method == .head { response.body = .empty }
            return response
        }
        if path.hasPrefix(OfflineFiles.prefix) {
            return try await offline.respond(to: path, exchange: &exchange)
        }
        let target = try ProxyTarget(requestTarget: path)
        return try await serve(target, exchange: &exchange)
    }

    private func serve(_ target: ProxyTarget, exchange: inout Exchange) async throws -> ProxyResponse {
        let request = exchange.request
        if BlockingReload.isBlocking(target.url), let format = ManifestFormats.format(of: target.url, contentType: nil)
        {
            let relay = RelayedRequest(engine: engine, originHeaders: originHeaders, client: reloadOrigin)
            return try await BlockingReload(relay: relay, pathPrefix: pathPrefix)
                .answer(request, url: target.url, format: format, exchange: &exchange)
        }
        let ranges = RangeRequest(range: request.headerFields[.range], ifRange: request.headerFields[.ifRange])

        // One open for the whole request: its content information and its bytes.
        // With the player's fields the origin may choose a representation by (RFC 9111 §4.1).
        let forwarded = ForwardedFields.of(request.headerFields.map { ($0.name.rawName, $0.value) })
        let resource = try await engine.open(
            target.url,
            originHeaders: ForwardedFields.adding(forwarded, to: originHeaders)
        )
        // Start reading at once where the request says where; learn the length on the way.
        var read: StartedRead?
        if request.method == .get, let (first, last) = ranges.startBeforeLength {
            // A document named as a manifest (`.m3u8`) may be live: its cached copy is checked
            // with the origin before it is read, once (a blocking reload of a low-latency
            // playlist reaches the origin every time, and only once).
            // A shared cache reuses nothing stored for a request with credentials unchecked (RFC
            // 9111 §3.5): the origin is asked first.
            let credentials = engine.configuration.isShared && request.headerFields[.authorization] != nil
            var revalidating = credentials
            if !revalidating, first == 0, last == nil, ManifestFormats.pathNames(target.url) {
                // A copy that is whole and fresh is read as it is: a final document (a VOD or
                // multivariant playlist, a static MPD) then costs the origin nothing, and one
                // that may change is checked once it is read (``serveManifest``).
                revalidating = await !resource.isCompleteAndFresh()
            }
            read = try await StartedRead(
                resource,
                offset: first,
                length: last.map { $0 - first + 1 },
                revalidating: revalidating
            )
        }
        var info: ContentInfo
        if let read {
            info = await read.info
        } else {
            info = try await resource.info()
        }
        // The origin could not be reached to check a stale copy, which is served (RFC 9111 §4.2.4).
        if await resource.isServedStale() { exchange.outcome = "stale" }
        if info.length == nil, request.method == .head {
            // An origin that sends no length (a chunked 200): learn it, never guess it.
            info = try await resource.infoWithLength()
        }
        if let format = ManifestFormats.format(of: target.url, contentType: info.contentType) {
            let whole = read.flatMap { $0.offset == 0 && $0.length == nil ? $0 : nil }
            return try await serveManifest(format, resource, info: info, started: whole, exchange: &exchange)
        }
        let decision = ResponseDecision(
            info: info,
            range: request.headerFields[.range],
            ifRange: request.headerFields[.ifRange],
            ifNoneMatch: request.headerFields[.ifNoneMatch],
            ifModifiedSince: request.headerFields[.ifModifiedSince],
            shared: engine.configuration.isShared
        )
        let fields = decision.httpFields
        let status: HTTPResponse.Status
        let range: ByteRange?
        switch decision.outcome {
        case .notModified:
            exchange.status = .notModified
            return ProxyResponse(status: .notModified, headers: fields)
        case .unsatisfiable(let length):
            return exchange.refuseRange(of: length)
        case .send(let partial, let sent):
            status = partial ? .partialContent : .ok
            range = sent
        }
        exchange.status = status

        if request.method == .head {
            return ProxyResponse(status: status, headers: fields)
        }
        // The read started before the length was known is used only if it reads what the plan
        // sends (an end clamped to the length reads the same bytes).
        if let started = read, !started.reads(range) { read = nil }
        let body: StartedRead
        if let read {
            body = read
        } else {
            body = try await StartedRead(resource, offset: range?.lowerBound ?? 0, length: range?.count)
        }
        let allocator = ByteBufferAllocator()
        if let range, let whole = try body.whole(count: range.count, allocator: allocator, exchange: &exchange) {
            return ProxyResponse(status: status, headers: fields, body: .bytes(whole))
        }
        exchange.recordedByBody = true
        let streamed = exchange
        let logs = logs
        return ProxyResponse(
            status: status,
            headers: fields,
            body: .stream(length: range.map { Int($0.count) }) { writer in
                var exchange = streamed
                do {
                    try await body.stream(into: writer, allocator: allocator, exchange: &exchange)
                } catch {
                    exchange.note(error)
                    await logs.record(exchange)
                    throw error
                }
                await logs.record(exchange)
            }
        )
    }

    /// Answers with the manifest rewritten to point at the proxy (``ManifestFormat``), or as it
    /// is when the format passes it on (a plain M3U list rather than HLS); its origin bytes are
    /// cached like any resource's, so a second play costs nothing.
    private func serveManifest(
        _ format: any ManifestFormat.Type,
        _ resource: CachedResource,
        info: ContentInfo,
        started: StartedRead?,
        exchange: inout Exchange
    ) async throws -> ProxyResponse {
        let tooLarge = ProxyRefusal(
            .badGateway,
            "the \(format.documentName) is larger than \(format.maximumSize >> 20) MiB"
        )
        guard (info.length ?? 0) <= format.maximumSize else { throw tooLarge }
        if info.contentCoding != nil {
            // Its text is what the rewrite needs; a document passed on as it came would lead the
            // player past the cache. A coded copy may be an origin's passing mistake: the origin
            // is asked again first, and a version it now sends as text is answered.
            _ = try await Self.revalidated(resource, bound: tooLarge, of: format, exchange: &exchange)
            let checked = try await resource.info()
            if let coding = checked.contentCoding {
                throw ProxyRefusal(
                    .badGateway,
                    "the \(format.documentName) from the origin is Content-Encoding: \(coding), not its text"
                )
            }
            return try await serveManifest(format, resource, info: checked, started: nil, exchange: &exchange)
        }
        let read: StartedRead
        if let started {
            read = started
        } else {
            read = try await StartedRead(resource, offset: 0, length: nil)
        }
        var original = [UInt8]()
        var changed = false
        do {
            try await read.stream(allocator: ByteBufferAllocator(), exchange: &exchange) { buffer in
                original += buffer.readableBytesView
                guard original.count <= format.maximumSize else { throw tooLarge }
            }
        } catch let error as StreamCacheError where error.kind == .resourceChanged {
            // Another reader's check moved the cache to a newer document while this one was read.
            changed = true
        }
        let (url, pathPrefix) = (resource.url, pathPrefix)
        /// `document` parsed, once for all the answer needs of it; a broken one is refused.
        func parse(_ document: [UInt8]) async throws -> ManifestReading {
            do {
                return try await ManifestWork.run(size: document.count) {
                    try format.read(document, from: url, pathPrefix: pathPrefix)
                }
            } catch {
                throw ProxyRefusal(.badGateway, "invalid \(format.documentName) from the origin: \(error)")
            }
        }
        var reading = changed ? nil : try await parse(original)
        if changed || (exchange.cacheBytes > 0 && !read.revalidated && reading?.mayChange == true) {
            // A live document answered from the cache may be stale: the origin is asked with a
            // conditional request (a 304 costs no body), a new version is fetched and cached,
            // and the cached one stands in when the origin cannot be reached. Only a document
            // that changed is parsed again.
            let checked = try await Self.revalidated(resource, bound: tooLarge, of: format, exchange: &exchange)
            if reading == nil || checked != original {
                original = checked
                reading = try await parse(checked)
            }
        }
        let text = reading?.rewritten
        let rewritten = text.map { ByteBuffer(string: $0) } ?? ByteBuffer(bytes: original)
        let decision = ResponseDecision(
            info: ContentInfo(
                length: Int64(rewritten.readableBytes),
                contentType: text == nil ? info.contentType ?? format.plainType : format.rewrittenType
            ),
            range: exchange.request.headerFields[.range],
            ifRange: exchange.request.headerFields[.ifRange]
        )
        // With the length known and no conditional field, the one other answer is a 416.
        guard case .send(let partial, let range?) = decision.outcome else {
            return exchange.refuseRange(of: Int64(rewritten.readableBytes))
        }
        var fields = decision.httpFields
        fields[.cacheControl] = "no-cache"
        exchange.status = partial ? .partialContent : .ok
        let body = rewritten.getSlice(at: Int(range.lowerBound), length: Int(range.count)) ?? rewritten
        let isHead = exchange.request.method == .head
        exchange.sentBytes = isHead ? 0 : Int64(body.readableBytes)
        return ProxyResponse(status: exchange.status, headers: fields, body: isHead ? .empty : .bytes(body))
    }

    /// The document after its version was checked with the origin, refused with `tooLarge` past
    /// the format's bound. A live document may change again while it is read (another reader's
    /// check moves the cache to the newer one): the read is made again, at most three times.
    private static func revalidated(
        _ resource: CachedResource,
        bound tooLarge: ProxyRefusal,
        of format: any ManifestFormat.Type,
        exchange: inout Exchange
    ) async throws -> [UInt8] {
        var attempt = 0
        while true {
            attempt += 1
            exchange.cacheBytes = 0
            exchange.sentBytes = 0
            do {
                let read = try await StartedRead(resource, offset: 0, length: nil, revalidating: true)
                var document = [UInt8]()
                try await read.stream(allocator: ByteBufferAllocator(), exchange: &exchange) { buffer in
                    document += buffer.readableBytesView
                    guard document.count <= format.maximumSize else { throw tooLarge }
                }
                return document
            } catch let error as StreamCacheError where error.kind == .resourceChanged && attempt < 3 {
                continue
            }
        }
    }
}
