import Foundation
import StreamCacheHLSModel

/// VOD media playlists served as live streams that advance with the wall clock (`streamcache
/// origin DIR --live`): at first each lists its first ``window`` segments; each next segment
/// appears once its duration has passed, as a live packager publishes them. A sliding window
/// lists the last ``window`` segments; an `EVENT` lists every one from the first. Once every
/// segment is listed the playlist ends with `EXT-X-ENDLIST` (the stream turns VOD).
public struct LiveSchedule: Sendable {
    /// Segments listed by a sliding window, and at first.
    public var window: Int
    /// `EXT-X-PLAYLIST-TYPE:EVENT`: segments are only added.
    public var isEvent: Bool
    /// When the streams began.
    public var started: ContinuousClock.Instant

    public init(window: Int = 6, isEvent: Bool = false, started: ContinuousClock.Instant = .now) {
        self.window = max(1, window)
        self.isEvent = isEvent
        self.started = started
    }

    /// The live view at `now` of the playlist `text`, with the number of segments it lists;
    /// `nil` for a multivariant playlist or one that does not parse (served as it is).
    func view(of text: [UInt8], at now: ContinuousClock.Instant = .now) -> (text: String, listed: Int)? {
        guard case .media(var playlist) = try? Playlist(parsing: text, url: ""), !playlist.segments.isEmpty else {
            return nil
        }
        let elapsed = Double((now - started).components.seconds) + Double((now - started).components.attoseconds) / 1e18
        let segments = playlist.segments
        let first = min(window, segments.count)
        // Segment k (past the first window) appears when the segments before it since the
        // window have played and it has too.
        var listed = first
        var clock = 0.0
        while listed < segments.count, clock + segments[listed].duration <= elapsed {
            clock += segments[listed].duration
            listed += 1
        }
        let dropped = isEvent ? 0 : max(0, listed - window)
        playlist.mediaSequence += Int64(dropped)
        playlist.discontinuitySequence += Int64(segments.prefix(dropped).filter(\.discontinuity).count)
        playlist.segments = Array(segments[dropped..<listed])
        playlist.playlistType = isEvent ? "EVENT" : nil
        playlist.endList = listed == segments.count
        if let map = segments[..<dropped].last(where: { $0.map != nil })?.map, playlist.segments[0].map == nil {
            playlist.segments[0].map = map
        }
        return (Playlist.media(playlist).text, listed)
    }
}
