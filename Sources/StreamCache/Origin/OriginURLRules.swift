import Foundation

/// What every URL the engine fetches must be, the first one and each redirect target alike.
enum OriginURLRules {
    /// Checks that `url` is an absolute http(s) URL with a host and a port the network can use.
    ///
    /// - Throws: ``StreamCacheError`` `unsupportedScheme` or `invalidURL`, one line naming why.
    static func check(_ url: URL) throws {
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
