import HTTPTypes

/// The fields every answer of the proxy and the in-app server carries, whatever it holds, so that
/// nothing served through them runs as their own web origin (`http://127.0.0.1:PORT`).
///
/// An HTML page or an SVG image from any origin, opened through the proxy, would otherwise be a
/// page of the proxy's origin: its same-origin requests (`fetch('/http://10.0.0.5/…')`) carry no
/// `Origin` and pass ``WebPagePolicy``, and would read other local services through the proxy.
/// `Content-Security-Policy: sandbox` gives such a document an opaque origin with no scripts,
/// and `X-Content-Type-Options: nosniff` keeps a browser from reading other bytes as one.
enum SandboxFields {
    /// Names and values, in the order they are sent.
    static let all: [(name: String, value: String)] = [
        ("Content-Security-Policy", "sandbox"),
        ("X-Content-Type-Options", "nosniff"),
    ]

    /// The lowercased names: an origin's own values are never replayed in their place.
    static let names: Set<String> = Set(all.map { $0.name.lowercased() })

    /// The fields as one encoded block (`Name: value\r\n` each), for heads written encoded.
    static let encoded: String = all.map { "\($0.name): \($0.value)\r\n" }.joined()

    /// Sets the fields on `fields`, replacing any value an origin gave them.
    static func apply(to fields: inout HTTPFields) {
        for (name, value) in all {
            guard let name = HTTPField.Name(name) else { continue }
            fields[name] = value
        }
    }
}
