import Foundation
import Testing

/// HLS streams made by ffmpeg for the tests, one folder per kind under an origin folder.
enum TestStreams {
    /// A kind of stream and the playlist a player opens, relative to the origin folder.
    enum Kind: String, CaseIterable, Sendable {
        /// MPEG-TS segments.
        case ts
        /// fMP4 segments with `EXT-X-MAP`.
        case fmp4
        /// One file of byte-range segments.
        case single
        /// AES-128.
        case aes
        /// One variant, alternate audio in two languages and WebVTT subtitles.
        case multi
        /// Two variants (320x240, 160x120) sharing two audio languages, MPEG-TS.
        case variants
        /// fMP4 in two parts of different sizes: a discontinuity and a new `EXT-X-MAP`.
        case discontinuity

        var playlist: String {
            switch self {
            case .multi, .variants: "\(rawValue)/master.m3u8"
            default: "\(rawValue)/index.m3u8"
            }
        }
    }

    /// Makes `kind` in `directory`; `seconds` long (default 6), 2 s segments.
    static func make(_ kind: Kind, in directory: String, seconds: Int = 6, videoBitrate: String? = nil) async throws {
        let folder = "\(directory)/\(kind.rawValue)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let input = [
            "-hide_banner", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=10:duration=\(seconds)",
            "-f", "lavfi", "-i", "sine=frequency=440:duration=\(seconds)",
        ]
        var encode = ["-c:v", "libx264", "-preset", "ultrafast", "-g", "10", "-c:a", "aac", "-b:a", "64k"]
        if let videoBitrate { encode += ["-b:v", videoBitrate] }
        let hls = ["-f", "hls", "-hls_time", "2", "-hls_playlist_type", "vod"]
        switch kind {
        case .ts:
            try await ffmpeg(input + encode + hls + ["\(folder)/index.m3u8"])
        case .fmp4:
            try await ffmpeg(input + encode + hls + ["-hls_segment_type", "fmp4", "\(folder)/index.m3u8"])
        case .single:
            try await ffmpeg(input + encode + hls + ["-hls_flags", "single_file", "\(folder)/index.m3u8"])
        case .aes:
            try Data((0..<16).map { UInt8($0 * 7) }).write(to: URL(fileURLWithPath: folder + "/enc.key"))
            try "enc.key\n\(folder)/enc.key\n".write(toFile: folder + "/keyinfo", atomically: true, encoding: .utf8)
            try await ffmpeg(
                input + encode + hls + ["-hls_key_info_file", folder + "/keyinfo", "\(folder)/index.m3u8"]
            )
        case .multi:
            try "WEBVTT\n\n00:00:00.000 --> 00:00:02.000\nHello\n\n00:00:02.000 --> 00:00:05.000\nWorld\n"
                .write(toFile: folder + "/subs.vtt", atomically: true, encoding: .utf8)
            try await ffmpeg(
                input + ["-f", "lavfi", "-i", "sine=frequency=880:duration=\(seconds)", "-i", folder + "/subs.vtt"]
                    + ["-map", "0:v", "-map", "1:a", "-map", "2:a", "-map", "3:s"] + encode + ["-c:s", "webvtt"] + hls
                    + [
                        "-master_pl_name", "master.m3u8", "-var_stream_map",
                        "v:0,s:0,agroup:aud,sgroup:subs a:0,agroup:aud,language:en,default:yes a:1,agroup:aud,language:de",
                        "\(folder)/p%v.m3u8",
                    ]
            )
        case .variants:
            try await ffmpeg(
                [
                    "-hide_banner", "-v", "error", "-f", "lavfi", "-i",
                    "testsrc=size=320x240:rate=10:duration=\(seconds)",
                    "-f", "lavfi", "-i", "sine=frequency=440:duration=\(seconds)",
                    "-f", "lavfi", "-i", "sine=frequency=880:duration=\(seconds)",
                    "-filter_complex", "[0:v]split=2[big][small];[small]scale=160:120[smaller]",
                    "-map", "[big]", "-map", "[smaller]", "-map", "1:a", "-map", "2:a",
                    "-c:v", "libx264", "-preset", "ultrafast", "-g", "10",
                    "-b:v:0", videoBitrate ?? "400k", "-b:v:1", "100k", "-c:a", "aac", "-b:a", "64k",
                ] + hls + [
                    "-master_pl_name", "master.m3u8", "-var_stream_map",
                    "v:0,agroup:aud v:1,agroup:aud a:0,agroup:aud,language:en,default:yes a:1,agroup:aud,language:de",
                    "\(folder)/p%v.m3u8",
                ]
            )
        case .discontinuity:
            var lines = ["#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-TARGETDURATION:2", "#EXT-X-PLAYLIST-TYPE:VOD"]
            for (part, size) in [("a", "160x120"), ("b", "320x240")] {
                try FileManager.default.createDirectory(atPath: "\(folder)/\(part)", withIntermediateDirectories: true)
                let source = [
                    "-hide_banner", "-v", "error", "-f", "lavfi", "-i",
                    "testsrc=size=\(size):rate=10:duration=\(seconds / 2)",
                    "-f", "lavfi", "-i", "sine=frequency=440:duration=\(seconds / 2)",
                ]
                try await ffmpeg(source + encode + hls + ["-hls_segment_type", "fmp4", "\(folder)/\(part)/index.m3u8"])
                let partLines = try String(contentsOfFile: "\(folder)/\(part)/index.m3u8", encoding: .utf8)
                    .split(separator: "\n").map(String.init)
                if part == "b" { lines.append("#EXT-X-DISCONTINUITY") }
                for line in partLines {
                    if line.hasPrefix("#EXT-X-MAP:URI=\"") {
                        lines.append(line.replacingOccurrences(of: "URI=\"", with: "URI=\"\(part)/"))
                    } else if line.hasPrefix("#EXTINF") {
                        lines.append(line)
                    } else if !line.hasPrefix("#") && !line.isEmpty {
                        lines.append("\(part)/\(line)")
                    }
                }
            }
            lines.append("#EXT-X-ENDLIST")
            try (lines.joined(separator: "\n") + "\n").write(
                toFile: "\(folder)/index.m3u8",
                atomically: true,
                encoding: .utf8
            )
        }
    }

    private static func ffmpeg(_ arguments: [String]) async throws {
        let made = try await Tool.run("ffmpeg", arguments)
        #expect(made.status == 0, "ffmpeg \(arguments.joined(separator: " ")): \(made.stderr)")
    }

    /// What ffmpeg decodes from `source`: one line per frame of every stream (`-f framemd5`;
    /// subtitles as their packets), without the header, so two sources of the same media compare
    /// equal. Local key files are allowed (ffmpeg refuses a local `.key` file by default). One
    /// decoding thread: where ffmpeg conceals errors (at a discontinuity whose new init section
    /// it does not apply) the frames it makes up then do not depend on thread timing.
    static func frames(_ source: String) async throws -> [String] {
        try await framesAndWarnings(source).frames
    }

    /// As ``frames(_:)``, with what ffmpeg warned of on the way (a segment it could not read
    /// and skipped, for one).
    static func framesAndWarnings(_ source: String) async throws -> (frames: [String], warnings: String) {
        let result = try await Tool.run(
            "ffmpeg",
            ["-hide_banner", "-v", "warning", "-allowed_extensions", "ALL", "-threads", "1", "-i", source]
                + ["-map", "0", "-c:s", "copy"]
                + ["-f", "framemd5", "-"]
        )
        #expect(result.status == 0, "ffmpeg \(source): \(result.stderr)")
        let frames = result.output.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init)
        return (frames, result.stderr)
    }
}
