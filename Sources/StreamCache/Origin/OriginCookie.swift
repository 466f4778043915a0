import Foundation

/// A cookie a user gives for origin requests (`-b`), as curl and yt-dlp take them: sent only to
/// the origins it matches by domain, path and scheme, never stored in the cache, its index or its
/// logs.
public struct OriginCookie: Hashable, Sendable {
    public var name: String
    public var value: String
    /// The host it is for; `nil` for the origin a read began at (a cookie given as `a=1`).
    public var domain: String?
    /// Whether hosts under ``domain`` get it too.
    public var includesSubdomains: Bool
    public var path: String
    /// Whether it goes over https only.
    public var secure: Bool
    /// When it expires, seconds since 1970; `nil` for a session cookie.
    public var expires: Double?

    public init(
        name: String,
        value: String,
        domain: String? = nil,
        includesSubdomains: Bool = false,
        path: String = "/",
        secure: Bool = false,
        expires: Double? = nil
    ) {
        self.name = name
        self.value = value
        self.domain = domain?.lowercased()
        self.includesSubdomains = includesSubdomains
        self.path = path
        self.secure = secure
        self.expires = expires
    }

    /// Whether it goes with a request for `url` at `now` (RFC 6265 §5.1.3, §5.1.4); a cookie of
    /// no domain goes when `url` is the origin the read began at (`sameOrigin`).
    public func matches(_ url: URL, sameOrigin: Bool, now: Date = Date()) -> Bool {
        if let expires, expires <= now.timeIntervalSince1970 { return false }
        if secure, url.scheme?.lowercased() != "https" { return false }
        let host = url.host?.lowercased() ?? ""
        if let domain {
            // RFC 6265 §5.1.3: a domain matches its subdomains, never a part of an IP address
            // (a cookie for `.0.0.1` is not 127.0.0.1's).
            guard host == domain || (includesSubdomains && !Self.isIPAddress(host) && host.hasSuffix("." + domain))
            else { return false }
        } else if !sameOrigin {
            return false
        }
        let requestPath = url.path.isEmpty ? "/" : url.path
        guard requestPath.hasPrefix(path) else { return false }
        return path.hasSuffix("/") || requestPath.count == path.count
            || requestPath[requestPath.index(requestPath.startIndex, offsetBy: path.count)] == "/"
    }

    /// Whether `host` is an IP address (four dotted decimal numbers, or IPv6) rather than a name.
    static func isIPAddress(_ host: String) -> Bool {
        if host.contains(":") { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4
            && parts.allSatisfy { !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isASCII) && Int($0) != nil }
    }

    /// `a=1; b=2` as cookies for the first origin.
    ///
    /// - Returns: `nil` if a part is not `name=value`, or holds a character a `Cookie` header
    ///   cannot carry.
    public static func parseList(_ text: String) -> [OriginCookie]? {
        var cookies: [OriginCookie] = []
        for part in text.split(separator: ";") {
            let pair = part.trimmingCharacters(in: .whitespaces)
            guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else { return nil }
            let name = String(pair[..<equals]), value = String(pair[pair.index(after: equals)...])
            guard isToken(name), isValue(value) else { return nil }
            cookies.append(OriginCookie(name: name, value: value))
        }
        return cookies.isEmpty ? nil : cookies
    }

    /// The cookies of a Netscape cookie file, as curl `-b FILE` and yt-dlp `--cookies FILE` read
    /// it: one per line, seven fields separated by tabs (domain, subdomains, path, secure,
    /// expires, name, value); `#` comments and blank lines skipped, `#HttpOnly_` kept.
    ///
    /// - Throws: ``StreamCacheError`` `invalidURL` naming the first line that is not a cookie.
    public static func parseNetscape(_ text: String) throws(StreamCacheError) -> [OriginCookie] {
        var cookies: [OriginCookie] = []
        for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var line = rawLine.hasSuffix("\r") ? rawLine.dropLast() : rawLine
            if line.hasPrefix("#HttpOnly_") {
                line = line.dropFirst("#HttpOnly_".count)
            } else if line.hasPrefix("#") || line.allSatisfy(\.isWhitespace) {
                continue
            }
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 7, !fields[0].isEmpty, !fields[5].isEmpty, let expires = Double(fields[4]),
                fields[2].hasPrefix("/"), ["TRUE", "FALSE"].contains(fields[1].uppercased()),
                ["TRUE", "FALSE"].contains(fields[3].uppercased()), isToken(fields[5]),
                isValue(fields[6])
            else {
                throw StreamCacheError(
                    .invalidURL,
                    "not a Netscape cookie file: line \(number + 1) is not 7 tab-separated fields "
                        + "(domain, subdomains, path, secure, expires, name, value)"
                )
            }
            let domain = fields[0].hasPrefix(".") ? String(fields[0].dropFirst()) : fields[0]
            cookies.append(
                OriginCookie(
                    name: fields[5],
                    value: fields[6],
                    domain: domain,
                    includesSubdomains: fields[1].uppercased() == "TRUE" || fields[0].hasPrefix("."),
                    path: fields[2],
                    secure: fields[3].uppercased() == "TRUE",
                    expires: expires == 0 ? nil : expires
                )
            )
        }
        return cookies
    }

    /// Whether `text` can be a cookie's value in a `Cookie` header: ASCII without control
    /// characters or `;` (RFC 6265 §4.1.1, less strict about blanks and quotes, as curl is).
    private static func isValue(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { $0.isASCII && $0.value >= 0x20 && $0.value != 0x7F && $0 != ";" }
    }

    private static func isToken(_ text: String) -> Bool {
        !text.isEmpty
            && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "!#$%&'*+-.^_`|~".contains($0)) }
    }
}
