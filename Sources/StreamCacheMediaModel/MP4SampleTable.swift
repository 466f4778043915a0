/// The sample tables of an ISO BMFF movie (`moov`): where each track's samples lie in the file
/// and when they play, so the bytes of a time span can be found without reading the media.
///
/// Only what that needs is read: each track's `mdhd` timescale and its `stts`, `stsc`, `stsz`
/// and `stco`/`co64`. Parsing is linear in the box's bytes, and a walk of the samples stops at
/// the time asked for or after ``maximumSamplesWalked`` samples (a table of 2^32 samples of one
/// size costs what its bytes do, not what it claims).
public struct MP4SampleTable: Sendable {
    /// The most samples one walk visits across the tracks.
    public static let maximumSamplesWalked = 20_000_000
    /// The most tracks a movie may have.
    public static let maximumTracks = 64

    /// One track's tables.
    public struct Track: Sendable {
        public let timescale: UInt32
        /// `stts`: runs of samples of one duration, as (count, duration).
        let timeToSample: [(count: UInt32, delta: UInt32)]
        /// `stsc`: from this 1-based chunk on, this many samples a chunk.
        let sampleToChunk: [(firstChunk: UInt32, samplesPerChunk: UInt32)]
        /// `stsz`: one size for every sample, or each sample's.
        let constantSize: UInt32
        let sizes: [UInt32]
        let sampleCount: UInt32
        /// `stco`/`co64`: where each chunk starts in the file.
        let chunkOffsets: [Int64]
    }

    public let tracks: [Track]

    /// Reads the sample tables of `moov`, the whole box (header included).
    ///
    /// - Throws: ``MP4Error`` for a box that is cut short, a table that claims more entries than
    ///   its bytes hold, or a movie with no track that has samples.
    public init(moov: [UInt8]) throws {
        guard let header = try MP4BoxHeader.read(moov, at: 0), header.type == "moov" else {
            throw MP4Error("the movie box does not start with 'moov'")
        }
        var tracks: [Track] = []
        for trak in try Self.children(of: moov, in: Self.body(header, of: moov)) where trak.type == "trak" {
            guard tracks.count < Self.maximumTracks else { throw MP4Error("the movie has more than 64 tracks") }
            if let track = try Self.track(moov, trak.range) { tracks.append(track) }
        }
        guard !tracks.isEmpty else { throw MP4Error("the movie has no track with samples") }
        self.tracks = tracks
    }

