import Foundation
import NIOCore
import NIOHTTP1
import StreamCache

/// Which requests the proxy answers from a warm resource on the event loop (``WarmRangeHandler``),
/// and how.
///
/// Only what the responder would answer the same way from the cache without waiting: a `GET`
/// without a body, from a client that may use the proxy (the `Host` names this listener, no web
/// page), of `/<URL>` (not a playlist, which is rewritten), whose range is all written in the
/// cache file of a version the origin confirmed within the revalidation interval: as its open
/// session publishes it, or, when no session of the process has it open, as the index records
/// it (``CacheEngine/resting(key:)``). Anything else, including every header the responder would
/// refuse or combine, goes to the responder.
struct WarmRequests: Sendable {
    let engine: CacheEngine
    let authority: ListenerAuthority
    let webPages: WebPagePolicy

    /// A response to send from a warm resource.
    struct Answer {
        let status: HTTPResponseStatus
        let headers: HTTPHeaders
        let resource: WarmResource
        let range: ByteRange
    }

    /// A request target judged once: a connection asks for the same one again and again.
    struct Target {
        let uri: String
        let url: URL
        let key: String
        /// Whether the path names a playlist, judged when a generic content type (or none)
        /// first leaves it to the path.
        private var pathVerdict: Bool?
        /// The last content type judged, and what it says (`nil`: generic, the path decides).
        private var typeCheck: (contentType: String, namesPlaylist: Bool?)?
        /// What the last answer said of the resource, kept while it holds.
        private var representation: ResponseDecision.Representation?

        init(uri: String, url: URL, key: String) {
            self.uri = uri
            self.url = url
            self.key = key
        }

        /// Whether the resource is a playlist, which the responder rewrites.
        mutating func isPlaylist(_ contentType: String?) -> Bool {
            guard let contentType else { return pathNamesPlaylist() }
            if typeCheck?.contentType != contentType {
                typeCheck = (contentType, PlaylistRewriter.typeNamesPlaylist(contentType))
            }
            return typeCheck?.namesPlaylist ?? pathNamesPlaylist()
        }

        /// What an answer about `info` says at `now`, judged again only when the info or the
        /// age differs from the last answer's.
        mutating func representation(of info: ContentInfo, at now: Date) -> ResponseDecision.Representation {
            if let representation, representation.holds(info, at: now) { return representation }
            let judged = ResponseDecision.Representation(info, at: now)
            representation = judged
            return judged
        }

        private mutating func pathNamesPlaylist() -> Bool {
            if let pathVerdict { return pathVerdict }
            let verdict = PlaylistRewriter.pathNamesPlaylist(url)
            pathVerdict = verdict
            return verdict
        }
    }

    /// The target `uri` names, if it is an origin URL the engine fetches.
    func target(_ uri: String) -> Target? {
        guard uri.hasPrefix("/"), !uri.hasPrefix(OfflineFiles.prefix),
            let target = try? ProxyTarget(requestTarget: uri),
            (try? CacheEngine.validate(target.url, configuration: engine.configuration)) != nil
        else { return nil }
        return Target(uri: uri, url: target.url, key: engine.configuration.key(target.url))
    }

    /// The answer to `head` from a warm resource, or `nil` for the responder to answer it.
    ///
    /// - Parameters:
    ///   - target: the judged target of the connection's last request, replaced when `head` names another.
    ///   - local: the address the connection arrived on, and the `Host` last accepted on it.
    func answer(_ head: HTTPRequestHead, target: inout Target?, local: inout ConnectionAddress) -> Answer? {
        let fields = head.headers
        guard head.method == .GET else { return nil }
        // A conditional request (but If-Range) is the responder's to answer, perhaps with a 304.
        guard !fields.contains(name: "transfer-encoding"), !fields.contains(name: RequestHeadCheck.refusalField),
            fields["content-length"].allSatisfy({ $0 == "0" }),
            Self.singleValued.allSatisfy({ fields[$0].count <= 1 }),
            !fields.contains(name: "if-none-match"), !fields.contains(name: "if-modified-since")
        else { return nil }
        guard let host = fields.first(name: "host"),
            host == local.acceptedHost || authority.accepts(host, port: local.port, localAddress: local.ip)
        else { return nil }
        local.acceptedHost = host
        let verdict = webPages.judge(
            origin: fields.first(name: "origin"),
            fetchSite: fields.first(name: "sec-fetch-site"),
            referer: fields.first(name: "referer"),
            isThisServer: { authority.accepts($0, port: local.port, localAddress: local.ip) }
        )
        guard verdict == .serve else { return nil }
        if target?.uri != head.uri { target = self.target(head.uri) }
        guard var judged = target else { return nil }
        defer { target = judged }
        let key = judged.key
        // Published by this process's open session, else read from the index and the file; not
        // for a URL that names a playlist, which the responder rewrites (no index read, no open).
        guard let resource = engine.warm(key: key) ?? (judged.isPlaylist(nil) ? nil : engine.resting(key: key)),
            let length = resource.info.length,
            length > 0, !judged.isPlaylist(resource.info.contentType)
        else { return nil }

        let decision = ResponseDecision(
            judged.representation(of: resource.info, at: Date()),
            range: fields.first(name: "range"),
            ifRange: fields.first(name: "if-range")
        )
        guard case .send(let partial, let range?) = decision.outcome, resource.covers(range) else { return nil }
        var headers = HTTPHeaders()
        headers.reserveCapacity(decision.fields.count + 1)
        for field in decision.fields { headers.add(name: field.name, value: field.value) }
        if !head.isKeepAlive {
            headers.add(name: "Connection", value: "close")
        } else if head.version == .http1_0 {
            // An HTTP/1.0 client keeps the connection only when the answer says so.
            headers.add(name: "Connection", value: "keep-alive")
        }
        return Answer(
            status: partial ? .partialContent : .ok,
            headers: headers,
            resource: resource,
            range: range
        )
    }

    /// Headers the responder reads one value of; a request with several goes to it.
    private static let singleValued = ["host", "range", "if-range", "origin", "sec-fetch-site", "referer"]
}

/// The address a connection arrived on, formatted once per connection, and the last `Host`
/// the connection named it by.
struct ConnectionAddress {
    let ip: String?
    let port: Int
    var acceptedHost: String?

    init(_ address: SocketAddress?) {
        ip = address?.ipAddress
        port = address?.port ?? -1
    }
}
