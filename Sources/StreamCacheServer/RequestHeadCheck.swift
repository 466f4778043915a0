import NIOCore
import NIOHTTP1

/// Judges what only the raw request head shows, before Hummingbird turns it into an
/// `HTTPRequest` that keeps one `Host` and no absolute-form target: a request whose framing or
/// addressing is ambiguous is refused with `400`, and its connection closed.
///
/// The verdict travels with the request in ``refusalField`` (any value the client sent under
/// that name is dropped first), so the responder answers it in its turn and logs it like every
/// other refusal.
final class RequestHeadCheck: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    /// The field that carries a refusal's reason to the responder.
    static let refusalField = "StreamCache-Refusal"

    private let authority: ListenerAuthority
    private var local = ConnectionAddress(nil)

    init(authority: ListenerAuthority) {
        self.authority = authority
    }

    func handlerAdded(context: ChannelHandlerContext) {
        local = ConnectionAddress(context.channel.localAddress)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        head.headers.remove(name: Self.refusalField)
        if let reason = refusal(of: head) {
            head.headers.add(name: Self.refusalField, value: reason)
            head.headers.replaceOrAdd(name: "Connection", value: "close")
        }
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }

    /// Why `head` is refused, or `nil`.
    func refusal(of head: HTTPRequestHead) -> String? {
        let hosts = head.headers["host"]
        if hosts.count > 1 { return "the request has \(hosts.count) Host headers" }
        let codings = head.headers["transfer-encoding"]
        if !codings.isEmpty, codings.map({ $0.lowercased() }) != ["chunked"] {
            return "unsupported Transfer-Encoding (only chunked)"
        }
        if !head.uri.hasPrefix("/"), head.uri != "*" {
            // absolute-form (RFC 9112 §3.2.2): its authority replaces Host, and must name this proxy.
            guard let authority = Self.authority(ofAbsoluteTarget: head.uri),
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
