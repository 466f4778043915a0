import Foundation
import StreamCache

/// Request headers the proxy adds when it fetches from origins (`--header`), for every origin or
/// for one host. The player's own request headers are never forwarded.
public struct OriginHeaders: Sendable {
    /// One configured header, for `host` only or (`nil`) for every origin.
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

    /// The headers to send when fetching `url`.
    public func fields(for url: URL) -> [HeaderField] {
        guard !rules.isEmpty else { return [] }
        let host = url.host?.lowercased()
        return rules.filter { $0.host == nil || $0.host == host }.map(\.field)
    }
}
