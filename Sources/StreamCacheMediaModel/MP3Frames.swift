/// MPEG audio (MP3, MP2) read frame by frame from its headers: where the audio starts (after an
/// ID3v2 tag) and how many bytes its first seconds take, from the file itself.
public enum MP3Frames {
    /// One frame header.
    public struct Header: Hashable, Sendable {
        /// The frame's bytes, header included.
        public let length: Int
        public let samples: Int
        public let sampleRate: Int
        /// Bits per second.
        public let bitrate: Int

        /// The header at `offset` of `bytes`, `nil` when the four bytes there are not one.
        public init?(_ bytes: some RandomAccessCollection<UInt8>, at offset: Int) {
            guard offset >= 0, offset + 4 <= bytes.count else { return nil }
            let start = bytes.index(bytes.startIndex, offsetBy: offset)
            let b1 = bytes[bytes.index(start, offsetBy: 1)]
            let b2 = bytes[bytes.index(start, offsetBy: 2)]
            guard bytes[start] == 0xFF, b1 & 0xE0 == 0xE0 else { return nil }
            let version = Int(b1 >> 3) & 3  // 3: MPEG-1, 2: MPEG-2, 0: MPEG-2.5
            let layer = Int(b1 >> 1) & 3  // 3: I, 2: II, 1: III
            let bitrateIndex = Int(b2 >> 4)
            let rateIndex = Int(b2 >> 2) & 3
            let padding = Int(b2 >> 1) & 1
            guard version != 1, layer != 0, bitrateIndex != 0, bitrateIndex != 15, rateIndex != 3 else { return nil }
            let mpeg1 = version == 3
            let kbps: [Int] =
                switch (mpeg1, layer) {
                case (true, 3): [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448]
                case (true, 2): [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384]
                case (true, _): [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
                case (false, 3): [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256]
                case (false, _): [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]
                }
            bitrate = kbps[bitrateIndex] * 1000
            sampleRate = [44100, 48000, 32000][rateIndex] >> (version == 3 ? 0 : version == 2 ? 1 : 2)
            if layer == 3 {
                samples = 384
                length = (12 * bitrate / sampleRate + padding) * 4
            } else {
                samples = layer == 1 && !mpeg1 ? 576 : 1152
                length = samples / 8 * bitrate / sampleRate + padding
            }
        }
    }

    /// The most frames one walk reads.
    public static let maximumFrames = 2_000_000

    /// Where the audio starts: after an ID3v2 tag, if the file starts with one; `nil` when
    /// `bytes` end before the tag's header does.
    public static func audioStart(_ bytes: some RandomAccessCollection<UInt8>) -> Int? {
        guard bytes.count >= 10 else { return nil }
        let head = Array(bytes.prefix(10))
        guard head[0] == UInt8(ascii: "I"), head[1] == UInt8(ascii: "D"), head[2] == UInt8(ascii: "3") else { return 0 }
        // The size is four 7-bit bytes; a footer adds ten more.
        let size = head[6...9].reduce(0) { $0 << 7 | Int($1 & 0x7F) }
        return 10 + size + (head[5] & 0x10 != 0 ? 10 : 0)
    }

    /// Whether the bytes look like MPEG audio: an ID3v2 tag, or two frames one after the other.
    public static func startsFile(_ bytes: some RandomAccessCollection<UInt8>) -> Bool {
        guard let start = audioStart(bytes) else { return false }
        if start > 0 { return true }
        guard let first = Header(bytes, at: 0) else { return false }
        return Header(bytes, at: first.length) != nil
    }

    /// How the walk from the audio's start to `seconds` ended.
    public enum Walk: Hashable, Sendable {
        /// The frames that start before `seconds` end at this byte of the file.
        case covered(end: Int)
        /// `bytes` end first: read on from `end`, where the next frame starts; `perSecond`
        /// estimates the bytes a second of the rest takes.
        case needsMore(end: Int, perSecond: Int)
        /// The audio ends (or stops being frames) at `end`, before `seconds`.
        case ended(end: Int)
    }

    /// Walks the frames of `bytes` (the file from its first byte) that start before `seconds`.
    public static func walk(_ bytes: some RandomAccessCollection<UInt8>, seconds: Double, from start: Int) -> Walk {
        var position = start
        var time = 0.0
        var frames = 0
        var perSecond = 16_000
        while time < seconds, frames < maximumFrames {
            guard position + 4 <= bytes.count else { return .needsMore(end: position, perSecond: perSecond) }
            guard let header = Header(bytes, at: position), header.length > 0 else { return .ended(end: position) }
            perSecond = header.bitrate / 8
            position += header.length
            time += Double(header.samples) / Double(header.sampleRate)
            frames += 1
        }
        return .covered(end: position)
    }
}
