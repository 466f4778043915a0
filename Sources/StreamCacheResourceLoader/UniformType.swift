import Foundation
import StreamCache

/// The uniform type identifier AVFoundation wants in `contentType`, from a MIME type or, when
/// the origin sent a generic one, the URL's extension.
public enum UniformType {
    private static let byMIME: [String: String] = [
        "audio/mpeg": "public.mp3", "audio/mp3": "public.mp3", "audio/x-mp3": "public.mp3",
        "audio/mp4": "com.apple.m4a-audio", "audio/x-m4a": "com.apple.m4a-audio", "audio/m4a": "com.apple.m4a-audio",
        "audio/aac": "public.aac-audio", "audio/aacp": "public.aac-audio", "audio/x-aac": "public.aac-audio",
        "audio/wav": "com.microsoft.waveform-audio", "audio/x-wav": "com.microsoft.waveform-audio",
        "audio/aiff": "public.aiff-audio", "audio/x-aiff": "public.aiff-audio",
        "audio/flac": "org.xiph.flac", "audio/x-flac": "org.xiph.flac",
        "video/mp4": "public.mpeg-4", "video/quicktime": "com.apple.quicktime-movie",
        "video/x-m4v": "com.apple.m4v-video", "video/mp2t": "public.mpeg-2-transport-stream",
        "application/vnd.apple.mpegurl": "public.m3u-playlist", "application/x-mpegurl": "public.m3u-playlist",
        "audio/mpegurl": "public.m3u-playlist", "audio/x-mpegurl": "public.m3u-playlist",
    ]
    private static let byExtension: [String: String] = [
        "mp3": "public.mp3", "m4a": "com.apple.m4a-audio", "m4b": "com.apple.protected-mpeg-4-audio",
        "aac": "public.aac-audio", "wav": "com.microsoft.waveform-audio", "aif": "public.aiff-audio",
        "aiff": "public.aiff-audio", "flac": "org.xiph.flac", "mp4": "public.mpeg-4", "m4v": "com.apple.m4v-video",
        "mov": "com.apple.quicktime-movie", "ts": "public.mpeg-2-transport-stream", "m3u8": "public.m3u-playlist",
    ]

    /// The identifier for `mimeType` (parameters ignored), else for `url`'s extension, else `public.data`.
    public static func identifier(mimeType: String?, url: URL) -> String {
        let mime = mimeType?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
        if let mime, let identifier = byMIME[mime] { return identifier }
        return byExtension[url.pathExtension.lowercased()] ?? "public.data"
    }
}
