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
        /// What the last answer said of the resource, kept while it holds, and its fields as
        /// the event loop sends them.
        private var representation: (judged: ResponseDecision.Representation, headers: HTTPHeaders)?

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
        mutating func representation(of info: ContentInfo, at now: Date) -> (
            judged: ResponseDecision.Representation, headers: HTTPHeaders
        ) {
            if let representation, representation.judged.holds(info, at: now) { return representation }
            let judged = ResponseDecision.Representation(info, at: now)
            var headers = HTTPHeaders()
            headers.reserveCapacity(judged.fields.count + 3)
            for field in judged.fields { headers.add(name: field.name, value: field.value) }
            representation = (judged, headers)
            return (judged, headers)
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
        guard head.method == .GET else { return nil }
        let fields = RequestFields(head.headers)
        guard !fields.isTheResponders, let host = fields.host,
            host == local.acceptedHost || authority.accepts(host, port: local.port, localAddress: local.ip)
        else { return nil }
        local.acceptedHost = host
        let verdict = webPages.judge(
            origin: fields.origin,
            fetchSite: fields.fetchSite,
            referer: fields.referer,
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

        let representation = judged.representation(of: resource.info, at: Date())
        let decision = ResponseDecision(representation.judged, range: fields.range, ifRange: fields.ifRange)
        guard case .send(let partial, let range?) = decision.outcome, resource.covers(range) else { return nil }
        // The representation's fields as the last answer built them (a send carries them all).
        var headers = representation.headers
        for field in decision.bytesFields { headers.add(name: field.name, value: field.value) }
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

    /// What the warm path reads of a request's fields, in one pass over them (a dozen searches
    /// through them, each comparing every name, ran for every range).
    struct RequestFields {
        var host: String?
        var range: String?
        var ifRange: String?
        var origin: String?
        var fetchSite: String?
        var referer: String?
        /// Whether the request is the responder's to answer: it has a body or a transfer coding,
        /// is conditional (but for `If-Range`: perhaps a `304`), carries a refusal
        /// (``RequestHeadCheck``), or has two values of a field read once here.
        private(set) var isTheResponders = false

        init(_ headers: HTTPHeaders) {
            for (name, value) in headers {
                // By length first: most names are compared with none.
                switch name.utf8.count {
                case 4 where HeaderField.namesMatch(name, "host"):
                    Self.keep(value, in: &host, twice: &isTheResponders)
                case 5 where HeaderField.namesMatch(name, "range"):
                    Self.keep(value, in: &range, twice: &isTheResponders)
                case 6 where HeaderField.namesMatch(name, "origin"):
                    Self.keep(value, in: &origin, twice: &isTheResponders)
                case 7 where HeaderField.namesMatch(name, "referer"):
                    Self.keep(value, in: &referer, twice: &isTheResponders)
                case 8 where HeaderField.namesMatch(name, "if-range"):
                    Self.keep(value, in: &ifRange, twice: &isTheResponders)
                case 14 where HeaderField.namesMatch(name, "sec-fetch-site"):
                    Self.keep(value, in: &fetchSite, twice: &isTheResponders)
                case 14 where HeaderField.namesMatch(name, "content-length"):
                    if value != "0" { isTheResponders = true }
                case 13 where HeaderField.namesMatch(name, "if-none-match"),
                    17 where HeaderField.namesMatch(name, "if-modified-since"),
                    17 where HeaderField.namesMatch(name, "transfer-encoding"),
                    _ where HeaderField.namesMatch(name, RequestHeadCheck.refusalField):
                    isTheResponders = true
                default: break
                }
            }
        }

        /// Keeps a field's value; a second one makes the request the responder's.
        private static func keep(_ value: String, in field: inout String?, twice: inout Bool) {
            if field != nil { twice = true }
            field = value
        }
    }
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
