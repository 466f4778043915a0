import Foundation
import StreamCache

/// URLs with a custom scheme, which AVFoundation hands to a resource loader delegate instead of
/// loading them itself: `https://host/ep.mp3` ↔ `streamcache-https://host/ep.mp3`.
public enum CustomSchemeURL {
    /// The prefix put before `http` or `https`.
    public static let prefix = "streamcache-"

    /// The custom-scheme URL that stands for `url`; `nil` unless `url` is http(s).
    public static func wrapping(_ url: URL) -> URL? {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true),
            let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https"
        else { return nil }
        components.scheme = prefix + scheme
        return components.url
    }

    /// The http(s) URL a custom-scheme URL stands for; `nil` for any other URL.
    public static func origin(of url: URL) -> URL? {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true),
            let scheme = components.scheme?.lowercased(), scheme.hasPrefix(prefix)
        else { return nil }
        let original = String(scheme.dropFirst(prefix.count))
        guard original == "http" || original == "https", components.host?.isEmpty == false else { return nil }
        components.scheme = original
        return components.url
    }
}
