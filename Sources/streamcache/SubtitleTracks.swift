import Foundation
import StreamCache
import StreamCacheDASHModel
import StreamCacheOffline

/// A package's subtitles as one WebVTT file per track, each given to ffmpeg as an input of its
/// own by ``PackageMuxer``: ffmpeg's HLS demuxer leaves subtitle renditions out (and reading a
/// rendition's playlist as an input glues each segment's `WEBVTT` header into the cue before it),
/// and its DASH demuxer stops the whole input early when a text representation is mapped.
///
/// An HLS rendition's segments are joined in order, each without its header block; a cue a
/// segmenter repeated at the start of the next segment (the same timing line and text) is kept
/// once; cue times are kept as the segments write them. A DASH text representation is one
/// WebVTT file in the package already.
enum SubtitleTracks {
    /// A track as one file: its path, its language, and whether it was written for the mux (and
    /// is deleted after it).
    struct Track {
        let path: String
        let language: String?
        let isJoined: Bool
    }

    /// The subtitle tracks of the package whose entry point is `entryPoint`; an HLS rendition's
    /// joined file is written into `folder`, named `.NAME.N.vtt`.
    static func of(entryPoint: String, into folder: String, name: String) throws -> [Track] {
        if entryPoint.hasSuffix(".mpd") { return dash(entryPoint) }
        return try hls(entryPoint: entryPoint, into: folder, name: name)
    }

    /// The text representations of a package's MPD that are one WebVTT file each.
    private static func dash(_ entryPoint: String) -> [Track] {
        guard let data = FileManager.default.contents(atPath: entryPoint),
            let presentation = try? MediaPresentation(parsing: Array(data))
        else { return [] }
        return presentation.representations(documentURL: URL(fileURLWithPath: entryPoint))
            .filter { $0.contentType == "text" && $0.addressing == nil && $0.baseURL.isFileURL }
            .filter { $0.baseURL.pathExtension.lowercased() == "vtt" }
            .map { Track(path: $0.baseURL.path, language: $0.language, isJoined: false) }
    }

    /// Each `SUBTITLES` rendition a package's `master.m3u8` lists, joined into one file.
    private static func hls(entryPoint: String, into folder: String, name: String) throws -> [Track] {
        guard let text = try? String(contentsOfFile: entryPoint, encoding: .utf8),
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
            tracks.append(Track(path: path, language: rendition.language, isJoined: true))
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
