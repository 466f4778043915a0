import Foundation

/// Request headers a user adds to origin requests (`--header`), hop by hop through redirects.
///
/// A header for every origin goes to the origin the read began at (and to redirects within that
/// origin: same scheme, host and port), never to another one; a header for one host goes to that
/// host on every hop. A player's own request headers are never forwarded.
public struct OriginHeaders: Sendable, Hashable {
    /// One configured header, for `host` only or (`nil`) for the first origin.
    public struct Rule: Hashable, Sendable {
        public var host: String?
        public var field: HeaderField

        public init(host: String?, field: HeaderField) {
            self.host = host?.lowercased()
            self.field = field
        }

        /// Parses `Name: value` or `host=Name: value` (a header name cannot hold `=`).
        ///
        /// - Returns: `nil` if the header is malformed (no colon, a bad name, CR or LF in the value).
        public init?(parsing text: String) {
            var line = Substring(text)
            var host: String?
            if let equals = text.firstIndex(of: "="), let colon = text.firstIndex(of: ":"), equals < colon {
                host = String(text[..<equals]).trimmingCharacters(in: .whitespaces)
                line = text[text.index(after: equals)...]
                guard host?.isEmpty == false else { return nil }
            }
            guard let field = HeaderField(parsing: String(line)) else { return nil }
            self.init(host: host, field: field)
        }
    }

    public var rules: [Rule]
    /// Cookies (`-b`), each sent where it matches, as one `Cookie` field.
    public var cookies: [OriginCookie]

    public init(_ rules: [Rule] = [], cookies: [OriginCookie] = []) {
        self.rules = rules
        self.cookies = cookies
    }

    /// `fields` for the first origin only.
    public init(fields: [HeaderField], cookies: [OriginCookie] = []) {
        self.init(fields.map { Rule(host: nil, field: $0) }, cookies: cookies)
    }

    /// The headers to send to `url` on a read that began at `first`.
    public func fields(for url: URL, firstURL first: URL) -> [HeaderField] {
        guard !rules.isEmpty || !cookies.isEmpty else { return [] }
        let host = url.host?.lowercased()
        let sameOrigin = Self.origin(of: url) == Self.origin(of: first)
        var fields = rules.filter { rule in rule.host.map { $0 == host } ?? sameOrigin }.map(\.field)
        let sent = cookies.filter { $0.matches(url, sameOrigin: sameOrigin) }
        if !sent.isEmpty {
            fields.append(HeaderField("Cookie", sent.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")))
        }
        return fields
    }

    /// Scheme, host and port (the scheme's default when absent), as RFC 6454 compares origins.
    private static func origin(of url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
    }
}
