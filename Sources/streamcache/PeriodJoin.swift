import Foundation
import StreamCache
import StreamCacheDASHModel
import StreamCacheOffline

#if canImport(Glibc)
import Glibc
#endif

/// One file from a DASH package of several periods. ffmpeg's DASH demuxer plays an MPD's first
/// period only, so each period is written on its own, from an MPD of that period alone beside the
/// package's, and the parts are joined by ffmpeg's concat demuxer, all by stream copy. Stream copy
/// joins only parts of the same codecs and sizes, so periods that differ (an inserted
/// advertisement in another codec) are refused before anything is written.
struct PeriodJoin {
    let asset: OfflineAsset
    let presentation: MediaPresentation
    let periods: [XMLNode]

    /// The join of `asset`'s periods into the file at `path`; `nil` for a package of one period
    /// or one that is not DASH.
    ///
    /// - Throws: ``CommandFailure`` naming the first period whose codecs or sizes differ from the
    ///   first period's.
    init?(asset: OfflineAsset, path: String) throws {
        guard asset.path.hasSuffix(".mpd"), let data = FileManager.default.contents(atPath: asset.path),
            let presentation = try? MediaPresentation(parsing: [UInt8](data))
        else { return nil }
        let periods = presentation.root.elements("Period")
        guard periods.count > 1 else { return nil }
        let tracks = presentation.representations(documentURL: URL(fileURLWithPath: asset.path))
        let held = (0..<periods.count).map { index in Self.held(tracks.filter { $0.period == index }) }
        if let differing = held.firstIndex(where: { $0 != held[0] }) {
            throw CommandFailure(
                "-o joins periods only when their codecs and sizes match: period \(differing + 1) holds "
                    + "\(held[differing].joined(separator: ", ")) where period 1 holds \(held[0].joined(separator: ", ")); "
                    + "the package is kept at \(asset.path) and plays period by period"
            )
        }
        self.asset = asset
        self.presentation = presentation
        self.periods = periods
    }

    /// What stream copy must find the same in every part: each video and audio track's codecs
    /// and size.
    private static func held(_ tracks: [DASHRepresentation]) -> [String] {
        tracks.filter { ["video", "audio"].contains($0.contentType) }.map { track in
            var text = "\(track.contentType) \(track.codecs ?? "of unknown codecs")"
            if let width = track.width, let height = track.height { text += " \(width)x\(height)" }
            return text
        }.sorted()
    }

    /// Writes every period, then all of them joined, to `temporary` (a file of the container
    /// `path` names); nothing but `temporary` is left.
    func write(
        to temporary: String,
        as path: String,
        with muxer: PackageMuxer,
        audioOnly: Bool,
        verbose: Bool
    )
        async throws
    {
        let folder = LocalPath.folder(of: temporary)
        let name = LocalPath.lastComponent(of: temporary)
        let packageFolder = LocalPath.folder(of: asset.path)
        var written: [String] = []
        defer { for file in written { unlink(file) } }
        var parts: [String] = []
        for (index, period) in periods.enumerated() {
            let document = LocalPath.appending(".period-\(index + 1).\(getpid()).mpd", to: packageFolder)
            written.append(document)
            try Data(alone(period).xml().utf8).write(to: URL(fileURLWithPath: document))
            let part = LocalPath.appending("\(name).period-\(index + 1)", to: folder)
            written.append(part)
            try await muxer.write(
                entryPoint: document,
                of: asset,
                to: part,
                as: path,
                audioOnly: audioOnly,
                verbose: verbose
            )
            parts.append(part)
        }
        let list = LocalPath.appending("\(name).periods", to: folder)
        written.append(list)
        let lines = parts.map { "file '" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'\n" }
        try Data(lines.joined().utf8).write(to: URL(fileURLWithPath: list))
        let container = (path as NSString).pathExtension.lowercased()
        let arguments = [
            "-nostdin", "-hide_banner", "-loglevel", "error", "-y",
            "-f", "concat", "-safe", "0", "-i", list, "-map", "0", "-c", "copy",
            "-f", PackageMuxer.format(of: container), temporary,
        ]
        try await muxer.run(arguments, writing: temporary, for: asset, path: path, verbose: verbose)
    }

    /// The package's MPD with `period` alone, starting at 0.
    private func alone(_ period: XMLNode) -> XMLNode {
        var root = presentation.root
        var period = period
        let duration = period.attributes.removeValue(forKey: "duration")
        period.attributes["start"] = "PT0S"
        root.attributes["mediaPresentationDuration"] = duration
        root.children =
            root.children.filter {
                if case .element(let node) = $0 { node.localName != "Period" } else { true }
            } + [.element(period)]
        return root
    }
}