    /// The byte ranges of the file that hold every sample of every track that starts before
    /// `seconds` (decoding time), in file order, with ranges less than `joining` bytes apart
    /// joined into one.
    ///
    /// - Throws: ``MP4Error`` when the tables disagree (a chunk past the offsets, a sample past
    ///   the sizes) or the walk would pass ``maximumSamplesWalked``.
    public func byteRanges(before seconds: Double, joining gap: Int64 = 64 << 10) throws -> [Range<Int64>] {
        var budget = Self.maximumSamplesWalked
        var ranges: [Range<Int64>] = []
        for track in tracks {
            ranges += try track.byteRanges(before: seconds, budget: &budget)
        }
        ranges.sort { $0.lowerBound < $1.lowerBound }
        var joined: [Range<Int64>] = []
        for range in ranges {
            if let last = joined.last, range.lowerBound <= last.upperBound + gap {
                joined[joined.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                joined.append(range)
            }
        }
        return joined
    }

    // MARK: Boxes

    /// A child box: its type and the range of its body in the movie's bytes.
    private struct Child {
        let type: String
        let range: Range<Int>
    }

    private static func body(_ header: MP4BoxHeader, of bytes: [UInt8]) throws -> Range<Int> {
        let end = header.end.map { Int(clamping: $0) } ?? bytes.count
        guard end <= bytes.count else { throw MP4Error("box '\(header.type)' runs past the movie box") }
        return Int(header.bodyOffset)..<end
    }

    private static func children(of bytes: [UInt8], in range: Range<Int>) throws -> [Child] {
        var children: [Child] = []
        var position = range.lowerBound
        while position + 8 <= range.upperBound {
            guard let header = try MP4BoxHeader.read(bytes[..<range.upperBound], at: Int64(position)) else { break }
            let end = header.end.map { Int(clamping: $0) } ?? range.upperBound
            guard end <= range.upperBound else { throw MP4Error("box '\(header.type)' runs past its parent") }
            children.append(Child(type: header.type, range: Int(header.bodyOffset)..<end))
            position = end
        }
        return children
    }

    private static func child(_ type: String, of bytes: [UInt8], in range: Range<Int>) throws -> Range<Int>? {
        try children(of: bytes, in: range).first { $0.type == type }?.range
    }

    /// The track in `trak`, or `nil` for one with no samples.
    private static func track(_ bytes: [UInt8], _ trak: Range<Int>) throws -> Track? {
        guard let mdia = try child("mdia", of: bytes, in: trak),
            let mdhd = try child("mdhd", of: bytes, in: mdia),
            let minf = try child("minf", of: bytes, in: mdia),
            let stbl = try child("stbl", of: bytes, in: minf)
        else { return nil }
        let timescale = try Self.timescale(bytes, mdhd)
        var stts: Range<Int>?
        var stsc: Range<Int>?
        var stsz: Range<Int>?
        var stco: Range<Int>?
        var co64: Range<Int>?
        for box in try children(of: bytes, in: stbl) {
            switch box.type {
            case "stts": stts = box.range
            case "stsc": stsc = box.range
            case "stsz": stsz = box.range
            case "stco": stco = box.range
            case "co64": co64 = box.range
            default: break
            }
        }
        guard let stts, let stsc, let stsz, stco != nil || co64 != nil else { return nil }
        var reader = TableReader(bytes: bytes)
        let timeToSample = try reader.entries(stts, width: 8, name: "stts") {
            (count: $0.uint32(0), delta: $0.uint32(4))
        }
        let sampleToChunk = try reader.entries(stsc, width: 12, name: "stsc") {
            (firstChunk: $0.uint32(0), samplesPerChunk: $0.uint32(4))
        }
        guard stsz.count >= 12 else { throw MP4Error("the 'stsz' box is cut short") }
        let constantSize = BigEndian.uint32(bytes, stsz.lowerBound + 4)
        let sampleCount = BigEndian.uint32(bytes, stsz.lowerBound + 8)
        var sizes: [UInt32] = []
        if constantSize == 0 {
            guard Int(sampleCount) <= (stsz.count - 12) / 4 else {
                throw MP4Error("the 'stsz' box lists more samples than it holds")
            }
            sizes.reserveCapacity(Int(sampleCount))
            for index in 0..<Int(sampleCount) {
                sizes.append(BigEndian.uint32(bytes, stsz.lowerBound + 12 + 4 * index))
            }
        }
        let chunkOffsets: [Int64] =
            if let stco {
                try reader.entries(stco, width: 4, name: "stco") { Int64($0.uint32(0)) }
            } else {
                try reader.entries(co64!, width: 8, name: "co64") { Int64(clamping: $0.uint64(0)) }
            }
        guard sampleCount > 0, !chunkOffsets.isEmpty, timescale > 0 else { return nil }
        return Track(
            timescale: timescale,
            timeToSample: timeToSample,
            sampleToChunk: sampleToChunk,
            constantSize: constantSize,
            sizes: sizes,
            sampleCount: sampleCount,
            chunkOffsets: chunkOffsets
        )
    }

    private static func timescale(_ bytes: [UInt8], _ mdhd: Range<Int>) throws -> UInt32 {
        guard mdhd.count >= 4 else { throw MP4Error("the 'mdhd' box is cut short") }
        // A full box: version 1 has 64-bit creation and modification times.
        let offset = bytes[mdhd.lowerBound] == 1 ? 20 : 12
        guard mdhd.count >= offset + 4 else { throw MP4Error("the 'mdhd' box is cut short") }
        return BigEndian.uint32(bytes, mdhd.lowerBound + offset)
    }
}

extension MP4SampleTable.Track {
    /// The ranges of the chunks' samples that start before `seconds`, one range a chunk.
    func byteRanges(before seconds: Double, budget: inout Int) throws -> [Range<Int64>] {
        let limit = seconds * Double(timescale)
        var ranges: [Range<Int64>] = []
        var sample = 0
        var time = 0.0
        var run = 0
        var leftInRun = timeToSample.first.map { Int($0.count) } ?? 0
        var rule = 0
        chunks: for chunk in 0..<chunkOffsets.count {
            while rule + 1 < sampleToChunk.count, Int(sampleToChunk[rule + 1].firstChunk) <= chunk + 1 { rule += 1 }
            let perChunk = sampleToChunk.isEmpty ? 0 : Int(sampleToChunk[rule].samplesPerChunk)
            let start = chunkOffsets[chunk]
            var end = start
            for _ in 0..<perChunk {
                guard time < limit, sample < Int(sampleCount) else {
                    if end > start { ranges.append(start..<end) }
                    break chunks
                }
                budget -= 1
                guard budget >= 0 else {
                    throw MP4Error(
                        "the movie's sample tables list more than \(MP4SampleTable.maximumSamplesWalked) samples"
                    )
                }
                let size = constantSize != 0 ? constantSize : sizes[sample]
                end += Int64(size)
                sample += 1
                while leftInRun == 0, run + 1 < timeToSample.count {
                    run += 1
                    leftInRun = Int(timeToSample[run].count)
                }
                if leftInRun > 0 {
                    time += Double(timeToSample[run].delta)
                    leftInRun -= 1
                }
            }
            if end > start { ranges.append(start..<end) }
            if sample >= Int(sampleCount) || time >= limit { break }
        }
        return ranges
    }
}

/// Reads a full box's table: a version and flags, an entry count, then the entries.
private struct TableReader {
    let bytes: [UInt8]

    struct Entry {
        let bytes: [UInt8]
        let offset: Int
        func uint32(_ at: Int) -> UInt32 { BigEndian.uint32(bytes, offset + at) }
        func uint64(_ at: Int) -> UInt64 { BigEndian.uint64(bytes, offset + at) }
    }

    mutating func entries<T>(_ box: Range<Int>, width: Int, name: String, _ read: (Entry) -> T) throws -> [T] {
        guard box.count >= 8 else { throw MP4Error("the '\(name)' box is cut short") }
        let count = Int(BigEndian.uint32(bytes, box.lowerBound + 4))
        guard count <= (box.count - 8) / width else {
            throw MP4Error("the '\(name)' box lists more entries than it holds")
        }
        var entries: [T] = []
        entries.reserveCapacity(count)
        for index in 0..<count { entries.append(read(Entry(bytes: bytes, offset: box.lowerBound + 8 + width * index))) }
        return entries
    }
}
