import Foundation
import StreamCache
import StreamCacheDASH
import StreamCacheHLS

/// The manifest formats the proxy rewrites.
enum ManifestFormats {
    static let all: [any ManifestFormat.Type] = [PlaylistRewriter.self, MPDRewriter.self]

    /// The format of a resource of `url` with `contentType`, if it is a manifest.
    static func format(of url: URL, contentType: String?) -> (any ManifestFormat.Type)? {
        all.first { $0.names(url, contentType: contentType) }
    }

    /// Whether `contentType` names a manifest format, or `nil` when none says so and one leaves
    /// it to the path.
    static func typeNames(_ contentType: String?) -> Bool? {
        var verdict: Bool? = false
        for format in all {
            switch format.typeNames(contentType) {
            case true?: return true
            case nil: verdict = nil
            case false?: break
            }
        }
        return verdict
    }

    /// Whether the path of `url` names a manifest format.
    static func pathNames(_ url: URL) -> Bool {
        all.contains { $0.pathNames(url) }
    }
}
