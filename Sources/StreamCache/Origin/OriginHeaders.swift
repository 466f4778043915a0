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

    public init(_ rules: [Rule] = []) {
        self.rules = rules
    }

    /// `fields` for the first origin only.
    public init(fields: [HeaderField]) {
        self.init(fields.map { Rule(host: nil, field: $0) })
    }

    /// The headers to send to `url` on a read that began at `first`.
    public func fields(for url: URL, firstURL first: URL) -> [HeaderField] {
        guard !rules.isEmpty else { return [] }
        let host = url.host?.lowercased()
        let sameOrigin = Self.origin(of: url) == Self.origin(of: first)
        return rules.filter { rule in rule.host.map { $0 == host } ?? sameOrigin }.map(\.field)
    }

    /// Scheme, host and port (the scheme's default when absent), as RFC 6454 compares origins.
    private static func origin(of url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
    }
}
