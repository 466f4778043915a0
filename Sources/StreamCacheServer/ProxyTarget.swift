import Foundation
import HTTPTypes

/// The origin URL a proxy request names: `/<absolute http(s) URL>`, written as-is after the first
/// slash, query included (`/https://example.com/ep.mp3?t=1`). A path where a client collapsed
/// `//` to `/` (`/https:/example.com/ep.mp3`) is accepted too.
public struct ProxyTarget: Hashable, Sendable {
    /// The origin URL to fetch.
    public let url: URL

    /// Parses the request target (the path of the request line).
    ///
    /// - Throws: ``ProxyRefusal`` `400` for anything but an absolute http(s) URL with a host, for
    ///   credentials in the URL, dot-segments (`..`, also percent-encoded) and control characters;
    ///   `404` for a bare `/` or an unknown local path.
    public init(requestTarget target: String) throws {
        guard target.hasPrefix("/") else {
            throw ProxyRefusal(.badRequest, "the request target must be /<http or https URL>")
        }
        var text = String(target.dropFirst())
        guard !text.isEmpty else {
            throw ProxyRefusal(
                .notFound,
                "nothing here: request /<http or https URL>, e.g. /https://example.com/ep.mp3"
            )
        }
        guard !text.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value == 0x7F }) else {
            throw ProxyRefusal(.badRequest, "the URL holds spaces or control characters")
        }
        // The scheme's case, from the first characters only (this runs for each first touch).
        let lowered = text.prefix(8).lowercased()
        for scheme in ["http:/", "https:/"] where lowered.hasPrefix(scheme) && !lowered.hasPrefix(scheme + "/") {
            text.insert("/", at: text.index(text.startIndex, offsetBy: scheme.count))
        }
        guard let colon = text.firstIndex(of: ":"),
            text.utf8[..<colon].allSatisfy(Self.isASCIILetter) || text[..<colon].allSatisfy({ $0.isLetter })
        else {
            throw ProxyRefusal(.badRequest, "not an absolute URL; request /<http or https URL>")
        }
        let scheme = text[..<colon].lowercased()
        guard scheme == "http" || scheme == "https" else {
            throw ProxyRefusal(.badRequest, "unsupported URL scheme '\(scheme)' (only http and https)")
        }
        // Parsed once (RFC 3986, characters a URL may not hold percent-encoded), where
        // URLComponents' `url` parsed the text a second time, for each first touch of a segment.
        guard let url = URL(string: text) else {
            throw ProxyRefusal(.badRequest, "not a valid URL")
        }
        // The URL's host as written (`URLComponents.percentEncodedHost` runs IDNA on each call).
        guard let host = url.host(percentEncoded: true), !host.isEmpty else {
            throw ProxyRefusal(.badRequest, "the URL has no host")
        }
        guard url.user(percentEncoded: true) == nil, url.password(percentEncoded: true) == nil else {
            throw ProxyRefusal(.badRequest, "credentials in the URL are not accepted; configure a header instead")
        }
        let segments = url.path(percentEncoded: true).split(separator: "/", omittingEmptySubsequences: false)
        guard !segments.contains(where: { Self.isDotSegment($0) }) else {
            throw ProxyRefusal(.badRequest, "the URL path holds a '.' or '..' segment")
        }
        self.url = url
    }

    private static func isASCIILetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
    }

    /// `.`, `..` and their percent-encoded spellings (`%2e`, `%2E%2e`, …).
    private static func isDotSegment(_ segment: Substring) -> Bool {
        guard segment.utf8.count <= 6,
            segment.utf8.contains(where: { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "%") })
        else { return false }
        return dotSegments.contains(segment.lowercased())
    }

    private static let dotSegments: Set<String> = [".", "..", "%2e", "%2e%2e", ".%2e", "%2e."]
}
