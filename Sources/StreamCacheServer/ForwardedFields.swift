import StreamCache

/// The player's request fields the proxy passes on to the origin, as a cache in the path does:
/// the end-to-end fields that may choose a representation (`Accept-Language`, `User-Agent`, any
/// field a `Vary` names), so the stored response is the variant of what the player sent and a
/// request with other values is not answered with it (RFC 9111 §4.1).
///
/// Not passed on: the fields of this hop (RFC 9110 §7.6.1, and those `Connection` names), the
/// ones the cache sets itself for its range and conditional requests and its identity coding,
/// and the credentials and page context a web page's request carries (`Cookie`,
/// `Authorization`, `Origin`, `Referer`, `Sec-*`), which are for this listener, never for the
/// origins it reaches. `Icy-MetaData` asks a radio server to mix metadata into the bytes, which
/// would then be cached for every player.
enum ForwardedFields {
    private static let withheld: Set<String> = [
        "host", "connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
        "content-length", "content-type", "expect", "range", "if-range", "if-match", "if-none-match",
        "if-modified-since", "if-unmodified-since", "accept-encoding", "cookie", "authorization", "origin",
        "referer", "cache-control", "pragma", "icy-metadata", "upgrade-insecure-requests", "priority", "via",
        "forwarded", "dnt",
    ]
    private static let withheldPrefixes = ["sec-", "proxy-", "x-forwarded-", "streamcache-"]

    /// The fields of `request` (name and value pairs, in order) to send to the origin.
    static func of<Fields: Sequence>(_ request: Fields) -> [HeaderField] where Fields.Element == (String, String) {
        let fields = Array(request)
        let hopNames = Set(
            fields.filter { $0.0.lowercased() == "connection" }
                .flatMap { $0.1.split(separator: ",") }
                .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        )
        return fields.compactMap { name, value in
            let lowered = name.lowercased()
            guard !withheld.contains(lowered), !hopNames.contains(lowered),
                !withheldPrefixes.contains(where: { lowered.hasPrefix($0) })
            else { return nil }
            return HeaderField(name, value)
        }
    }

    /// `configured`, with `request`'s fields added for the first origin; a field the user
    /// configured keeps the user's value.
    static func adding(_ request: [HeaderField], to configured: OriginHeaders) -> OriginHeaders {
        guard !request.isEmpty else { return configured }
        let set = Set(configured.rules.filter { $0.host == nil }.map { $0.field.name.lowercased() })
        let added = request.filter { !set.contains($0.name.lowercased()) }.map {
            OriginHeaders.Rule(host: nil, field: $0)
        }
        // The configured headers as they are, cookies (`serve -b`) included, and the player's.
        var merged = configured
        merged.rules += added
        return merged
    }
}
