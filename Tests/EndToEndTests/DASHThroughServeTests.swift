import Foundation
import StreamCacheTesting
import Testing

/// MPEG-DASH through `serve`, in the shapes ffmpeg's dash muxer writes and with an absolute
/// `BaseURL`: ffmpeg decodes each frame for frame as from the origin, a second play costs the
/// origin no body bytes, and a third plays with the origin stopped.
@Suite(.timeLimit(.minutes(3))) struct DASHThroughServeTests {
    enum Shape: String, CaseIterable, Sendable {
        /// `SegmentTemplate` with a `SegmentTimeline` (the muxer's default).
        case timeline
        /// `SegmentTemplate` with `$Number$` only.
        case number
        /// `SegmentList`.
        case list
        /// One file per representation, its segments addressed by `mediaRange`s.
        case singleFile
        /// The default shape under an absolute `BaseURL` naming the origin.
        case absoluteBase

        var muxerOptions: [String] {
            switch self {
            case .timeline, .absoluteBase: []
            case .number: ["-use_timeline", "0"]
            case .list: ["-use_template", "0", "-use_timeline", "0"]
            case .singleFile: ["-single_file", "1"]
            }
        }
    }

    /// A DASH presentation of `shape` in `folder`: video and audio in 2 s segments.
    static func make(_ shape: Shape, in folder: String) async throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let made = try await Tool.run(
            "ffmpeg",
            [
                "-hide_banner", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=10:duration=8",
                "-f", "lavfi", "-i", "sine=frequency=440:duration=8", "-c:v", "libx264", "-preset", "ultrafast",
                "-g", "10", "-c:a", "aac", "-f", "dash", "-seg_duration", "2",
            ] + shape.muxerOptions + [folder + "/manifest.mpd"]
        )
        #expect(made.status == 0, "\(made.stderr)")
    }

    /// What ffmpeg decodes from `url`: one line per frame of the streams `map` picks (every one
    /// by default).
    static func frames(_ url: String, map: String = "0") async throws -> [String] {
        let result = try await Tool.run(
            "ffmpeg",
            ["-hide_banner", "-v", "error", "-i", url, "-map", map, "-f", "framemd5", "-"]
        )
        #expect(result.status == 0, "ffmpeg \(url): \(result.stderr)")
        return result.output.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { String($0) }
    }

    @Test(arguments: Shape.allCases)
    func eachShapePlaysAsFromTheOriginThenFromTheCacheAlone(shape: Shape) async throws {
        let setup = try await ProxySetup()
        defer { setup.remove() }
        let folder = setup.workspace.originDirectory + "/dash"
        try await Self.make(shape, in: folder)
        if shape == .absoluteBase {
            let path = folder + "/manifest.mpd"
            let text = try String(contentsOfFile: path, encoding: .utf8)
            let based = text.replacingOccurrences(
                of: "<Period ",
                with: "<BaseURL>\(setup.origin.url("dash/"))</BaseURL>\n\t<Period "
            )
            try based.write(toFile: path, atomically: true, encoding: .utf8)
        }
        let direct = try await Self.frames(setup.origin.url("dash/manifest.mpd"))
        #expect(direct.count > 100)

        let first = try await Self.frames(setup.url("dash/manifest.mpd"))
        #expect(first == direct, "\(shape): \(first.count) frames through serve, \(direct.count) from the origin")
        let before = try await setup.origin.settledStats()
        let second = try await Self.frames(setup.url("dash/manifest.mpd"))
        #expect(second == direct)
        let after = try await setup.origin.settledStats()
        let sent = after.requests.dropFirst(before.requests.count).reduce(Int64(0)) { $0 + $1.bodyBytes }
        #expect(sent == 0, "\(shape): the second play cost the origin \(sent) body bytes")

        _ = try await setup.origin.end(with: SIGKILL)
        let third = try await Self.frames(setup.url("dash/manifest.mpd"))
        #expect(third == direct, "\(shape): \(third.count) frames with the origin stopped")
    }

    /// An on-demand presentation (`SegmentBase` with an `indexRange` into one file with a global
    /// `sidx`) through `serve` as the muxer's shapes: frame for frame as from the origin, a second
    /// play at no body bytes, a third with the origin stopped.
    @Test func anOnDemandPresentationPlaysAsFromTheOriginThenFromTheCacheAlone() async throws {
        let setup = try await ProxySetup()
        defer { setup.remove() }
        _ = try await DASHDownloadTests.makeOnDemand(in: setup.workspace.originDirectory + "/od")
        let direct = try await Self.frames(setup.origin.url("od/manifest.mpd"))
        #expect(direct.count == 80)
        let first = try await Self.frames(setup.url("od/manifest.mpd"))
        #expect(first == direct, "\(first.count) frames through serve, \(direct.count) from the origin")
        let before = try await setup.origin.settledStats()
        #expect(try await Self.frames(setup.url("od/manifest.mpd")) == direct)
        let after = try await setup.origin.settledStats()
        let sent = after.requests.dropFirst(before.requests.count).reduce(Int64(0)) { $0 + $1.bodyBytes }
        #expect(sent == 0, "the second play cost the origin \(sent) body bytes")
        _ = try await setup.origin.end(with: SIGKILL)
        #expect(try await Self.frames(setup.url("od/manifest.mpd")) == direct, "with the origin stopped")
    }

    /// GStreamer's `dashdemux` plays the muxer's default shape through `serve`: every frame, and
    /// again from the cache alone with the origin stopped.
    @Test func gstreamerPlaysThroughServeAndFromTheCacheAlone() async throws {
        let setup = try await ProxySetup()
        defer { setup.remove() }
        try await Self.make(.timeline, in: setup.workspace.originDirectory + "/dash")
        func videoFrames() async throws -> Int {
            let result = try await Tool.run(
                "gst-launch-1.0",
                [
                    "-v", "uridecodebin", "uri=" + setup.url("dash/manifest.mpd"), "caps=video/x-raw", "!",
                    "fakesink", "silent=false",
                ],
                timeout: .seconds(60)
            )
            #expect(result.status == 0, "\(result.stderr)")
            return result.output.split(separator: "\n").filter { $0.contains("chain") }.count
        }
        // 8 s at 10 frames a second.
        #expect(try await videoFrames() == 80)
        _ = try await setup.origin.end(with: SIGKILL)
        #expect(try await videoFrames() == 80)
    }
}
