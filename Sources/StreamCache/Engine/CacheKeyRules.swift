import Foundation

/// Which query parameters a cache key leaves out, for every host or for one: signed URLs carry a
/// token that changes every session (`?Expires=…&Signature=…`), and a key with the token would
/// make every session's URL a new resource.
///
/// The key of a URL is the key of the URL without those parameters; the origin is still asked
/// with the URL as the reader gave it. Two files that end up under one key are told apart as
/// versions (another length or validator), never mixed.
public struct CacheKeyRules: Sendable, Hashable, Codable {
    /// Parameters left out of the keys of `host`'s URLs, or of every URL (`host == nil`).
    public struct Rule: Sendable, Hashable, Codable {
        /// A host name in lower case, without scheme or port; `nil`: every host.
        public var host: String?
        /// Parameter names, compared without regard to case.
        public var parameters: [String]

        public init(host: String?, parameters: [String]) {
            self.host = host?.lowercased()
            self.parameters = parameters
        }
    }

    public var rules: [Rule]

    public init(_ rules: [Rule] = []) {
        self.rules = rules
    }

    /// The presets, by name: the parameters common signing schemes put in a URL.
    public static let presets: [String: [String]] = [
        "signed-cdn": [
            // CloudFront
            "Expires", "Signature", "Key-Pair-Id", "Policy",
            // Akamai token authentication
            "hdnts", "hdnea", "__token__",
            // Amazon S3 presigned URLs (signature versions 4 and 2)
            "X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires", "X-Amz-SignedHeaders",
            "X-Amz-Signature", "X-Amz-Security-Token", "AWSAccessKeyId",
            // Google Cloud Storage signed URLs (V4 and V2)
            "X-Goog-Algorithm", "X-Goog-Credential", "X-Goog-Date", "X-Goog-Expires", "X-Goog-SignedHeaders",
            "X-Goog-Signature", "GoogleAccessId",
            // Fastly token authentication
            "token",
        ]
    ]

    /// Whether no parameter is left out of any key.
    public var isEmpty: Bool { rules.isEmpty }

    /// `url` without the query parameters the rules leave out of its key; `url` itself when
    /// none applies.
    public func applied(to url: URL) -> URL {
        guard !rules.isEmpty, url.query != nil else { return url }
        let host = url.host?.lowercased()
        let ignored = Set(
            rules.filter { $0.host == nil || $0.host == host }.flatMap(\.parameters).map { $0.lowercased() }
        )
        guard !ignored.isEmpty, var components = URLComponents(url: url, resolvingAgainstBaseURL: true),
            let query = components.percentEncodedQuery
        else { return url }
        let kept = query.split(separator: "&", omittingEmptySubsequences: false).filter { pair in
            let name = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let decoded = String(name).removingPercentEncoding ?? String(name)
            return !ignored.contains(decoded.lowercased())
        }
        components.percentEncodedQuery = kept.isEmpty ? nil : kept.joined(separator: "&")
        return components.url ?? url
    }

    /// A digest of the values `url` gives the parameters the rules leave out of its key, or `nil`
    /// if it gives none: two URLs of one key with other values may be other content (a token per
    /// user, a watermark per session), so the cache proves bytes fetched with one before it
    /// answers the other with them. The values themselves are never stored.
    public func ignoredValuesDigest(of url: URL) -> String? {
        guard !rules.isEmpty, url.query != nil else { return nil }
        let host = url.host?.lowercased()
        let ignored = Set(
            rules.filter { $0.host == nil || $0.host == host }.flatMap(\.parameters).map { $0.lowercased() }
        )
        guard !ignored.isEmpty, let query = URLComponents(url: url, resolvingAgainstBaseURL: true)?.percentEncodedQuery
        else { return nil }
        let pairs = query.split(separator: "&").filter { pair in
            let name = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let decoded = String(name).removingPercentEncoding ?? String(name)
            return ignored.contains(decoded.lowercased())
        }.sorted()
        guard !pairs.isEmpty else { return nil }
        let text = Array(pairs.joined(separator: "&").utf8)
        let sum = text.withUnsafeBytes { BlockChecksums.checksum($0) }
        return String(sum, radix: 16)
    }

    /// Parses one rule: `NAME,NAME…` for every host, `HOST=NAME,NAME…` for one; a preset
    /// (`signed-cdn`) stands for its names.
    ///
    /// - Throws: ``InvalidRule`` naming what is wrong: an empty name or host, a host with a
    ///   scheme or a port, `*` as a name, a preset that does not exist.
    public static func parseRule(_ text: String) throws(InvalidRule) -> Rule {
        func invalid(_ reason: String) -> InvalidRule { InvalidRule(rule: text, reason: reason) }
        var host: String?
        var list = Substring(text)
        if let equals = text.firstIndex(of: "=") {
            let name = text[..<equals].trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty else { throw invalid("no host before '='") }
            guard !name.contains("/"), !name.contains(":") else {
                throw invalid("a host is a name alone, without scheme or port")
            }
            guard HostName.isWellFormed(name) else { throw invalid("'\(name)' is not a host name") }
            host = name
            list = text[text.index(after: equals)...]
        }
        var parameters: [String] = []
        for item in list.split(separator: ",", omittingEmptySubsequences: false) {
            let name = item.trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty else { throw invalid("an empty parameter name") }
            guard !name.contains("*") else { throw invalid("'*' is not a parameter name; name each one") }
            guard !name.contains("="), !name.contains("&"), !name.contains("#"),
                name.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F })
            else { throw invalid("'\(name)' is not a parameter name") }
            if let preset = presets[name.lowercased()] {
                parameters += preset
            } else if isPresetSpelling(name) {
                let known = presets.keys.sorted().joined(separator: ", ")
                throw invalid("no preset named '\(name)' (presets: \(known))")
            } else {
                parameters.append(name)
            }
        }
        return Rule(host: host, parameters: parameters)
    }

    /// Whether `name` is spelled as a preset is (lower-case words joined by `-`): such a name
    /// names a preset, never a parameter.
    private static func isPresetSpelling(_ name: String) -> Bool {
        let words = name.split(separator: "-", omittingEmptySubsequences: false)
        return words.count > 1
            && words.allSatisfy { word in !word.isEmpty && word.allSatisfy { $0.isASCII && $0.isLowercase } }
    }

    /// The rules written as `texts` (``parseRule(_:)`` each).
    public init(parsing texts: [String]) throws(InvalidRule) {
        var rules: [Rule] = []
        for text in texts { rules.append(try Self.parseRule(text)) }
        self.init(rules)
    }

    /// A rule that cannot be read, and why.
    public struct InvalidRule: Error, CustomStringConvertible {
        public let rule: String
        public let reason: String
        public var description: String { "invalid key rule '\(rule)': \(reason)" }
    }
}
