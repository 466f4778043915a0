import Foundation
import StreamCacheOffline

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Plays HLS over HTTP the way AVPlayer does through an in-app server (AVPlayer loads media
/// segments over HTTP only, never through a resource loader): the multivariant playlist, the
/// chosen variant's media playlist and its default audio rendition's, the init section, then
/// segments in order; a seek jumps to another segment index, a variant switch loads the other
/// variant's playlist and goes on from the same index.
public struct HLSPlayerSimulator: Sendable {
    /// One response the player received.
    public struct Fetch: Sendable {
        /// The URL requested (with a `Range` for a byte-range segment).
        public let url: URL
        public let range: SegmentByteRange?
        public let bytes: [UInt8]
    }

    private let session: URLSession

    public init(session: URLSession = .shared) {
        self.session = session
    }

    /// Plays segments `segments` of variant `variant` (by order in the multivariant playlist) of
    /// the stream at `master`, with the variant's default audio rendition; of a media playlist,
    /// its own segments (`variant` is not looked at).
    ///
    /// - Returns: every response, playlists first.
    /// - Throws: ``SimulatorError`` for a status other than 200/206, a broken playlist or a
    ///   segment index the playlist does not have.
    public func play(_ master: URL, variant: Int, segments: Range<Int>) async throws -> [Fetch] {
        var fetches: [Fetch] = []
        let top = try await fetch(master)
        fetches.append(top)
        let multivariant: MultivariantPlaylist
        switch try playlist(top) {
        case .media:
            return try await playMedia(master, segments: segments)
        case .multivariant(let parsed):
            multivariant = parsed
        }
        guard multivariant.variants.indices.contains(variant) else {
            throw SimulatorError("\(master) has no variant \(variant)")
        }
        let chosen = multivariant.variants[variant]
        var media = [chosen.uri]
        if let group = chosen.audio,
            let audio = multivariant.renditions.first(where: {
                $0.type == "AUDIO" && $0.groupId == group && $0.isDefault
            }),
            let uri = audio.uri
        {
            media.append(uri)
        }
        for uri in media {
            fetches += try await playMedia(resolve(uri, against: master), segments: segments)
        }
        return fetches
    }

    private func playMedia(_ url: URL, segments: Range<Int>) async throws -> [Fetch] {
        let top = try await fetch(url)
        guard case .media(let media) = try playlist(top) else { throw SimulatorError("\(url) is not a media playlist") }
        guard segments.upperBound <= media.segments.count else {
            throw SimulatorError("\(url) has \(media.segments.count) segments, not \(segments.upperBound)")
        }
        var fetches = [top]
        if let map = media.segments[segments.lowerBound].map {
            fetches.append(try await fetch(resolve(map.uri, against: url), range: map.byteRange))
        }
        for segment in media.segments[segments] {
            fetches.append(try await fetch(resolve(segment.uri, against: url), range: segment.byteRange))
        }
        return fetches
    }

    private func playlist(_ fetch: Fetch) throws -> Playlist {
        do {
            return try Playlist(parsing: fetch.bytes, url: fetch.url.absoluteString)
        } catch {
            throw SimulatorError("\(fetch.url): \(error)")
        }
    }

    private func resolve(_ uri: String, against base: URL) throws -> URL {
        guard let url = URL(string: uri, relativeTo: base)?.absoluteURL else {
            throw SimulatorError("cannot resolve \(uri) against \(base)")
        }
        return url
    }

    private func fetch(_ url: URL, range: SegmentByteRange? = nil) async throws -> Fetch {
        var request = URLRequest(url: url)
        if let range {
            request.setValue("bytes=\(range.offset)-\(range.offset + range.length - 1)", forHTTPHeaderField: "Range")
        }
        let (data, response) = try await session.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == (range == nil ? 200 : 206) else { throw SimulatorError("\(url): status \(status)") }
        return Fetch(url: url, range: range, bytes: [UInt8](data))
    }
}
