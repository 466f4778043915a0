import Foundation
import StreamCache

#if canImport(UniformTypeIdentifiers)
import UniformTypeIdentifiers
#endif

/// The uniform type identifier AVFoundation wants in `contentType`: from the MIME type, else (for
/// a generic or missing one) the URL's extension, else the system's type database where there is
/// one, else the first bytes of the file. AVPlayer plays nothing typed `public.data`, so a type
/// none of these tell is reported as unknown, not guessed.
public enum UniformType {
    private static let byMIME: [String: String] = [
        "audio/mpeg": "public.mp3", "audio/mp3": "public.mp3", "audio/x-mp3": "public.mp3",
        "audio/mp4": "com.apple.m4a-audio", "audio/x-m4a": "com.apple.m4a-audio", "audio/m4a": "com.apple.m4a-audio",
        "audio/x-m4b": "public.mpeg-4-audio",
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
        // An audiobook (.m4b) is MPEG-4 audio; `com.apple.protected-mpeg-4-audio` is `.m4p`.
        "mp3": "public.mp3", "m4a": "com.apple.m4a-audio", "m4b": "public.mpeg-4-audio",
        "aac": "public.aac-audio", "wav": "com.microsoft.waveform-audio", "aif": "public.aiff-audio",
        "aiff": "public.aiff-audio", "flac": "org.xiph.flac", "mp4": "public.mpeg-4", "m4v": "com.apple.m4v-video",
        "mov": "com.apple.quicktime-movie", "ts": "public.mpeg-2-transport-stream", "m3u8": "public.m3u-playlist",
    ]

    /// How many leading bytes ``identifier(leadingBytes:)`` looks at.
    public static let sniffedLength = 12

    /// The identifier for `mimeType` (parameters ignored), else for `url`'s extension, else the
    /// system's for either; `nil` when none tells (then sniff the first bytes).
    public static func identifier(mimeType: String?, url: URL) -> String? {
        let mime = mimeType?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
        if let mime, let identifier = byMIME[mime] { return identifier }
        let pathExtension = url.pathExtension.lowercased()
        if let identifier = byExtension[pathExtension] { return identifier }
        #if canImport(UniformTypeIdentifiers)
        if let mime, let type = UTType(mimeType: mime), type.conforms(to: .audiovisualContent) {
            return type.identifier
        }
        if !pathExtension.isEmpty, let type = UTType(filenameExtension: pathExtension),
            type.conforms(to: .audiovisualContent)
        {
            return type.identifier
        }
        #endif
        return nil
    }

    /// The identifier the first bytes of a file show (its magic numbers), or `nil`.
    public static func identifier(leadingBytes bytes: [UInt8]) -> String? {
        func ascii(_ range: Range<Int>) -> String? {
            guard bytes.count >= range.upperBound else { return nil }
            return String(decoding: bytes[range], as: UTF8.self)
        }
        if ascii(0..<3) == "ID3" { return "public.mp3" }
        if ascii(4..<8) == "ftyp" {
            switch ascii(8..<12) {
            case "M4A ", "M4B ": return "com.apple.m4a-audio"
            case "M4V ": return "com.apple.m4v-video"
            case "qt  ": return "com.apple.quicktime-movie"
            default: return "public.mpeg-4"
            }
        }
        if ascii(0..<4) == "RIFF", ascii(8..<12) == "WAVE" { return "com.microsoft.waveform-audio" }
        if ascii(0..<4) == "FORM", ascii(8..<12) == "AIFF" { return "public.aiff-audio" }
        if ascii(0..<4) == "fLaC" { return "org.xiph.flac" }
        if ascii(0..<7) == "#EXTM3U" { return "public.m3u-playlist" }
        if bytes.count >= 2, bytes[0] == 0xFF, bytes[1] & 0xE0 == 0xE0 {
            // An MPEG audio frame; layer bits 00 are ADTS (AAC).
            return bytes[1] & 0x06 == 0 ? "public.aac-audio" : "public.mp3"
        }
        if bytes.first == 0x47 { return "public.mpeg-2-transport-stream" }
        return nil
    }
}
