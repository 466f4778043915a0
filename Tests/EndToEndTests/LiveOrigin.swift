import Foundation
import StreamCacheTesting
import Testing

/// `Tests/Fixtures/live_origin.py`: the VOD media playlists of a folder served as live streams
/// that advance with the wall clock, by a server no StreamCache code is part of.
final class LiveOrigin: Sendable {
    let process: ChildProcess
    let base: String
    /// The folder it serves.
    let folder: String

    /// Serves `folder`: `--window N`, `--event`, `--start N`, `--period SECONDS`.
    init(folder: String, arguments: [String] = []) async throws {
        self.folder = folder
        let program = Fixtures.path("live_origin.py")
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-u", program, folder] + arguments
        let (out, _) = try process.startCapturing()
        self.process = process
        let line = try await out.firstLine()
        guard line.hasPrefix("listening on ") else {
            process.terminate()
            throw POSIXError(.EIO)
        }
        base = String(line.dropFirst("listening on ".count)).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func url(_ path: String) -> String { base + "/" + path }

    /// Requests so far, by path (with its query).
    func counts() async throws -> [String: Int] {
        let url = URL(string: base + "/_stats")!
        let data = try await onOwnThread { try Data(contentsOf: url) }
        return try JSONDecoder().decode([String: Int].self, from: data)
    }

    /// Requests so far, in order: seconds since the origin started and the path, one a line.
    func requestLog() async throws -> String {
        let url = URL(string: base + "/_log")!
        let data = try await onOwnThread { try Data(contentsOf: url) }
        let entries = try JSONSerialization.jsonObject(with: data) as? [[Any]] ?? []
        return entries.map { entry in
            String(format: "%.3f ", (entry.first as? Double) ?? 0) + ((entry.last as? String) ?? "")
        }.joined(separator: "\n")
    }

    /// `count` one-second segments of a test picture (a frame number burnt in by the encoder's
    /// timestamps) as a VOD playlist `vod.m3u8` with segments `s0.ts`, `s1.ts`, … in `folder`.
    static func makeSegments(in folder: String, count: Int) async throws -> [String] {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let made = try await Tool.run(
            "ffmpeg",
            [
                "-hide_banner", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=10:duration=\(count)",
                "-c:v", "libx264", "-preset", "ultrafast", "-g", "10", "-f", "hls", "-hls_time", "1",
                "-hls_playlist_type", "vod", "-hls_segment_filename", "\(folder)/s%d.ts", "\(folder)/vod.m3u8",
            ]
        )
        #expect(made.status == 0, "\(made.stderr)")
        return try String(contentsOfFile: folder + "/vod.m3u8", encoding: .utf8)
            .split(separator: "\n").filter { $0.hasSuffix(".ts") }.map(String.init)
    }

    deinit {
        if process.isRunning { process.terminate() }
    }
}
