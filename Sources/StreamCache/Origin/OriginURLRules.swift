import Foundation

/// What every URL the engine fetches must be, the first one and each redirect target alike.
enum OriginURLRules {
    /// Checks that `url` is an absolute http(s) URL with a host and a port the network can use,
    /// and no credentials (they would be stored with the URL; send them as a header).
    ///
    /// - Throws: ``StreamCacheError`` `unsupportedScheme` or `invalidURL`, one line naming why;
    ///   credentials in the URL are never part of the message.
    static func check(_ url: URL) throws {
        do {
            try checkParts(url)
        } catch let error as StreamCacheError {
            throw StreamCacheError(error.kind, Credentials.redacted(error.message))
        }
        guard url.user == nil, url.password == nil else {
            throw StreamCacheError(
                .invalidURL,
                "credentials in the URL are not accepted (they would be stored with it); "
                    + "send an Authorization header instead: \(Credentials.redacted(url.absoluteString))"
            )
        }
    }

    private static func checkParts(_ url: URL) throws {
        guard let scheme = url.scheme?.lowercased() else {
            throw StreamCacheError(.invalidURL, "not an absolute URL: \(url.absoluteString)")
        }
        guard scheme == "http" || scheme == "https" else {
            throw StreamCacheError(
                .unsupportedScheme,
                "unsupported URL scheme '\(scheme)' (only http and https): \(url.absoluteString)"
            )
        }
        guard let host = url.host(percentEncoded: true), !host.isEmpty else {
            throw StreamCacheError(.invalidURL, "URL has no host: \(url.absoluteString)")
        }
        // From the text, not `url.port`: a number past 2^64 wraps around there (…551617 is 1).
        if let port = portText(of: url.absoluteString) {
            guard
                port.isEmpty
                    || port.count <= 5 && port.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                port.isEmpty || Int(Substring(port)).map({ (1...65535).contains($0) }) == true
            else {
                throw StreamCacheError(
                    .invalidURL,
                    "port \(Substring(port)) is out of range (1-65535): \(url.absoluteString)"
                )
            }
        }
    }

    /// The port as written in `text`'s authority (`nil` if none is written), on its bytes: this
    /// runs for each first touch of a segment.
    static func portText(of text: String) -> Substring.UTF8View? {
        let bytes = Substring(text).utf8
        // The scheme ends at the first colon.
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), bytes[colon...].starts(with: "://".utf8) else {
            return nil
        }
        let rest = bytes[colon...].dropFirst(3)
        var authority = rest.prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
        if let at = authority.lastIndex(of: UInt8(ascii: "@")) { authority = authority[authority.index(after: at)...] }
        if authority.first == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")) else { return nil }
            let after = authority[authority.index(after: close)...]
            return after.first == UInt8(ascii: ":") ? after.dropFirst() : nil
        }
        guard let colon = authority.lastIndex(of: UInt8(ascii: ":")) else { return nil }
        return authority[authority.index(after: colon)...]
    }
}
