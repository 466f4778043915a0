import NIOHTTP1

/// A request head as the proxy reads it: parsed once (by ``WholeRequestHead`` or NIO's decoder),
/// its fields read once (``RequestFields``), admitted or refused once (``RequestAdmission``).
/// (A class: the connection's machine hands it on from event to action several times a request,
/// and a copy of a reference costs one count, not one per string it holds.)
final class ProxyRequest {
    /// Whether the proxy serves the request, and to whom.
    enum Verdict: Equatable {
        /// A player's request.
        case serve
        /// A request from a web page the user allowed (`--allow-origin`), answered with CORS fields.
        case serveTo(origin: String)
        case refuse(ProxyRefusal)
    }

    /// The head, its target without the server's access key.
    let head: HTTPRequestHead
    let fields: RequestFields
    let verdict: Verdict
    /// Whether the connection closes after the answer: the client asked for it, or the request's
    /// framing or address cannot be trusted.
    let closesConnection: Bool
    /// The body of a request of any method but `GET` and `HEAD`, which the responder relays to
    /// the origin, as the connection reads it.
    let body: RequestBody?

    init(head: HTTPRequestHead, fields: RequestFields, verdict: Verdict, closesConnection: Bool) {
        self.head = head
        self.fields = fields
        self.verdict = verdict
        self.closesConnection = closesConnection
        body = head.method == .GET || head.method == .HEAD ? nil : RequestBody()
    }
}
