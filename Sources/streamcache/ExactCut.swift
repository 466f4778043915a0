import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A section cut at its exact frames that re-encodes only the partial groups of pictures at its
/// edges: the frames from START to the first keyframe inside the section (the head), and from
/// the last keyframe inside it to END (the tail), are encoded anew as H.264, and the whole groups
/// between them are copied as the source has them.
///
/// Every frame keeps its timestamp in the source, START made zero, as ffmpeg's accurate seek
/// with `-fps_mode passthrough` gives them: no frame added, none dropped. The parts are joined as
/// MPEG-TS, which carries each part's parameter sets in band, then muxed into the output (an MP4
/// names its video `avc3`, whose parameter sets may change in band). Audio is copied from its
/// first frame at or after START, as a joined section's is.
///
/// Only an H.264 video with closed groups of pictures, and a whole group inside the section, is
/// cut so (``prepare(_:inputOptions:first:from:to:reading:with:)`` and ``plan(_:from:to:)`` say
/// which), and only if ffmpeg copies the run planned (``write(to:format:scratch:with:run:)``
/// checks it); any other is re-encoded whole by its caller.
struct ExactCut {
    /// Where the parts of a cut lie, and how many frames each holds.
    struct Plan: Equatable {
        /// Frames re-encoded before the copied run (those from START on).
        var headFrames: Int
        /// The keyframe the copied run starts with: the first at or after START.
        var copyStart: Double
        /// Packets copied, in decode order.
        var copiedPackets: Int
        /// The keyframe the re-encoded tail starts with, the last inside the section; `nil`
        /// where the copy runs to the input's end.
        var tailStart: Double?
        /// Frames re-encoded from ``tailStart`` up to END.
        var tailFrames: Int
        /// How far the copied run's first decode time lies before its presentation time (its
        /// frames' reordering): the head's decode times are moved back by as much, so that they
        /// come before the copied run's.
        var reorderDelay: Double
    }

    /// What ffmpeg reads (a file, or the cache's loopback URL of one) and the options it reads
    /// it with.
    let input: String
    let inputOptions: [String]
    /// The input's first timestamp: ffmpeg's seek positions count from it.
    let first: Double
    /// The section on the input's clock; `end == nil`: to the input's end.
    let start: Double
    let end: Double?
    let plan: Plan
    /// Whether the input has audio, which is copied.
    let hasAudio: Bool

    /// The cut of `start..<end` of `input`, if its edges can be cut apart: an H.264 video and
    /// audio only, with a whole group of pictures inside the section; `nil` otherwise.
    ///
    /// `interval` limits what ffprobe reads to find the packets (`start%end` on the input's
    /// clock, for an input read over HTTP); `nil` reads all of it.
    static func prepare(
        _ input: String,
        inputOptions: [String] = [],
        first: Double,
        from start: Double,
        to end: Double?,
        reading interval: String? = nil,
        with muxer: PackageMuxer
    ) async -> ExactCut? {
        let streams = await muxer.probe(
            inputOptions + ["-v", "error", "-show_entries", "stream=codec_type,codec_name", "-of", "csv=p=0", input]
        )
        let kinds = (streams ?? "").split(whereSeparator: \.isNewline).map { $0.split(separator: ",").map(String.init) }
        let videos = kinds.filter { $0.last == "video" }
        guard videos.count == 1, videos[0].first == "h264",
            kinds.allSatisfy({ ["video", "audio"].contains($0.last ?? "") })
        else { return nil }
        guard let packets = await muxer.packets(of: input, options: inputOptions, reading: interval),
            let plan = plan(packets, from: start, to: end)
        else { return nil }
        return ExactCut(
            input: input,
            inputOptions: inputOptions,
            first: first,
            start: start,
            end: end,
            plan: plan,
            hasAudio: kinds.contains { $0.last == "audio" }
        )
    }

    /// Where the parts of `start..<end` lie among `packets` (in decode order); `nil` where no
    /// whole group of pictures lies inside the section, or the groups are open (a copied frame
    /// would refer to one before the run, or one of the run is stored outside it).
    static func plan(_ packets: [PackageMuxer.Packet], from start: Double, to end: Double?) -> Plan? {
        func inSection(_ time: Double) -> Bool { time >= start && end.map { time < $0 } ?? true }
        guard let first = packets.firstIndex(where: { $0.isKey && inSection($0.time) }) else { return nil }
        let copyStart = packets[first].time
        let last =
            end == nil
            ? nil
            : packets.indices.last { packets[$0].isKey && inSection(packets[$0].time) && packets[$0].time > copyStart }
        if end != nil, last == nil { return nil }
        let copyEnd = last ?? packets.endIndex
        let copyUntil = last.map { packets[$0].time } ?? .infinity
        func copied(_ packet: PackageMuxer.Packet) -> Bool { packet.time >= copyStart && packet.time < copyUntil }
        guard packets[first..<copyEnd].allSatisfy(copied),
            !packets[..<first].contains(where: copied), !packets[copyEnd...].contains(where: copied)
        else { return nil }
        return Plan(
            headFrames: packets.filter { $0.time >= start && $0.time < copyStart }.count,
            copyStart: copyStart,
            copiedPackets: copyEnd - first,
            tailStart: last.map { packets[$0].time },
            tailFrames: last == nil ? 0 : packets.filter { $0.time >= copyUntil && inSection($0.time) }.count,
            reorderDelay: max(0, copyStart - packets[first].decodeTime)
        )
    }

