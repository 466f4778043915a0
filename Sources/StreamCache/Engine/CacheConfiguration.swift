import Foundation

/// How a ``CacheEngine`` behaves. The defaults suit a media player.
public struct CacheConfiguration: Sendable {
    /// The byte budget of the whole cache (least recently used resources go first).
    public var maxSize: Int64 = 2 << 30
    /// Free space data writes leave on the cache's filesystem, so the index can always record
    /// what was written and eviction can run: 2 MiB.
    public var diskReserve: Int64 = 2 << 20
    /// The longest a response is reused without asking the origin, whatever its freshness
    /// (RFC 9111 §4.2: `max-age`, `Expires`, or a heuristic) says; by default no limit.
    public var revalidationInterval: Duration = .seconds(100 * 365 * 86400)
    /// The longest heuristic freshness given a response that has `Last-Modified` and no explicit
    /// freshness (a tenth of its age, RFC 9111 §4.2.2).
    public var heuristicFreshnessLimit: Duration = .seconds(86400)
    /// Serve a stale copy with the origin unreachable even when the response says
    /// `must-revalidate` or `no-cache` (RFC 9111 §4.2.4 forbids it; a user may want the episode
    /// anyway).
    public var servesStaleAlways = false
    /// The share of the budget resources holding bytes only a prefetch brought may take (0 to
    /// 1): past it, the earliest prefetched go (``CacheEngine/evictPrefetched(beyond:)``).
    public var prefetchShare = 0.1
    /// Store responses marked `Cache-Control: no-store` from these URLs all the same (the user
    /// knowingly overrides the origin, RFC 9111 §3); by default none.
    public var storesNoStore: @Sendable (URL) -> Bool = { _ in false }
    /// A reader joins an in-flight fetch whose next byte is at most this far behind its position.
    public var joinDistance: Int64 = 256 << 10
    /// ...or whose next byte is at most this long away at the rate the fetch has shown.
    public var joinWait: Duration = .milliseconds(500)
    /// The largest chunk a reader is handed at once.
    public var readChunkSize: Int = 512 << 10
    /// A fetch asks the origin for this many bytes first, then for twice as many each time, up to
    /// ``maxFetchSpan``. A fetch whose readers left finishes the request it is in (for at most
    /// ``orphanGrace``), so no byte the origin sent is thrown away, and asks for no more.
    public var firstFetchSpan: Int64 = 1 << 20
    /// The largest span one origin request asks for.
    public var maxFetchSpan: Int64 = 16 << 20
    /// How far a fetch may run ahead of the nearest reader that wants its bytes before it asks
    /// for no more (the reader starts another fetch when it gets there); `nil`: no limit, a
    /// fetch runs at the origin's speed while a reader wants what it brings. A tool that reads
    /// a little and seeks away (ffmpeg cutting a section) sets one, so that what it would have
    /// left behind is not fetched.
    public var fetchAheadLimit: Int64?
    /// How long a fetch whose readers left may go on finishing the request it is in (at most
    /// ``maxFetchSpan`` bytes); past it the request is dropped, so a slow origin holds no
    /// connection for nobody.
    public var orphanGrace: Duration = .seconds(3)
    /// How long ``CacheEngine/shutdown()`` lets running fetches finish before it cancels them
    /// (what they wrote is still made durable and recorded).
    public var shutdownGrace: Duration = .milliseconds(250)
    /// Fetched bytes are synced and recorded every this many bytes...
    public var syncBytes: Int64 = 8 << 20
    /// ...or after this long, whichever comes first.
    public var syncInterval: Duration = .seconds(1)
    /// How long a resource's session stays open after its last reader went, so that a player's
    /// next request (often milliseconds later) finds it open rather than reopening it.
    public var idleLinger: Duration = .seconds(2)
    /// How often a reader waiting for bytes another process fetches looks in the index for them.
    public var sharedPollInterval: Duration = .milliseconds(100)
    /// A claim of another process's fetch that has recorded nothing for this long (seconds) is
    /// given up, as if that process had died: its bytes are fetched here.
    public var claimStaleAfter: Double = 20
    /// Attempts at a range without progress before a read fails on a transient origin error.
    public var maxAttempts: Int = 3
    /// Whether a read asks again after a `5xx` answer (within ``maxAttempts``). A proxy passes
    /// the first answer on and leaves the choice to the player (RFC 9111 §4: a cache forwards
    /// what the origin said), so the origin sees one request; a download retries.
    public var retriesErrorStatuses = true
    /// Redirects followed for one request, at most.
    public var maxRedirects: Int = 10
    /// Refuses a URL the engine would fetch (the first one or a redirect target): a reason, or
    /// `nil` to allow it. URLs that are not http(s) with a host and a valid port are always refused.
    public var refuseURL: @Sendable (URL) -> String? = { _ in nil }
    /// Whether ``refuseURL`` would wait to judge a URL (a name looked up): the engine judges such
    /// a URL on a thread of its own, and a server's event loop leaves it to a task. By default
    /// none does.
    public var refusalWaits: @Sendable (URL) -> Bool = { _ in false }
    /// The cache key of a URL (after ``keyRules``); by default ``canonicalKey(_:)``.
    public var key: @Sendable (URL) -> String = CacheConfiguration.canonicalKey
    /// Query parameters left out of cache keys (signing tokens that change every session).
    public var keyRules = CacheKeyRules()
    /// Whether the cache serves several users (`serve --shared`, or beyond loopback): it keeps a
    /// shared cache's duties (RFC 9111): `s-maxage` and `proxy-revalidate` apply, `private`
    /// responses are not stored, and a valid `CDN-Cache-Control` (RFC 9213) is taken instead of
    /// `Cache-Control`. A private cache (the default: one user's player, app or command) ignores them.
    public var isShared = false
    /// Whether content the origin coded though `Accept-Encoding: identity` asked for the content
    /// itself (a `Content-Encoding` such as `gzip`) is kept and read as it came, the field with it,
    /// as RFC 9111 §3 stores a response: for a proxy, whose clients decode it. Every other reader
    /// (a file, a package, the resource loader) needs the content: for it such an answer, or such
    /// a stored copy, fails the read with `encodedBody`, and nothing of it is kept.
    public var keepsEncodedContent = false
    /// A fresh URL for a resource whose URL the origin refused with `401` or `403` (a signed
    /// URL's token expired): given the key and the refused URL, the app answers a URL of the
    /// same key, or `nil` to pass the refusal on. Asked once per refused URL; the request is
    /// sent again with the answer, and later fetches use it.
    public var refreshURL: (@Sendable (_ key: String, _ refused: URL) async -> URL?)?

