import Foundation
import StreamCache
import StreamCacheHLS

/// How a player reaches a URL's bytes through the cache.
public enum PlaybackRoute: Hashable, Sendable {
    /// Progressive media (MP3, M4A, MP4): through the resource loader, from the origin URL given
    /// here (AVFoundation gets its custom-scheme form).
    case resourceLoader(URL)
    /// HLS, and offline packages: through the in-app server, at this URL.
    case server(URL)
    /// Not an http(s) URL (a local file): the player loads it itself.
    case direct(URL)
}

/// Chooses the route for each episode: HLS (by the URL's extension, the content type an app
/// knows from its feed, or the one the cache recorded) through the in-app server, which AVPlayer
/// needs for media segments; progressive media through the resource loader; offline packages
/// through the server, with or without the origin.
public struct PlaybackRouter: Sendable {
    /// The server HLS and offline packages play through; started the first time it is needed.
    public let server: InAppServer

    public init(server: InAppServer) {
        self.server = server
    }

    /// The route for `url`.
    ///
    /// - Parameter contentType: the media type an app knows (an RSS enclosure's `type`), for a URL
    ///   whose path does not say it is a playlist. Without it, the type the cache recorded at an
    ///   earlier play is used; nothing is asked of the origin.
    /// - Throws: if the in-app server cannot start.
    public func route(_ url: URL, contentType: String? = nil) async throws -> PlaybackRoute {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            return .direct(url)
        }
        var type = contentType
        if type == nil, !PlaylistRewriter.names(url, contentType: nil) {
            type = await server.engine.cachedRanges(url)?.info.contentType
        }
        guard PlaylistRewriter.names(url, contentType: type) else { return .resourceLoader(url) }
        try await server.start()
        return .server(try await server.url(for: url))
    }

    /// The route for the offline package `id` of the server's library.
    ///
    /// - Throws: if the in-app server cannot start.
    public func route(offlinePackage id: String) async throws -> PlaybackRoute {
        try await server.start()
        return .server(try await server.url(forOfflinePackage: id))
    }
}
