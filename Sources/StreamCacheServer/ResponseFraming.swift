import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1

/// What every answer's head says beside the answer itself, whichever path writes it (a cache hit
/// encoded on the event loop, or the responder's head): the sandbox fields (``SandboxFields``)
/// and what becomes of the connection (`Connection`), in the request's HTTP version.
struct ResponseFraming: Sendable {
    let version: HTTPVersion
    /// Whether the connection closes after the response.
    let closes: Bool
    /// Whether the answer carries the sandbox (``SandboxFields``): the request may open it as a
    /// document.
    let sandboxed: Bool

    init(version: HTTPVersion, closes: Bool, sandboxed: Bool) {
        self.version = version
        self.closes = closes
        self.sandboxed = sandboxed
    }

    /// The framing of the answer to `request`; `last` when the connection closes after it
    /// whatever the request asked (``ProxyConnection/answersLast``).
    init(_ request: ProxyRequest, last: Bool) {
        self.init(
            version: request.head.version,
            closes: request.closesConnection || last,
            sandboxed: !request.fields.opensNoDocument
        )
    }

    /// The status line's start: the version the answer is written in.
    var statusLineStart: StaticString { version.minor == 0 ? "HTTP/1.0 " : "HTTP/1.1 " }

    /// What the answer's `Connection` says, if anything: `close`, or `keep-alive` to an HTTP/1.0
    /// client, which keeps the connection only when the answer says so.
    private var connection: StaticString? {
        if closes { return "close" }
        return version.minor == 0 ? "keep-alive" : nil
    }

    /// `response`'s head as the client gets it.
    func head(of response: HTTPResponse) -> HTTPResponseHead {
        var head = HTTPResponseHead(response)
        head.version = version.minor == 0 ? .http1_0 : .http1_1
        SandboxFields.apply(to: &head.headers, sandboxed: sandboxed)
        if let connection { head.headers.replaceOrAdd(name: "Connection", value: connection.description) }
        return head
    }

    /// `head` saying that the connection closes after it, in place of what it said.
    static func closing(_ head: HTTPResponseHead) -> HTTPResponseHead {
        var head = head
        head.headers.replaceOrAdd(name: "Connection", value: "close")
        return head
    }

    /// Writes the same fields, encoded (`Name: value\r\n` each), for a head written encoded.
    func writeFields(into buffer: inout ByteBuffer) {
        buffer.writeString(SandboxFields.encoded(sandboxed: sandboxed))
        if let connection {
            buffer.writeStaticString("Connection: ")
            buffer.writeStaticString(connection)
            buffer.writeStaticString("\r\n")
        }
    }
}
