import StreamCacheMediaModel
import Testing

/// MPEG audio frames read from their headers: the lengths and durations the standard gives, an
/// ID3v2 tag skipped, and a walk that says whether the bytes it has cover the seconds asked for.
@Suite struct MP3FramesTests {
    /// MPEG-1 Layer III, 128 kbit/s, 44.1 kHz, no padding: 417 bytes of 1,152 samples.
    static let frame: [UInt8] = [0xFF, 0xFB, 0x90, 0x00] + [UInt8](repeating: 0, count: 413)

    @Test func headersGiveTheStandardsLengths() throws {
        let header = try #require(MP3Frames.Header(Self.frame, at: 0))
        #expect(
            header.length == 417 && header.samples == 1152 && header.sampleRate == 44100 && header.bitrate == 128_000
        )
        // Padded: one byte more.
        #expect(MP3Frames.Header([0xFF, 0xFB, 0x92, 0x00], at: 0)?.length == 418)
        // MPEG-2 Layer III, 64 kbit/s, 22.05 kHz: 576 samples, 72 × 64000 / 22050 bytes.
        let mpeg2 = try #require(MP3Frames.Header([0xFF, 0xF3, 0x80, 0x00], at: 0))
        #expect(mpeg2.samples == 576 && mpeg2.sampleRate == 22050 && mpeg2.length == 208)
        // A free-format or bad bitrate, a reserved rate, no sync: not a header.
        #expect(MP3Frames.Header([0xFF, 0xFB, 0x00, 0x00], at: 0) == nil)
        #expect(MP3Frames.Header([0xFF, 0xFB, 0xF0, 0x00], at: 0) == nil)
        #expect(MP3Frames.Header([0xFF, 0xFB, 0x9C, 0x00], at: 0) == nil)
        #expect(MP3Frames.Header(Array("ID3x".utf8), at: 0) == nil)
    }

    @Test func aWalkCoversTheSecondsAskedFor() {
        let stream = Array((0..<100).map { _ in Self.frame }.joined())
        // One second is 38.3 frames: the 39th starts before it ends.
        #expect(MP3Frames.walk(stream, seconds: 1, from: 0) == .covered(end: 39 * 417))
        #expect(
            MP3Frames.walk(Array(stream.prefix(10 * 417)), seconds: 1, from: 0)
                == .needsMore(end: 10 * 417, perSecond: 16_000)
        )
        #expect(
            MP3Frames.walk(Array(stream.prefix(10 * 417)) + [1, 2, 3, 4, 5], seconds: 1, from: 0)
                == .ended(end: 10 * 417)
        )
    }

    @Test func anID3TagIsSkipped() {
        // A tag of 300 body bytes (syncsafe 0x00 0x00 0x02 0x2C), then two frames.
        let tag: [UInt8] = Array("ID3".utf8) + [3, 0, 0, 0, 0, 0x02, 0x2C] + [UInt8](repeating: 0, count: 300)
        let file = tag + Self.frame + Self.frame
        #expect(MP3Frames.audioStart(file) == 310)
        #expect(MP3Frames.startsFile(file))
        #expect(MP3Frames.startsFile(Self.frame + Self.frame))
        #expect(!MP3Frames.startsFile(Self.frame + Array("garbage!".utf8)))
    }
}
