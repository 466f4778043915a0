import Foundation
import StreamCache
import StreamCacheHLS

/// An HLS package's subtitle renditions as one WebVTT file each, for ``PackageMuxer``: ffmpeg's
/// HLS demuxer leaves subtitle renditions out, and reading a rendition's playlist as an input of
/// its own glues each segment's `WEBVTT` header into the cue before it.
///
/// Segments are joined in order, each without its header block; a cue a segmenter repeated at
/// the start of the next segment (the same timing line and text) is kept once. Cue times are kept
/// as the segments write them.
enum WebVTTJoin {
    /// A rendition written to a file: its path and language.
    struct Track {
        let path: String
        let language: String?
    }

    /// Writes each `SUBTITLES` rendition the package at `entryPoint` (its `master.m3u8`) lists
    /// into `folder`, named `.NAME.N.vtt`; none for a DASH package or a package without them.
    static func tracks(entryPoint: String, into folder: String, name: String) throws -> [Track] {
        guard entryPoint.hasSuffix(".m3u8"), let text = try? String(contentsOfFile: entryPoint, encoding: .utf8),
            case .multivariant(let playlist) = try Playlist(parsing: text)
        else { return [] }
        let base = LocalPath.folder(of: entryPoint)
        var tracks: [Track] = []
        for rendition in playlist.renditions where rendition.type == "SUBTITLES" {
            guard let uri = rendition.uri, !uri.contains("://") else { continue }
            let media = base + "/" + uri
            guard let mediaText = try? String(contentsOfFile: media, encoding: .utf8),
                case .media(let mediaPlaylist) = try Playlist(parsing: mediaText)
            else { continue }
            let mediaFolder = LocalPath.folder(of: media)
            let segments = mediaPlaylist.segments.compactMap { segment in
                try? String(contentsOfFile: mediaFolder + "/" + segment.uri, encoding: .utf8)
            }
            let path = folder + "/.\(name).\(tracks.count).vtt"
            try joined(segments).write(toFile: path, atomically: true, encoding: .utf8)
            tracks.append(Track(path: path, language: rendition.language))
        }
        return tracks
    }

    /// WebVTT segments as one document.
    static func joined(_ segments: [String]) -> String {
        var cues: [String] = []
        var seen: Set<String> = []
        for segment in segments {
            let blocks = segment.replacingOccurrences(of: "\r\n", with: "\n").components(separatedBy: "\n\n")
            for block in blocks.dropFirst() {
                let cue = block.trimmingCharacters(in: .newlines)
                guard cue.contains("-->"), !seen.contains(cue) else { continue }
                seen.insert(cue)
                cues.append(cue)
            }
        }
        return "WEBVTT\n\n" + cues.joined(separator: "\n\n") + "\n"
    }
}
