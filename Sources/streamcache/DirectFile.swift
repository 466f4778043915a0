import Foundation
import StreamCache

/// `download` of a URL that names a media file rather than a manifest (`episode.mp3`,
/// `talk.mp4`): the file itself, through the cache, with progress, as yt-dlp writes a direct
/// file. Its name is `-o`'s (a template's `%(title)s` and `%(id)s` the URL's file name without
/// its extension, `%(ext)s` that extension), else the URL's file name.
enum DirectFile {
    /// The extensions of the media files a URL may name directly.
    static let extensions: Set<String> = [
        "mp4", "m4v", "m4a", "mov", "mp3", "aac", "ogg", "oga", "opus", "flac", "wav", "webm", "mkv",
    ]

    /// Whether `url` names a media file by its path's extension.
    static func names(_ url: URL) -> Bool {
        extensions.contains(url.pathExtension.lowercased())
    }

    /// Where `download URL [-o TEMPLATE]` writes `url`.
    ///
    /// - Throws: ``OutputError`` when the URL names no file and no `-o` is given.
    static func path(of url: URL, template: String?) throws -> String {
        guard let name = RemoteFileName.of(url) else {
            throw OutputError("\(Credentials.redacted(url.absoluteString)) names no file; give one with -o FILE")
        }
        guard let template else { return name }
        let stem = OutputTemplate.safe((name as NSString).deletingPathExtension)
        return
            template
            .replacingOccurrences(of: "%(title)s", with: stem)
            .replacingOccurrences(of: "%(id)s", with: stem)
            .replacingOccurrences(of: "%(height)s", with: "NA")
            .replacingOccurrences(of: "%(ext)s", with: url.pathExtension.lowercased())
    }
}