    /// The key `url` is stored under: ``key`` of `url` without the parameters ``keyRules``
    /// leave out.
    public func cacheKey(_ url: URL) -> String {
        key(keyRules.applied(to: url))
    }

    /// A digest of the values `url` gives the parameters ``keyRules`` leave out of its key, or
    /// `nil` (``CacheKeyRules/ignoredValuesDigest(of:)``).
    public func tokenDigest(_ url: URL) -> String? {
        keyRules.ignoredValuesDigest(of: url)
    }

    /// The URL as one resource is stored under however it is spelled: without its `#fragment`
    /// (never sent to an origin), scheme and host in lower case; path and query as they are.
    public static func canonicalKey(_ url: URL) -> String {
        let text = url.absoluteString
        // Most URLs are canonical as written: no parse then (a server keys each request).
        if url.baseURL == nil, isCanonical(text) { return text }
        return respelledKey(url)
    }

    /// The canonical key by way of `URLComponents`.
    static func respelledKey(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return url.absoluteString }
        components.fragment = nil
        components.scheme = components.scheme?.lowercased()
        components.percentEncodedHost = components.percentEncodedHost?.lowercased()
        return components.string ?? url.absoluteString
    }

    /// Whether `text` is an absolute `http` or `https` URL already in its canonical spelling:
    /// no fragment, and an authority of lower-case letters, digits, dots and dashes with perhaps
    /// a port of digits (no credentials, no IP literal, no percent-encoding, no leading zero).
    static func isCanonical(_ text: String) -> Bool {
        let bytes = text.utf8
        guard !bytes.contains(UInt8(ascii: "#")) else { return false }
        let rest: Substring.UTF8View
        if text.hasPrefix("http://") {
            rest = text.dropFirst(7).utf8
        } else if text.hasPrefix("https://") {
            rest = text.dropFirst(8).utf8
        } else {
            return false
        }
        let authority = rest.prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") }
        let host = authority.prefix { $0 != UInt8(ascii: ":") }
        let port = authority.dropFirst(host.count)
        let isHostByte = { (byte: UInt8) in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
        }
        guard !host.isEmpty, host.allSatisfy(isHostByte) else { return false }
        // A port as `URLComponents` writes it back: digits without a leading zero.
        let digits = port.dropFirst()
        return port.isEmpty
            || digits.first != UInt8(ascii: "0") && !digits.isEmpty
                && digits.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    /// The default configuration.
    public init() {}
}
