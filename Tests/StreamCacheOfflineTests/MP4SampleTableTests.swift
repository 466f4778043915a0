import StreamCacheMediaModel
import Testing

/// The bytes of an MP4's first seconds, from its sample tables alone: chunk by chunk, across
/// tracks, at 64-bit offsets; tables that claim more than their bytes hold, or a walk that would
/// not end, are refused in one line and fast.
@Suite struct MP4SampleTableTests {
    @Test func theSamplesBeforeATimeAreTheirChunksBytes() throws {
        // 10 samples of 1 s and 100 bytes, 2 a chunk, chunks at 1000, 2000, …
        let table = try MP4SampleTable(moov: Self.movie([Self.track(samples: 10, perChunk: 2, chunkStarts: 1000)]))
        #expect(try table.byteRanges(before: 3, joining: 0) == [1000..<1200, 2000..<2100])
        #expect(try table.byteRanges(before: 3) == [1000..<2100])
        #expect(try table.byteRanges(before: 0.5, joining: 0) == [1000..<1100])
        // Past the end: every sample.
        #expect(try table.byteRanges(before: 60, joining: 0).count == 5)
    }

    @Test func tracksInterleaveAndLargeOffsetsHold() throws {
        let base: Int64 = 5 << 32
        let video = Self.track(samples: 10, perChunk: 1, chunkStarts: base, co64: true)
        let audio = Self.track(samples: 10, perChunk: 1, chunkStarts: base + 500, co64: true)
        let table = try MP4SampleTable(moov: Self.movie([video, audio]))
        #expect(table.tracks.count == 2)
        let ranges = try table.byteRanges(before: 2, joining: 0)
        #expect(
            ranges == [
                base..<base + 100, base + 500..<base + 600, base + 1000..<base + 1100, base + 1500..<base + 1600,
            ]
        )
    }

    @Test func tablesThatClaimMoreThanTheyHoldAreRefused() throws {
        var tooMany = Self.track(samples: 10, perChunk: 2, chunkStarts: 0)
        tooMany.sttsCount = 1_000_000
        #expect(throws: MP4Error.self) { try MP4SampleTable(moov: Self.movie([tooMany])) }
        var sizes = Self.track(samples: 10, perChunk: 2, chunkStarts: 0)
        sizes.stszCount = 4_000_000_000
        #expect(throws: MP4Error.self) { try MP4SampleTable(moov: Self.movie([sizes])) }
        let whole = Self.movie([Self.track(samples: 10, perChunk: 2, chunkStarts: 0)])
        #expect(throws: MP4Error.self) { try MP4SampleTable(moov: Array(whole.prefix(whole.count - 20))) }
        #expect(throws: MP4Error.self) { try MP4SampleTable(moov: Array("not a movie".utf8)) }
    }

    /// 2^32 samples of one size in one chunk, each 0 ticks long: time never passes, and the walk
    /// stops at its budget rather than visit four billion samples.
    @Test func aWalkThatWouldNotEndStopsAtItsBudget() throws {
        var endless = Self.track(samples: 1, perChunk: UInt32.max, chunkStarts: 0)
        endless.constantSize = 1
        endless.stszCount = UInt32.max
        endless.delta = 0
        endless.sttsSamples = UInt32.max
        let table = try MP4SampleTable(moov: Self.movie([endless]))
        #expect(throws: MP4Error.self) { try table.byteRanges(before: 1) }
    }

    // MARK: A movie built box by box

    struct Track {
        var samples: UInt32
        var perChunk: UInt32
        var chunkStarts: Int64
        var co64 = false
        var delta: UInt32 = 1000
        var sttsSamples: UInt32?
        var sttsCount: UInt32 = 1
        var constantSize: UInt32 = 0
        var stszCount: UInt32?
    }

    static func track(samples: UInt32, perChunk: UInt32, chunkStarts: Int64, co64: Bool = false) -> Track {
        Track(samples: samples, perChunk: perChunk, chunkStarts: chunkStarts, co64: co64)
    }

    static func movie(_ tracks: [Track]) -> [UInt8] {
        box("moov", box("mvhd", [UInt8](repeating: 0, count: 100)) + tracks.flatMap { trak($0) })
    }

    static func trak(_ track: Track) -> [UInt8] {
        let mdhd = box("mdhd", [0, 0, 0, 0] + be32(0) + be32(0) + be32(1000) + be32(0) + [0, 0, 0, 0])
        let stts = box(
            "stts",
            [0, 0, 0, 0] + be32(track.sttsCount) + be32(track.sttsSamples ?? track.samples) + be32(track.delta)
        )
        let stsc = box("stsc", [0, 0, 0, 0] + be32(1) + be32(1) + be32(track.perChunk) + be32(1))
        let sizes = track.constantSize == 0 ? (0..<track.samples).flatMap { _ in be32(100) } : []
        let stsz = box(
            "stsz",
            [0, 0, 0, 0] + be32(track.constantSize) + be32(track.stszCount ?? track.samples) + sizes
        )
        let chunks = UInt32((Int64(track.samples) + Int64(track.perChunk) - 1) / Int64(max(track.perChunk, 1)))
        let offsets = (0..<Int64(chunks)).map { track.chunkStarts + $0 * 1000 }
        let stco =
            track.co64
            ? box(
                "co64",
                [0, 0, 0, 0] + be32(chunks)
                    + offsets.flatMap { be32(UInt32($0 >> 32)) + be32(UInt32($0 & 0xFFFF_FFFF)) }
            )
            : box("stco", [0, 0, 0, 0] + be32(chunks) + offsets.flatMap { be32(UInt32($0)) })
        let stbl = box("stbl", stts + stsc + stsz + stco)
        return box("trak", box("mdia", mdhd + box("minf", stbl)))
    }

    static func box(_ type: String, _ body: [UInt8]) -> [UInt8] {
        be32(UInt32(body.count + 8)) + Array(type.utf8) + body
    }

    static func be32(_ value: UInt32) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }
}
