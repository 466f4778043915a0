import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Where a package's remuxed file sits on the stream's clock: `origin`, the stream's start, and
/// `first`, the file's first timestamp, from which ffmpeg counts its positions.
struct PartTimeline {
    let origin: Double
    let first: Double

    /// The position ffmpeg seeks to in the file for `time` on the file's own clock.
    func position(of time: Double) -> Double { time - first }
}

/// The stretches of a package of sections between the gaps of its timeline, and their keyframes.
///
/// A part of a join starts at the keyframe at or before its section's start, as stream copy
/// must, but only one of its own stretch: a section that starts in a gap, or just before the
/// first frame after one, starts at that stretch's first keyframe, not at one of the section
/// before.
struct KeyframeRuns {
    struct Run {
        var start: Double
        var end: Double
        var keyframes: [Double]
    }

    let runs: [Run]

    /// The runs of `packets` (times in seconds, keyframes flagged): a gap is a step between two
    /// packets' times of ten times their usual one, and at least half a second.
    init(_ packets: [PackageMuxer.Packet]) {
        let sorted = packets.sorted { $0.time < $1.time }
        let steps = zip(sorted, sorted.dropFirst()).map { $1.time - $0.time }.sorted()
        let usual = steps.isEmpty ? 0 : steps[steps.count / 2]
        let gap = max(0.5, usual * 10)
        var runs: [Run] = []
        for packet in sorted {
            if var last = runs.last, packet.time - last.end <= gap {
                last.end = packet.time
                if packet.isKey { last.keyframes.append(packet.time) }
                runs[runs.count - 1] = last
            } else {
                runs.append(Run(start: packet.time, end: packet.time, keyframes: packet.isKey ? [packet.time] : []))
            }
        }
        self.runs = runs
    }

    /// Where a part showing what plays from `time` on starts: the last keyframe at or before it
    /// in the run that holds it, or the first keyframe of the run after the gap it falls in.
    func keyframe(before time: Double) -> Double {
        guard let run = runs.first(where: { $0.end >= time }) ?? runs.last else { return time }
        return run.keyframes.last { $0 <= time } ?? run.keyframes.first ?? run.start
    }
}

extension SectionCut {
    /// Cuts each section of `whole` into a part of its own, from its keyframe (``exact``: from
    /// its first frame), its timestamps from zero, and joins the parts one after the other in
    /// `temporary`, so that the file shows every frame each part holds. Only `temporary` is left.
    ///
    /// - Throws: ``CommandFailure`` when ffprobe cannot read the file's packets, or ffmpeg fails.
    func join(
        _ whole: String,
        on timeline: PartTimeline,
        format: String,
        to temporary: String,
        as path: String,
        with muxer: PackageMuxer,
        verbose: Bool
    ) async throws {
        guard let packets = await muxer.packets(of: whole) else {
            throw CommandFailure(
                "ffprobe could not read the timestamps of the package at \(asset.path) to join its sections"
            )
        }
        let runs = KeyframeRuns(packets)
        var written: [String] = []
        defer { for file in written { unlink(file) } }
        var list = ""
        for (index, section) in sections.enumerated() {
            let part = temporary + ".part-\(index + 1).nut"
            written.append(part)
            let start = timeline.origin + section.start
            let exactCut =
                exact
                ? await ExactCut.prepare(
                    whole,
                    first: timeline.first,
                    from: start,
                    to: section.end.map { timeline.origin + $0 },
                    with: muxer
                ) : nil
            let cutApart =
                try await exactCut?.write(to: part, format: "nut", scratch: part, with: muxer) { arguments, file in
                    try await muxer.run(arguments, writing: file, for: asset, path: path, verbose: verbose)
                } ?? false
            if !cutApart {
                // Just past the keyframe, so that a time rounded below it does not seek to the one
                // before, across a gap; the part starts at the keyframe all the same.
                let from = exact ? start : runs.keyframe(before: start) + 0.001
                var arguments = ["-nostdin", "-hide_banner", "-loglevel", "error", "-y"]
                arguments += ["-ss", Self.seconds(timeline.position(of: from))]
                if let end = section.end { arguments += ["-t", Self.seconds(timeline.origin + end - from)] }
                arguments += ["-i", whole, "-map", "0"] + (exact ? Self.exactCodecs : ["-c", "copy"])
                // An exact part's copied audio starts at its start too, not at the keyframe before.
                if exact { arguments += ["-copypriorss", "0"] }
                arguments += ["-avoid_negative_ts", "make_zero", "-f", "nut", part]
                try await muxer.run(arguments, writing: part, for: asset, path: path, verbose: verbose)
            }
            list += "file '\(part.replacingOccurrences(of: "'", with: "'\\''"))'\n"
        }
        let listFile = temporary + ".parts"
        written.append(listFile)
        try Data(list.utf8).write(to: URL(fileURLWithPath: listFile))
        try await muxer.run(
            ["-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-f", "concat", "-safe", "0", "-i", listFile]
                + ["-map", "0", "-c", "copy", "-f", format, temporary],
            writing: temporary,
            for: asset,
            path: path,
            verbose: verbose
        )
    }
}
