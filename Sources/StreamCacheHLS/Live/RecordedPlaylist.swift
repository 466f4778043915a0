import Foundation
import StreamCacheOfflineCore

/// The media playlist of one rendition of a live recording, as its package has it: every segment
/// recorded so far, in order, numbered from the first. While the recording runs it is an `EVENT`
/// playlist (a player can start at its beginning, seek anywhere in it and follow its end); when
/// the recording ends it turns `VOD`.
///
/// Segments the recording lost (they left the origin's window before they could be fetched) are
/// not listed: the segment after them carries `EXT-X-DISCONTINUITY`, so a player never plays
/// across the hole as if the media were continuous.
struct RecordedPlaylist {
    private(set) var playlist: MediaPlaylist

    /// An empty recording of the live playlist `origin`: its version, target duration and
    /// independent-segments flag, no low-latency tags.
    init(origin: MediaPlaylist) {
        var playlist = MediaPlaylist()
        playlist.header.version = origin.header.version
        playlist.header.independentSegments = origin.header.independentSegments
        playlist.targetDuration = origin.targetDuration
        playlist.playlistType = "EVENT"
        self.playlist = playlist
    }

    /// The recording the package's playlist `text` holds (written by ``text(ended:)``).
    init?(text: String) {
        guard case .media(var playlist) = try? Playlist(parsing: Array(text.utf8), url: "") else { return nil }
        playlist.endList = false
        playlist.playlistType = "EVENT"
        self.playlist = playlist
    }

    /// Seconds recorded.
    var duration: Double { playlist.totalDuration }

    var segmentCount: Int { playlist.segments.count }

    /// Adds `segment` (already pointing at its package file) at the end; `afterLoss` marks the
    /// media before it missing.
    mutating func append(_ segment: Segment, afterLoss: Bool) {
        var segment = segment
        segment.leadingLines = segment.leadingLines.filter { !LowLatencyTags.isLowLatency($0) }
        if afterLoss && !playlist.segments.isEmpty { segment.discontinuity = true }
        if let duration = Int(exactly: segment.duration.rounded(.up)), duration > playlist.targetDuration ?? 0 {
            playlist.targetDuration = duration
        }
        playlist.segments.append(segment)
    }

    /// Drops the first `count` segments. (Each segment carries the key and map in force for it.)
    mutating func dropFirst(_ count: Int) {
        playlist.segments.removeFirst(min(count, playlist.segments.count))
        if !playlist.segments.isEmpty { playlist.segments[0].discontinuity = false }
    }

    /// Keeps the first `count` segments.
    mutating func keepFirst(_ count: Int) {
        playlist.segments.removeLast(max(0, playlist.segments.count - count))
    }

    /// The playlist's text: `EVENT` while recording, `VOD` with `EXT-X-ENDLIST` once `ended`.
    func text(ended: Bool) -> String {
        var playlist = playlist
        playlist.trailingLines = []
        if ended {
            playlist.playlistType = "VOD"
            playlist.endList = true
        }
        return Playlist.media(playlist).text
    }
}
