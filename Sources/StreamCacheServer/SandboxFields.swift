import NIOHTTP1

/// The fields every answer of the proxy and the in-app server carries, so that nothing served
/// through them runs as their own web origin (`http://127.0.0.1:PORT`).
///
/// An HTML page or an SVG image from any origin, opened through the proxy, would otherwise be a
/// page of the proxy's origin: its same-origin requests (`fetch('/http://10.0.0.5/…')`) carry no
/// `Origin` and pass ``WebPagePolicy``, and would read other local services through it.
/// `Content-Security-Policy: sandbox` gives such a document an opaque origin with no scripts; a
/// browser enforces it beside any policy the origin sent, so the origin's cannot loosen it. It
/// goes with every answer to a request that may open it as a document, which is any request that
/// does not say otherwise (``RequestFields/opensNoDocument``); a browser's fetch or media request
/// gets the origin's own policy alone, as the origin sent it (a policy there binds nothing).
/// `X-Content-Type-Options: nosniff` keeps a browser from reading other bytes as a document, in
/// place of any value the origin gave.
enum SandboxFields {
    static let policy = (name: "Content-Security-Policy", value: "sandbox")
    static let noSniff = (name: "X-Content-Type-Options", value: "nosniff")

    /// The lowercased names of the fields whose origin values are never replayed.
    static let replaced: Set<String> = [noSniff.name.lowercased()]

    /// The fields as one encoded block (`Name: value\r\n` each), for heads written encoded:
    /// with the sandbox (`sandboxed`) or without it.
    static func encoded(sandboxed: Bool) -> String {
        sandboxed ? withSandbox : withoutSandbox
    }

    private static let withoutSandbox = "\(noSniff.name): \(noSniff.value)\r\n"
    private static let withSandbox = "\(policy.name): \(policy.value)\r\n" + withoutSandbox

    /// Sets the fields on `fields`: `nosniff` in place of any value, and the sandbox beside any
    /// policy there if `sandboxed`.
    static func apply(to fields: inout HTTPHeaders, sandboxed: Bool) {
        fields.replaceOrAdd(name: noSniff.name, value: noSniff.value)
        if sandboxed { fields.add(name: policy.name, value: policy.value) }
    }
}
