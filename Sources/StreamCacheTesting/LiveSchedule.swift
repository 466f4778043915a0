import Foundation
import StreamCacheHLSModel

/// VOD media playlists and static MPDs served as live streams that advance with the wall clock
/// (`streamcache origin DIR --live`): at first each lists its first ``window`` segments; each
/// next segment appears once its duration has passed, as a live packager publishes them. A
/// sliding window lists the last ``window`` segments; an `EVENT` lists every one from the first.
/// Once every segment is listed the playlist ends with `EXT-X-ENDLIST` and the MPD is static
/// again (the stream turns VOD).
public struct LiveSchedule: Sendable {
    /// Segments listed by a sliding window, and at first.
    public var window: Int
    /// `EXT-X-PLAYLIST-TYPE:EVENT`: segments are only added.
    public var isEvent: Bool
    /// When the streams began.
    public var started: ContinuousClock.Instant
    /// The same instant on the wall clock, for a live MPD's `availabilityStartTime`.
    let wallClockStart: Date

    public init(window: Int = 6, isEvent: Bool = false, started: ContinuousClock.Instant = .now) {
        self.window = max(1, window)
        self.isEvent = isEvent
        self.started = started
        self.wallClockStart = Date().addingTimeInterval(-Self.seconds(ContinuousClock.now - started))
    }

    /// How many of segments of `durations` (seconds) are listed `elapsed` seconds after the
    /// streams began: the first ``window`` at once, then each once its duration has passed
    /// after the one before.
    func listed(_ durations: [Double], elapsed: Double) -> Int {
        var listed = min(window, durations.count)
        var clock = 0.0
        while listed < durations.count, clock + durations[listed] <= elapsed {
            clock += durations[listed]
            listed += 1
        }
        return listed
    }

    /// The live view at `now` of the playlist `text`, with the number of segments it lists;
    /// `nil` for a multivariant playlist or one that does not parse (served as it is).
    func view(of text: [UInt8], at now: ContinuousClock.Instant = .now) -> (text: String, listed: Int)? {
        guard case .media(var playlist) = try? Playlist(parsing: text, url: ""), !playlist.segments.isEmpty else {
            return nil
        }
        let segments = playlist.segments
        let listed = listed(segments.map(\.duration), elapsed: Self.seconds(now - started))
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