    /// Writes the cut to `output` as `format` (an ffmpeg muxer), its timestamps from zero at
    /// START, with `scratch` beside it for its parts; nothing but `output` is left.
    ///
    /// - Parameter run: runs ffmpeg with the arguments given, which write the file given.
    /// - Returns: `false`, with nothing written, where the copied run is not the one planned (a
    ///   seek that landed on another keyframe): the section is to be re-encoded whole.
    func write(
        to output: String,
        format: String,
        scratch: String,
        with muxer: PackageMuxer,
        run: (_ arguments: [String], _ writing: String) async throws -> Void
    ) async throws -> Bool {
        let head = scratch + ".head.ts"
        let copied = scratch + ".copied.ts"
        let tail = scratch + ".tail.ts"
        let audio = scratch + ".audio.ts"
        let video = scratch + ".video.ts"
        defer { for file in [head, copied, tail, audio, video] { unlink(file) } }
        let quiet = ["-nostdin", "-hide_banner", "-loglevel", "error", "-y"]
        // The video's parts keep the input's timestamps.
        let common = quiet + ["-copyts"]
        let transportStream = ["-f", "mpegts", "-mpegts_copyts", "1", "-mpegts_flags", "+initial_discontinuity"]
        var parts: [String] = []
        if plan.headFrames > 0 {
            // The head's decode times moved back before the copied run's (90 kHz ticks, the
            // encoder's time base).
            let delay = Int((plan.reorderDelay * 90_000).rounded(.up))
            try await run(
                common + ["-ss", position(start)] + inputOptions + ["-i", input, "-map", "0:v:0"] + Self.edgeCodec
                    + ["-frames:v", "\(plan.headFrames)"] + (delay > 0 ? ["-bsf:v", "setts=dts=DTS-\(delay)"] : [])
                    + transportStream + [head],
                head
            )
            parts.append(head)
        }
        // Just past the keyframe: a position rounded below it would seek to the one before.
        try await run(
            common + ["-ss", position(plan.copyStart + Self.nudge)] + inputOptions + ["-i", input, "-map", "0:v:0"]
                + ["-c:v", "copy", "-frames:v", "\(plan.copiedPackets)"] + transportStream + [copied],
            copied
        )
        parts.append(copied)
        let copiedPackets = await muxer.packets(of: copied) ?? []
        guard copiedPackets.count == plan.copiedPackets,
            let firstCopied = copiedPackets.first, abs(firstCopied.time - plan.copyStart) < Self.nudge
        else { return false }
        if let tailStart = plan.tailStart, plan.tailFrames > 0 {
            // Just before the keyframe: an accurate seek keeps the frames from its position on.
            try await run(
                common + ["-ss", position(tailStart - Self.nudge)] + inputOptions + ["-i", input, "-map", "0:v:0"]
                    + Self.edgeCodec + ["-frames:v", "\(plan.tailFrames)"] + transportStream + [tail],
                tail
            )
            parts.append(tail)
        }
        if hasAudio {
            // Timed from START, then moved back onto the input's clock: with the input's own
            // timestamps, stream copy would compare them with the seek's position as it is, and
            // keep the packets of the input's first seconds before START.
            try await run(
                quiet + ["-ss", position(start)]
                    + (end.map { ["-t", SectionCut.seconds($0 - start)] } ?? []) + inputOptions
                    + ["-i", input, "-map", "0:a", "-c", "copy", "-copypriorss", "0"]
                    + ["-output_ts_offset", SectionCut.seconds(start)] + transportStream + [audio],
                audio
            )
        }
        try Self.concatenate(parts, into: video)
        var arguments = common + ["-i", video] + (hasAudio ? ["-i", audio] : []) + ["-map", "0:v"]
        arguments +=
            (hasAudio ? ["-map", "1:a"] : []) + ["-c", "copy", "-output_ts_offset", SectionCut.seconds(-start)]
        if ["mp4", "mov"].contains(format) { arguments += ["-tag:v", "avc3"] }
        try await run(arguments + ["-f", format, output], output)
        return true
    }

    /// ffmpeg's seek position of `time` on the input's clock.
    private func position(_ time: Double) -> String { SectionCut.seconds(time - first) }

    /// The edges' codec: H.264 of the quality of its source, without reordering (so that the
    /// edges' decode times are their presentation times), each frame at its source time.
    static let edgeCodec = [
        "-c:v", "libx264", "-preset", "veryfast", "-crf", "18", "-bf", "0", "-fps_mode", "passthrough",
        "-enc_time_base", "1/90000",
    ]

    /// A seek's distance from a keyframe it must land on or after: less than any frame's
    /// duration.
    static let nudge = 0.0005

    /// Appends the files `parts` into `path`.
    private static func concatenate(_ parts: [String], into path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            throw CommandFailure("cannot write \(path): \(String(cString: strerror(errno)))")
        }
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? output.close() }
        for part in parts {
            let input = try FileHandle(forReadingFrom: URL(fileURLWithPath: part))
            defer { try? input.close() }
            while let chunk = try input.read(upToCount: 1 << 20), !chunk.isEmpty { try output.write(contentsOf: chunk) }
        }
    }
}
