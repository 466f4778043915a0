import Foundation
import StreamCache
import StreamCacheOffline

#if canImport(Glibc)
import Glibc
#endif

/// The time sections of a package as one file: of a package of sections
/// (`download --section … -o FILE`, `export ID FILE`), or a section of any package
/// (`export ID FILE --section …`).
///
/// A section's times count from where the stream begins, as a player's clock and ffmpeg's `-ss`
/// on the whole stream do: the earliest timestamp of the renditions' first segments, which a
/// package of sections keeps for this (``TimelineHead``), or where a whole package begins. The
/// package's segments are remuxed, their timestamps kept, into one file, and a section is cut
/// from it by stream copy from the keyframe at or before its start (``exact``: from its own
/// first frame, ``ExactCut``).
///
/// One section is cut as ffmpeg's `-ss/-to` cuts it: the frames from the keyframe to START are
/// stored, hidden by an edit list. Several are joined one after the other, each cut into a part
/// of its own that shows every frame from its keyframe (a join would show the hidden ones
/// anyway), so the file plays each section from its keyframe to its end.
struct SectionCut {
    let asset: OfflineAsset
    /// The sections in the order they play, one at least.
    let sections: [TimeSection]
    /// The package's first segments, paths in its folder; none where the package begins where
    /// the stream does (a whole stream, a recording).
    let heads: [TimelineHead]
    /// Cut at the section's exact frames (its first frame the one at START, as ffmpeg's accurate
    /// seek gives): the video's edges re-encoded as H.264 and the groups between copied
    /// (``ExactCut``), else the whole video re-encoded; the audio copied, cut at its frames.
    var exact = false

    /// The cut of `asset`'s sections; `nil` for a package of the whole stream.
    init?(asset: OfflineAsset) {
        guard let manifest = try? AssetManifest.load(from: LocalPath.folder(of: asset.path)),
            let sections = manifest.sections, !sections.sections.isEmpty
        else { return nil }
        self.asset = asset
        self.sections = sections.sections
        heads = manifest.timelineHeads ?? []
    }

    /// The cut of `section` from `asset` (`export ID FILE --section`): counted from where the
    /// stream begins, in a package of sections one of them must hold it; in a package of the
    /// whole stream or a recording, from where the package begins.
    ///
    /// - Throws: ``CommandFailure`` (64) for a section past the package's end, or outside the
    ///   sections it holds.
    init(asset: OfflineAsset, section: TimeSection) throws {
        let manifest = try? AssetManifest.load(from: LocalPath.folder(of: asset.path))
        if let held = manifest?.sections, !held.isWhole {
            let inside = held.sections.contains { kept in
                kept.start <= section.start && (kept.end ?? .infinity) >= (section.end ?? .infinity)
            }
            guard inside else {
                let sections = held.sections.map(\.description).joined(separator: ", ")
                throw CommandFailure(
                    "package \(asset.id) holds \(sections) of its stream, and \(section) is not inside it",
                    status: ExitStatus.usage
                )
            }
        } else if section.start >= asset.duration {
            throw CommandFailure(
                "section \(section) starts past the end of package \(asset.id), which lasts \(TimeSection.clock(asset.duration))",
                status: ExitStatus.usage
            )
        }
        self.asset = asset
        sections = [section]
        heads = manifest?.timelineHeads ?? []
    }

