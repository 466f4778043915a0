import Testing

@testable import StreamCacheDASHModel

/// The `sidx` box of an on-demand representation: its subsegments, and the lies it refuses.
@Suite struct SegmentIndexBoxTests {
    /// A version 0 `sidx` with timescale 1000, first offset `firstOffset` and `references`
    /// (size word, duration).
    static func box(firstOffset: UInt32 = 0, count: UInt16? = nil, references: [(UInt32, UInt32)]) -> [UInt8] {
        func be32(_ value: UInt32) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }
        var body = be32(0) + be32(1) + be32(1000) + be32(0) + be32(firstOffset)
        let listed = count ?? UInt16(references.count)
        body += [0, 0, UInt8(listed >> 8), UInt8(listed & 0xFF)]
        for (size, duration) in references { body += be32(size) + be32(duration) + be32(0x9000_0000) }
        return be32(UInt32(8 + body.count)) + Array("sidx".utf8) + body
    }

    @Test func subsegmentsFollowTheBoxAndItsFirstOffset() throws {
        let bytes = Self.box(firstOffset: 10, references: [(100, 2000), (50, 1500)])
        let box = try SegmentIndexBox(bytes: bytes, boxOffset: 800)
        let start = Int64(800 + bytes.count + 10)
        #expect(box.references.map(\.range) == [start...(start + 99), (start + 100)...(start + 149)])
        #expect(box.references.map(\.duration) == [2, 1.5])
    }

    /// A version 1 box's 64-bit first offset, past what a file can hold, read at the largest
    /// offset an MPD's range may give.
    @Test func aFirstOffsetPastAnyFileIsRefused() {
        var bytes = Self.box(references: [(100, 1)])
        bytes[8] = 1  // version 1: 64-bit earliest presentation time and first offset
        let header = Array(bytes[0..<20]), rest = Array(bytes[28...])
        bytes = header + [0, 0, 0, 0] + [0, 0, 0, 0] + [0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xF0] + rest
        bytes[3] = UInt8(bytes.count)
        #expect {
            _ = try SegmentIndexBox(bytes: bytes, boxOffset: 1 << 62)
        } throws: { error in
            "\(error)".contains("past what a file can hold")
        }
    }

    @Test(arguments: [
        (Array("notabox!".utf8), "does not hold a sidx box"),
        (SegmentIndexBoxTests.box(count: 60000, references: [(1, 1)]), "cut short"),
        (SegmentIndexBoxTests.box(references: [(0x8000_0010, 1)]), "a hierarchy"),
        (SegmentIndexBoxTests.box(references: [(0, 1)]), "no valid size"),
    ])
    func aBoxThatLiesIsRefused(bytes: [UInt8], message: String) {
        #expect {
            _ = try SegmentIndexBox(bytes: bytes, boxOffset: 0)
        } throws: { error in
            "\(error)".contains(message)
        }
    }
}
