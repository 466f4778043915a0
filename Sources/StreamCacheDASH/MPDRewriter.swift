import Foundation
import StreamCache
import StreamCacheDASHModel

/// Rewrites an MPEG-DASH MPD so that everything it points to (segments, initialization and index
/// segments, through `BaseURL`s and templates) is fetched through the proxy too, and so cached.
///
/// Every `BaseURL` (and `Location`) becomes `/<absolute URL>`, as a playlist's URIs do; absolute
/// templates and segment URLs too; relative ones then resolve against those, or against the
/// MPD's own proxy URL. A `dynamic` MPD is checked with the origin on every request. Content
/// protection is passed on as it is: the player makes its licence requests itself.
package enum MPDRewriter: ManifestFormat {
    package static let documentName = "MPD"
    /// MPDs are read whole; anything larger is not one.
    package static let maximumSize = Int64(ManifestKind.largestDocument)
    package static let rewrittenType = "application/dash+xml"
    package static let plainType = "application/dash+xml"

    package static func typeNames(_ contentType: String?) -> Bool? {
        ManifestKind.judge(type: contentType, as: .dash)
    }

    package static func pathNames(_ url: URL) -> Bool {
        ManifestKind.judge(path: url) == .dash
    }

    package static func read(_ bytes: [UInt8], from url: URL, pathPrefix: String) throws -> ManifestReading {
        let presentation = try MediaPresentation(parsing: bytes)
        return ManifestReading(
            mayChange: presentation.isDynamic,
            rewritten: presentation.mappingURLs(documentURL: url) { pathPrefix + "/" + $0 }.text
        )
    }
}
