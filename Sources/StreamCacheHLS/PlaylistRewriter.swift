import Foundation
import StreamCache
import StreamCacheHLSModel

/// Rewrites an HLS playlist so that everything it points to (variants, renditions, segments,
/// keys, init sections) is fetched through the proxy too, and so cached.
///
/// Every URI is resolved against the playlist's URL and written as `/<absolute URL>` (after the
/// access key of a server that has one: `/<key>/<absolute URL>`), which the player resolves
/// against the proxy's own address. URIs of other schemes (`file:`, `data:`, …)
/// become proxy paths as well, which the proxy refuses: a playlist never makes a player read a
/// local file.
package enum PlaylistRewriter: ManifestFormat {
    package static let documentName = "playlist"
    /// Playlists are read whole; anything larger is not one.
    package static let maximumSize = Int64(ManifestKind.largestDocument)
    package static let rewrittenType = "application/vnd.apple.mpegurl"
    /// A plain M3U list of links, passed on as it is.
    package static let plainType = "audio/x-mpegurl"

    /// Whether `contentType` makes a resource a playlist, or `nil` for a generic type (or none),
    /// which leaves it to the path.
    package static func typeNames(_ contentType: String?) -> Bool? {
        ManifestKind.judge(type: contentType, as: .hls)
    }

    /// Whether the path of `url` ends in a playlist's extension (`.m3u8`, `.m3u`).
    package static func pathNames(_ url: URL) -> Bool {
        ManifestKind.judge(path: url) == .hls
    }

    /// The playlist `bytes` (fetched from `url`) with its URIs pointing at the proxy, and
    /// whether it may change at the origin: a media playlist without `EXT-X-ENDLIST` (live or
    /// event) or a multivariant playlist. Text without `#EXTM3U` (a plain M3U list of links) is
    /// passed on as it is, and does not change.
    ///
    /// - Throws: ``HLSParseError`` if the bytes are a broken playlist or not text.
    package static func read(
        _ bytes: [UInt8],
        from url: URL,
        pathPrefix: String = ""
    ) throws(HLSParseError) -> ManifestReading {
        let playlist: Playlist
        do {
            playlist = try Playlist(parsing: bytes, url: url.absoluteString)
        } catch  where error.isMissingHeader {
            return ManifestReading(mayChange: false, rewritten: nil)
        }
        // A multivariant playlist lists what a stream offers, not where a live one is: its HTTP
        // freshness says how long it holds.
        let mayChange =
            switch playlist {
            case .multivariant: false
            case .media(let media): !media.endList
            }
        let rewritten = playlist.mappingURIs { pathPrefix + proxyPath(for: $0, relativeTo: url) }.text
        return ManifestReading(mayChange: mayChange, rewritten: rewritten)
    }

    /// `/<absolute URL>` of `uri` as seen from `base`.
    package static func proxyPath(for uri: String, relativeTo base: URL) -> String {
        let absolute = URL(string: uri, relativeTo: base)?.absoluteString ?? uri
        return "/" + absolute
    }
}
