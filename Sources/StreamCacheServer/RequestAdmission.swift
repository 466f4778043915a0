import NIOCore
import NIOHTTP1

/// Decides once per request whether the proxy serves it, for the cache hits and the responder
/// alike: the one place the `Host` and web-page checks are made.
///
/// In order: a head whose framing or addressing is ambiguous (two `Host` fields, a transfer
/// coding other than `chunked`, an absolute-form target naming another server) is refused with
/// `400` and its connection closed; on a server with an access key (``InAppServer``), a path that
/// does not begin with `/<key>` is refused with `403` and its connection closed, and the key is
/// removed from those that do; a request without `Host` gets `400`; a `Host` that does not name
/// this listener (DNS rebinding, ``ListenerAuthority``) gets `403`; then the web-page policy
/// (``WebPagePolicy``) says whether to serve, serve with CORS fields, or refuse with `403`.
struct RequestAdmission {
    let authority: ListenerAuthority
    let webPages: WebPagePolicy
    /// `/<key>` when paths must begin with an access key.
    private let keyPrefix: String?
    /// The address the connection arrived on.
    private let localIP: String?
    private let localPort: Int
    /// The last `Host` accepted on the connection: a player names the server the same way each time.
    private var acceptedHost: String?

    init(authority: ListenerAuthority, webPages: WebPagePolicy, accessKey: String?, local: SocketAddress?) {
        self.authority = authority
        self.webPages = webPages
        self.keyPrefix = accessKey.map { "/" + $0 }
        self.localIP = local?.ipAddress
        self.localPort = local?.port ?? -1
    }

    /// The request `head` makes, judged.
    mutating func admit(_ head: HTTPRequestHead) -> ProxyRequest {
        var head = head
        let fields = RequestFields(head.headers)
        var closes = !head.isKeepAlive
        let verdict: ProxyRequest.Verdict
        if let refusal = framingRefusal(uri: head.uri, fields: fields) ?? unkey(&head.uri) {
            closes = true
            verdict = .refuse(refusal)
        } else {
            verdict = judge(fields)
        }
        return ProxyRequest(head: head, fields: fields, verdict: verdict, closesConnection: closes)
    }

    /// Why a head's framing or addressing is refused, or `nil`.
    private func framingRefusal(uri: String, fields: RequestFields) -> ProxyRefusal? {
        if fields.hostCount > 1 { return ProxyRefusal(.badRequest, "the request has \(fields.hostCount) Host headers") }
        if !fields.transferCodings.isEmpty, fields.transferCodings != ["chunked"] {
            return ProxyRefusal(.badRequest, "unsupported Transfer-Encoding (only chunked)")
        }
        if !uri.hasPrefix("/"), uri != "*" {
            // absolute-form (RFC 9112 §3.2.2): its authority replaces Host, and must name this proxy.
            guard let authority = Self.authority(ofAbsoluteTarget: uri), names(authority) else {
                return ProxyRefusal(
                    .badRequest,
                    "the request target names another server; request /<http or https URL>"
                )
            }
        }
        return nil
    }

    /// Removes the access key from `uri`; the refusal when it does not begin with it.
    private func unkey(_ uri: inout String) -> ProxyRefusal? {
        guard let keyPrefix else { return nil }
        guard let unkeyed = Self.removing(keyPrefix, from: uri) else {
            return ProxyRefusal(.forbidden, "the request does not carry this server's access key")
        }
        uri = unkeyed
        return nil
    }

    /// The `Host` check, then the web-page policy.
    private mutating func judge(_ fields: RequestFields) -> ProxyRequest.Verdict {
        guard let host = fields.host else {
            return .refuse(ProxyRefusal(.badRequest, "the request has no Host header"))
        }
        guard host == acceptedHost || names(host) else {
            return .refuse(ProxyRefusal(.forbidden, "the Host header does not name this server"))
        }
        acceptedHost = host
        switch webPages.judge(
            origin: fields.origin,
            fetchSite: fields.fetchSite,
            referer: fields.referer,
            isThisServer: { names($0) }
        ) {
        case .serve: return .serve
        case .serveTo(let origin): return .serveTo(origin: origin)
        case .refuse(let reason): return .refuse(ProxyRefusal(.forbidden, reason))
        }
    }

    /// Whether `host` (`name[:port]`) names this listener.
    private func names(_ host: String) -> Bool {
        authority.accepts(host, port: localPort, localAddress: localIP)
    }

    /// `uri` without its leading `/<key>` (`/<key>/https://…` → `/https://…`); `nil` when it does
    /// not begin with it.
    static func removing(_ keyPrefix: String, from uri: String) -> String? {
        guard uri.hasPrefix(keyPrefix) else { return nil }
        let rest = uri.dropFirst(keyPrefix.count)
        guard rest.first == "/" else { return nil }
        return String(rest)
    }

    /// `host[:port]` of `scheme://host[:port]/…`.
    static func authority(ofAbsoluteTarget target: String) -> String? {
        guard let separator = target.range(of: "://") else { return nil }
        let rest = target[separator.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !authority.isEmpty, !authority.contains("@") else { return nil }
        return String(authority)
    }
}
