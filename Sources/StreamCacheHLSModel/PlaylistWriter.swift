import Foundation

/// Writes playlists as text. Tags that stay in force (`EXT-X-KEY`, `EXT-X-MAP`, `EXT-X-BITRATE`)
/// are written where they change; byte ranges always with their offset.
enum PlaylistWriter {
    static func text(of playlist: MultivariantPlaylist) -> String {
        var lines = ["#EXTM3U"]
        lines += headerLines(playlist.header)
        lines += playlist.sessionData.map { "#EXT-X-SESSION-DATA:\($0.text)" }
        lines += playlist.sessionKeys.map { "#EXT-X-SESSION-KEY:\($0.attributes.text)" }
        lines += playlist.renditions.map { "#EXT-X-MEDIA:\($0.attributes.text)" }
        lines += playlist.iframeVariants.map { "#EXT-X-I-FRAME-STREAM-INF:\($0.attributes.text)" }
        for variant in playlist.variants {
            lines += variant.leadingLines
            lines.append("#EXT-X-STREAM-INF:\(variant.attributes.text)")
            lines.append(variant.uri)
        }
        lines += playlist.trailingLines
        return lines.joined(separator: "\n") + "\n"
    }

    static func text(of playlist: MediaPlaylist) -> String {
        var lines = ["#EXTM3U"]
        if let version = playlist.header.version { lines.append("#EXT-X-VERSION:\(version)") }
        if let targetDuration = playlist.targetDuration { lines.append("#EXT-X-TARGETDURATION:\(targetDuration)") }
        lines.append("#EXT-X-MEDIA-SEQUENCE:\(playlist.mediaSequence)")
        if playlist.discontinuitySequence != 0 {
            lines.append("#EXT-X-DISCONTINUITY-SEQUENCE:\(playlist.discontinuitySequence)")
        }
        if let type = playlist.playlistType { lines.append("#EXT-X-PLAYLIST-TYPE:\(type)") }
        if playlist.iFramesOnly { lines.append("#EXT-X-I-FRAMES-ONLY") }
        var header = playlist.header
        header.version = nil
        lines += headerLines(header)
        var keys: [Key] = []
        var map: MediaInitialization?
        var bitrate: Int64?
        for segment in playlist.segments {
            lines += segment.leadingLines
            if segment.discontinuity { lines.append("#EXT-X-DISCONTINUITY") }
            if segment.keys != keys {
                lines +=
                    segment.keys.isEmpty
                    ? ["#EXT-X-KEY:METHOD=NONE"] : segment.keys.map { "#EXT-X-KEY:\($0.attributes.text)" }
                keys = segment.keys
            }
            if let segmentMap = segment.map, segmentMap != map {
                lines.append("#EXT-X-MAP:\(segmentMap.attributes.text)")
                map = segmentMap
            }
            if let segmentBitrate = segment.bitrate, segmentBitrate != bitrate {
                lines.append("#EXT-X-BITRATE:\(segmentBitrate)")
                bitrate = segmentBitrate
            }
            if let date = segment.programDateTime { lines.append("#EXT-X-PROGRAM-DATE-TIME:\(date)") }
            if segment.gap { lines.append("#EXT-X-GAP") }
            lines += segment.dateRanges.map { "#EXT-X-DATERANGE:\($0.text)" }
            lines.append("#EXTINF:\(decimal(segment.duration)),\(segment.title)")
            if let range = segment.byteRange { lines.append("#EXT-X-BYTERANGE:\(range)") }
            lines.append(segment.uri)
        }
        lines += playlist.trailingLines
        if playlist.endList { lines.append("#EXT-X-ENDLIST") }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func headerLines(_ header: PlaylistHeader) -> [String] {
        var lines: [String] = []
        if let version = header.version { lines.append("#EXT-X-VERSION:\(version)") }
        if header.independentSegments { lines.append("#EXT-X-INDEPENDENT-SEGMENTS") }
        if let start = header.start { lines.append("#EXT-X-START:\(start.text)") }
        lines += header.defines.map { "#EXT-X-DEFINE:\($0.text)" }
        return lines
    }

    /// A duration as a decimal-floating-point: `10`, `9.009`, never exponent notation.
    static func decimal(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        let text = "\(value)"
        return text.contains("e") ? String(format: "%.6f", value) : text
    }
}
