import Foundation

/// Which web pages may use the proxy: none, unless the user names them with `--allow-origin`.
///
/// The `Host` check stops DNS rebinding, but a page can still send blind requests to
/// `http://127.0.0.1:PORT/…` (`<img>`, `fetch` in no-cors mode) that carry the `-H` headers, fill
/// the cache and trigger eviction. Browsers mark such requests with `Origin` or
/// `Sec-Fetch-Site: cross-site`/`same-site`; players send neither.
public struct WebPagePolicy: Sendable {
    /// The web origins allowed, as the browser spells them in `Origin` (`https://player.example`).
    private let allowed: Set<String>

    /// - Parameter allowedOrigins: web origins the user trusts (`--allow-origin`).
    public init(allowedOrigins: [String] = []) {
        allowed = Set(allowedOrigins.map(Self.normalized))
    }

    /// What to do with a request that carries these headers.
    public enum Verdict: Equatable, Sendable {
        /// Not from a web page: serve it.
        case serve
        /// From a page the user allowed: serve it, with CORS headers naming `origin`.
        case serveTo(origin: String)
        /// From a web page: refuse with `403` and this reason.
        case refuse(String)
    }

    /// Judges a request by its `Origin`, `Sec-Fetch-Site` and `Referer` headers (each as the
    /// client sent it, several values joined with commas).
    ///
    /// A media element's request (`<video src>`) carries no `Origin`, only `Sec-Fetch-Site` and,
    /// by the browsers' default referrer policy, the page's origin as `Referer`: that names an
    /// allowed page. A browser too old to send `Sec-Fetch-Site` still sends `Referer`, so a
    /// request that names a web page there is one from that page. `Sec-Fetch-Site` values other
    /// than `none` and `same-origin`, however spelled or repeated, are from web pages.
    ///
    /// - Parameter isThisServer: whether a `host[:port]` names the proxy, whose own pages (a
    ///   playlist opened in a browser) may refer to it.
    public func judge(
        origin: String?,
        fetchSite: String?,
        referer: String? = nil,
        isThisServer: (String) -> Bool = { _ in false }
    ) -> Verdict {
        if let origin {
            if allowed.contains(Self.normalized(origin)) { return .serveTo(origin: origin) }
            return .refuse(
                "requests from web pages are refused (Origin: \(Self.printable(origin))); see --allow-origin"
            )
        }
        // Players send neither field: nothing more to look at.
        guard fetchSite != nil || referer != nil else { return .serve }
        let page = referer.flatMap(Self.origin(ofPage:))
        let pageAllowed = page.map(allowed.contains) ?? false
        let sites = (fetchSite ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        if let site = sites.first(where: { $0 != "none" && $0 != "same-origin" }) {
            if pageAllowed { return .serve }
            return .refuse(
                "requests from web pages are refused (Sec-Fetch-Site: \(Self.printable(site))); see --allow-origin"
            )
        }
        if let page, !pageAllowed, !isThisServer(page.split(separator: "/").last.map(String.init) ?? "") {
            return .refuse("requests from web pages are refused (Referer: \(Self.printable(page))); see --allow-origin")
        }
        return .serve
    }

    /// `scheme://host[:port]` of a page URL, lowercased.
    private static func origin(ofPage url: String) -> String? {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty
        else { return nil }
        return normalized("\(scheme)://\(host)" + (components.port.map { ":\($0)" } ?? ""))
    }

    /// Checks an `--allow-origin` value: `scheme://host[:port]`, no path.
    public static func isValidOrigin(_ text: String) -> Bool {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty
        else { return false }
        return components.path.isEmpty && components.query == nil && components.user == nil
    }

    private static func normalized(_ origin: String) -> String {
        var text = origin.trimmingCharacters(in: .whitespaces).lowercased()
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }

    /// At most 100 printable ASCII characters of a header value, for a one-line reason.
    private static func printable(_ value: String) -> String {
        String(value.unicodeScalars.filter { $0.value >= 0x20 && $0.value < 0x7F }.prefix(100).map(Character.init))
    }
}
