/// An ISO BMFF segment index box (`sidx`, ISO/IEC 14496-12 §8.16.3): where each subsegment of a
/// file lies and how long it plays. A `SegmentBase` representation's segments are read from it.
public struct SegmentIndexBox: Hashable, Sendable {
    public struct Reference: Hashable, Sendable {
        /// Bytes of the file, inclusive.
        public var range: ClosedRange<Int64>
        /// Seconds.
        public var duration: Double
    }

    public var references: [Reference]

    /// Reads the box in `bytes`, which start at offset `boxOffset` of the file.
    ///
    /// - Throws: ``ManifestParseError`` for bytes that are not a whole `sidx` box, a box that
    ///   points at other `sidx` boxes (a hierarchy), more than ``SegmentIndex/maximumSegments``
    ///   references, a reference of no bytes, or offsets past what a file can hold.
    public init(bytes: [UInt8], boxOffset: Int64) throws(ManifestParseError) {
        var reader = BoxReader(bytes)
        guard let size = reader.uint32(), let type = reader.fourCC(), type == "sidx" else {
            throw ManifestParseError("the index range does not hold a sidx box")
        }
        guard size >= 32, Int(size) <= bytes.count else {
            throw ManifestParseError("the sidx box says it is \(size) bytes; the index range holds \(bytes.count)")
        }
        guard let versionAndFlags = reader.uint32(), reader.uint32() != nil, let timescale = reader.uint32(),
            timescale > 0
        else { throw ManifestParseError("the sidx box is cut short") }
        let version = versionAndFlags >> 24
        let firstOffset: UInt64?
        if version == 0 {
            _ = reader.uint32()
            firstOffset = reader.uint32().map(UInt64.init)
        } else {
            _ = reader.uint64()
            firstOffset = reader.uint64()
        }
        guard let firstOffset, reader.uint16() != nil, let count = reader.uint16() else {
            throw ManifestParseError("the sidx box is cut short")
        }
        guard Int(count) <= SegmentIndex.maximumSegments else {
            throw ManifestParseError("the sidx box lists \(count) subsegments")
        }
        let (start, overflow) = (boxOffset + Int64(size)).addingReportingOverflow(Int64(clamping: firstOffset))
        guard !overflow else { throw ManifestParseError("the sidx box's first offset is past what a file can hold") }
        var position = start
        var references: [Reference] = []
        for number in 0..<Int(count) {
            guard let sizeWord = reader.uint32(), let duration = reader.uint32(), reader.uint32() != nil else {
                throw ManifestParseError("the sidx box is cut short at reference \(number + 1) of \(count)")
            }
            guard sizeWord >> 31 == 0 else {
                throw ManifestParseError("the sidx box points at other sidx boxes: a hierarchy is not read")
            }
            let length = Int64(sizeWord & 0x7FFF_FFFF)
            guard length > 0, position <= Int64.max - length else {
                throw ManifestParseError("reference \(number + 1) of the sidx box has no valid size")
            }
            references.append(
                Reference(range: position...(position + length - 1), duration: Double(duration) / Double(timescale))
            )
            position += length
        }
        self.references = references
    }
}

/// Big-endian fields of a box, read in order.
private struct BoxReader {
    private let bytes: [UInt8]
    private var position = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    private mutating func take(_ count: Int) -> ArraySlice<UInt8>? {
        guard position + count <= bytes.count else { return nil }
        defer { position += count }
        return bytes[position..<position + count]
    }

    mutating func uint16() -> UInt16? { take(2).map { $0.reduce(0) { $0 << 8 | UInt16($1) } } }
    mutating func uint32() -> UInt32? { take(4).map { $0.reduce(0) { $0 << 8 | UInt32($1) } } }
    mutating func uint64() -> UInt64? { take(8).map { $0.reduce(0) { $0 << 8 | UInt64($1) } } }
    mutating func fourCC() -> String? { take(4).map { String(decoding: $0, as: UTF8.self) } }
}