    /// Writes the sections to `temporary` (a file of the container `path` names); nothing but
    /// `temporary` is left.
    ///
    /// - Throws: ``CommandFailure`` when the stream's start cannot be read from the package, or
    ///   ffmpeg fails.
    func write(
        to temporary: String,
        as path: String,
        with muxer: PackageMuxer,
        audioOnly: Bool,
        verbose: Bool
    ) async throws {
        var written: [String] = []
        defer { for file in written { unlink(file) } }
        let origin = try await heads.isEmpty ? nil : streamStart(with: muxer, scratch: temporary, written: &written)
        let whole = temporary + ".nut"
        written.append(whole)
        let maps = audioOnly ? ["-map", "0:a"] : ["-map", "0:v?", "-map", "0:a?"]
        try await muxer.run(
            ["-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-copyts"] + PackageMuxer.packageInput
                + ["-i", asset.path] + maps + ["-c", "copy", "-f", "nut", whole],
            writing: whole,
            for: asset,
            path: path,
            verbose: verbose
        )
        // ffmpeg's positions count from the remuxed file's first timestamp.
        guard let first = await muxer.startTime(of: whole) else {
            throw CommandFailure(
                "ffmpeg wrote no timestamps for the package at \(asset.path); its sections cannot be cut"
            )
        }
        let format = PackageMuxer.format(of: (path as NSString).pathExtension.lowercased())
        if sections.count > 1 {
            let timeline = PartTimeline(origin: origin ?? first, first: first)
            try await join(whole, on: timeline, format: format, to: temporary, as: path, with: muxer, verbose: verbose)
            return
        }
        let section = sections[0]
        let shift = (origin ?? first) - first
        if exact, !audioOnly,
            let cut = await ExactCut.prepare(
                whole,
                first: first,
                from: first + shift + section.start,
                to: section.end.map { first + shift + $0 },
                with: muxer
            ),
            try await cut.write(
                to: temporary,
                format: format,
                scratch: temporary,
                with: muxer,
                run: { arguments, file in
                    try await muxer.run(arguments, writing: file, for: asset, path: path, verbose: verbose)
                }
            )
        {
            return
        }
        var arguments = ["-nostdin", "-hide_banner", "-loglevel", "error", "-y"]
        if section.start > 0 {
            arguments += ["-ss", Self.seconds(shift + section.start)]
            if let end = section.end { arguments += ["-t", Self.seconds(end - section.start)] }
        } else if let end = section.end {
            // From the stream's start: every packet, those timed before its first frame too.
            arguments += ["-to", Self.seconds(shift + end)]
        }
        arguments += ["-i", whole, "-map", "0"] + (exact ? Self.exactCodecs : ["-c", "copy"])
        arguments += ["-f", format, temporary]
        try await muxer.run(arguments, writing: temporary, for: asset, path: path, verbose: verbose)
    }

    /// The earliest timestamp of the renditions' first segments (each read after its init
    /// section, beside `scratch`).
    private func streamStart(
        with muxer: PackageMuxer,
        scratch: String,
        written: inout [String]
    ) async throws
        -> Double
    {
        let folder = LocalPath.folder(of: asset.path)
        var starts: [Double] = []
        for (index, head) in heads.enumerated() {
            let joined = scratch + ".head-\(index + 1)"
            written.append(joined)
            var bytes = Data()
            for file in [head.initialization, head.segment].compactMap({ $0 }) {
                guard let data = FileManager.default.contents(atPath: folder + "/" + file) else { continue }
                bytes += data
            }
            try bytes.write(to: URL(fileURLWithPath: joined))
            if let start = await muxer.startTime(of: joined) { starts.append(start) }
        }
        guard let start = starts.min() else {
            throw CommandFailure(
                "cannot tell where the stream's timeline begins from the package at \(asset.path), so its sections cannot be cut: "
                    + "play the package, or download without --section"
            )
        }
        return start
    }

    /// ffmpeg's codecs for an exact cut re-encoded whole (``ExactCut`` re-encodes only its
    /// edges where it can): H.264 of the quality of its source, each frame at its source time,
    /// the audio as it is.
    static let exactCodecs = [
        "-c:v", "libx264", "-preset", "veryfast", "-crf", "18", "-fps_mode", "passthrough", "-enc_time_base", "-1",
        "-c:a", "copy",
    ]

    static func seconds(_ value: Double) -> String { String(format: "%.6f", value) }
}
