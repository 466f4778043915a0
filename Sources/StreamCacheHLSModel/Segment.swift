/// A media segment: `EXTINF`, the tags that apply to it, and its URI.
public struct Segment: Hashable, Sendable {
    public var uri: String
    /// Seconds, from `EXTINF`.
    public var duration: Double
    /// The title after the comma of `EXTINF`.
    public var title: String
    /// `EXT-X-BYTERANGE`, with an implicit offset already worked out.
    public var byteRange: SegmentByteRange?
    /// The `EXT-X-KEY`s in force (one per key format); empty when unencrypted.
    public var keys: [Key] = []
    /// The `EXT-X-MAP` in force.
    public var map: MediaInitialization?
    /// `EXT-X-DISCONTINUITY` before this segment.
    public var discontinuity = false
    /// `EXT-X-PROGRAM-DATE-TIME` of this segment, verbatim.
    public var programDateTime: String?
    /// `EXT-X-GAP`: the segment is missing.
    public var gap = false
    /// `EXT-X-BITRATE` in force, kbit/s.
    public var bitrate: Int64?
    /// `EXT-X-DATERANGE` tags before this segment.
    public var dateRanges: [AttributeList] = []
    /// Unknown lines before this segment, verbatim.
    public var leadingLines: [String] = []

    public init(uri: String, duration: Double, title: String = "") {
        self.uri = uri
        self.duration = duration
        self.title = title
    }

    /// The key a player needs to decrypt the segment (the `identity` key format first).
    public var key: Key? {
        keys.first { $0.keyFormat == "identity" } ?? keys.first
    }
}

/// A sub-range of a resource: `length[@offset]`.
public struct SegmentByteRange: Hashable, Sendable, CustomStringConvertible {
    public var offset: Int64
    public var length: Int64

    public init(offset: Int64, length: Int64) {
        self.offset = offset
        self.length = length
    }

    public var description: String { "\(length)@\(offset)" }
}

/// `EXT-X-KEY` or `EXT-X-SESSION-KEY`.
public struct Key: Hashable, Sendable {
    public var attributes: AttributeList

    public init(attributes: AttributeList) {
        self.attributes = attributes
    }

    /// `AES-128`, `SAMPLE-AES`, `SAMPLE-AES-CTR`, … (`NONE` is never kept).
    public var method: String { attributes["METHOD"] ?? "" }
    public var uri: String? { attributes["URI"] }
    public var iv: String? { attributes["IV"] }
    /// `KEYFORMAT`, `identity` when absent.
    public var keyFormat: String { attributes["KEYFORMAT"] ?? "identity" }

    /// `IV` as its 16 bytes; `nil` when absent or not `0x` and 1 to 32 hexadecimal digits.
    package var ivBytes: [UInt8]? {
        guard let iv, iv.lowercased().hasPrefix("0x") else { return nil }
        return Self.ivBytes(hexadecimal: iv.dropFirst(2))
    }

    /// 1 to 32 hexadecimal digits as 16 bytes (zeros on the left); `nil` for anything else.
    package static func ivBytes(hexadecimal digits: Substring) -> [UInt8]? {
        guard !digits.isEmpty, digits.count <= 32, digits.allSatisfy(\.isHexDigit) else { return nil }
        let padded = Array(String(repeating: "0", count: 32 - digits.count) + digits)
        return stride(from: 0, to: 32, by: 2).map { UInt8(String(padded[$0...$0 + 1]), radix: 16)! }
    }
}

/// `EXT-X-MAP`: the initialization section (e.g. the fMP4 header) of the segments that follow.
public struct MediaInitialization: Hashable, Sendable {
    public var attributes: AttributeList

    public init(attributes: AttributeList) {
        self.attributes = attributes
    }

    public var uri: String { attributes["URI"] ?? "" }
    /// `BYTERANGE="length[@offset]"`; the offset is 0 when absent.
    public var byteRange: SegmentByteRange? {
        guard let text = attributes["BYTERANGE"], let (length, offset) = SegmentByteRange.parts(text) else {
            return nil
        }
        return SegmentByteRange(offset: offset ?? 0, length: length)
    }
}

extension SegmentByteRange {
    /// `length[@offset]` as numbers; `nil` if malformed or out of range.
    static func parts(_ text: String) -> (length: Int64, offset: Int64?)? {
        let pieces = text.split(separator: "@", omittingEmptySubsequences: false)
        guard pieces.count <= 2, let length = Int64(pieces[0]), length >= 0 else { return nil }
        guard pieces.count == 2 else { return (length, nil) }
        guard let offset = Int64(pieces[1]), offset >= 0, offset <= Int64.max - length else { return nil }
        return (length, offset)
    }
}
