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
        guard let host = url.host, !host.isEmpty else {
            throw StreamCacheError(.invalidURL, "URL has no host: \(url.absoluteString)")
        }
        if let port = url.port, !(1...65535).contains(port) {
            throw StreamCacheError(.invalidURL, "port \(port) is out of range (1-65535): \(url.absoluteString)")
        }
    }
}
