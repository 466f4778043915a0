import HTTPTypes
import NIOCore
import NIOHTTP1
import StreamCache

/// Judges what only the raw request head shows, before it becomes an
/// `HTTPRequest` that keeps one `Host` and no absolute-form target: a request whose framing or
/// addressing is ambiguous is refused with `400`, and its connection closed.
///
/// A server with an access key (``InAppServer``) also serves only paths that begin with
/// `/<key>`, which it removes here: everything after this handler sees `/<URL>` as without a key.
///
/// The verdict travels with the request in ``refusalField`` as a ``ProxyRefusal``'s description,
/// `<status> <reason>` (any value the client sent under that name is dropped first), so the
/// responder answers it in its turn and logs it like every other refusal.
///
/// A request after which the connection closes (HTTP/1.0 without `Connection: keep-alive`, or
/// HTTP/1.1 asking to close) is marked `Connection: close`, the one signal
/// ``ResponderHandler`` closes a connection on after its response.
final class RequestHeadCheck: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    /// The field that carries a refusal's reason to the responder.
    static let refusalField = "StreamCache-Refusal"

    private let authority: ListenerAuthority
    /// `/<key>` when paths must begin with an access key.
    private let keyPrefix: String?
    private var local = ConnectionAddress(nil)

    init(authority: ListenerAuthority, accessKey: String? = nil) {
        self.authority = authority
        self.keyPrefix = accessKey.map { "/" + $0 }
    }

    func handlerAdded(context: ChannelHandlerContext) {
        local = ConnectionAddress(context.channel.localAddress)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        // One pass over the fields, and the head passed on as it came unless it must change:
        // this runs for every request, the warm ones too.
        var hosts = 0
        var codings: [String] = []
        var forged = false
        for (name, value) in head.headers {
            switch name.utf8.count {
            case 4 where HeaderField.namesMatch(name, "host"): hosts += 1
            case 17 where HeaderField.namesMatch(name, "transfer-encoding"): codings.append(value.lowercased())
            case Self.refusalField.utf8.count where HeaderField.namesMatch(name, Self.refusalField): forged = true
            default: break
            }
        }
        var verdict = refusal(uri: head.uri, hosts: hosts, codings: codings).map { ProxyRefusal(.badRequest, $0) }
        var unkeyed: String?
        if let keyPrefix, verdict == nil {
            unkeyed = Self.removing(keyPrefix, from: head.uri)
            if unkeyed == nil { verdict = ProxyRefusal(.forbidden, "the request does not carry this server's access key") }
        }
        let closes = !head.isKeepAlive
        guard forged || verdict != nil || unkeyed != nil || closes else {
            context.fireChannelRead(data)
            return
        }
        if let unkeyed { head.uri = unkeyed }
        if forged { head.headers.remove(name: Self.refusalField) }
        if let verdict { head.headers.add(name: Self.refusalField, value: verdict.description) }
        if closes || verdict != nil { head.headers.replaceOrAdd(name: "Connection", value: "close") }
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }

    /// `uri` without its leading `/<key>` (`/<key>/https://…` → `/https://…`); `nil` when it does
    /// not begin with it.
    static func removing(_ keyPrefix: String, from uri: String) -> String? {
        guard uri.hasPrefix(keyPrefix) else { return nil }
        let rest = uri.dropFirst(keyPrefix.count)
        guard rest.first == "/" else { return nil }
        return String(rest)
    }

    /// The refusal carried in ``refusalField`` (its ``ProxyRefusal/description``).
    static func parseRefusal(_ value: String) -> ProxyRefusal {
        let parts = value.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, let code = Int(parts[0]), (400..<500).contains(code) else {
            return ProxyRefusal(.badRequest, value)
        }
        return ProxyRefusal(HTTPResponse.Status(code: code), String(parts[1]))
    }

    /// Why a request for `uri` with `hosts` Host fields and these transfer codings is refused, or `nil`.
    func refusal(uri: String, hosts: Int, codings: [String]) -> String? {
        if hosts > 1 { return "the request has \(hosts) Host headers" }
        if !codings.isEmpty, codings != ["chunked"] { return "unsupported Transfer-Encoding (only chunked)" }
        if !uri.hasPrefix("/"), uri != "*" {
            // absolute-form (RFC 9112 §3.2.2): its authority replaces Host, and must name this proxy.
            guard let authority = Self.authority(ofAbsoluteTarget: uri),
                self.authority.accepts(authority, port: local.port, localAddress: local.ip)
            else { return "the request target names another server; request /<http or https URL>" }
        }
        return nil
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
