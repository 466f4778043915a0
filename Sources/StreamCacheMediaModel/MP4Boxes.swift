/// The header of one ISO BMFF box (MP4, M4A, MOV): its type and where it ends.
public struct MP4BoxHeader: Hashable, Sendable {
    /// The four-character type (`ftyp`, `moov`, `mdat`).
    public let type: String
    /// Where the box starts in the file or the enclosing box.
    public let offset: Int64
    /// The header's own bytes: 8, or 16 with a 64-bit size.
    public let headerLength: Int64
    /// The whole box's bytes, header included; `nil`: to the end of the file (size 0).
    public let size: Int64?

    /// Where the box's body starts.
    public var bodyOffset: Int64 { offset + headerLength }

    /// Where the next box starts; `nil` for a box that runs to the end of the file.
    public var end: Int64? { size.map { offset + $0 } }

    /// The header at `position` of `bytes`, which hold the file's bytes from `base` on; `nil`
    /// when `bytes` end before the header does.
    ///
    /// - Throws: ``MP4Error`` for a size smaller than the header or past `Int64`.
    public static func read(
        _ bytes: some RandomAccessCollection<UInt8>,
        at position: Int64,
        base: Int64 = 0
    ) throws
        -> MP4BoxHeader?
    {
        let start = position - base
        guard start >= 0, start + 8 <= bytes.count else { return nil }
        let size32 = BigEndian.uint32(bytes, Int(start))
        let type = BigEndian.fourCC(bytes, Int(start) + 4)
        switch size32 {
        case 0:
            return MP4BoxHeader(type: type, offset: position, headerLength: 8, size: nil)
        case 1:
            guard start + 16 <= bytes.count else { return nil }
            let size64 = BigEndian.uint64(bytes, Int(start) + 8)
            guard size64 >= 16, size64 <= UInt64(Int64.max) else {
                throw MP4Error("box '\(type)' at byte \(position) has size \(size64)")
            }
            return MP4BoxHeader(type: type, offset: position, headerLength: 16, size: Int64(size64))
        default:
            guard size32 >= 8 else { throw MP4Error("box '\(type)' at byte \(position) has size \(size32)") }
            return MP4BoxHeader(type: type, offset: position, headerLength: 8, size: Int64(size32))
        }
    }

    /// Whether the first bytes of a file look like ISO BMFF: a known top-level box first.
    public static func startsFile(_ bytes: some RandomAccessCollection<UInt8>) -> Bool {
        guard bytes.count >= 8 else { return false }
        return ["ftyp", "moov", "styp", "free", "skip", "wide", "mdat"].contains(BigEndian.fourCC(bytes, 4))
    }
}

/// A file the ISO BMFF reader cannot use, said in one line.
public struct MP4Error: Error, Hashable, Sendable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}

/// Big-endian integers and four-character codes at offsets of a byte collection (the caller
/// checks the bounds).
enum BigEndian {
    static func uint32(_ bytes: some RandomAccessCollection<UInt8>, _ offset: Int) -> UInt32 {
        var value: UInt32 = 0
        var index = bytes.index(bytes.startIndex, offsetBy: offset)
        for _ in 0..<4 {
            value = value << 8 | UInt32(bytes[index])
            index = bytes.index(after: index)
        }
        return value
    }

    static func uint64(_ bytes: some RandomAccessCollection<UInt8>, _ offset: Int) -> UInt64 {
        UInt64(uint32(bytes, offset)) << 32 | UInt64(uint32(bytes, offset + 4))
    }

    static func fourCC(_ bytes: some RandomAccessCollection<UInt8>, _ offset: Int) -> String {
        let start = bytes.index(bytes.startIndex, offsetBy: offset)
        let code = bytes[start..<bytes.index(start, offsetBy: 4)].map {
            (32...126).contains($0) ? $0 : UInt8(ascii: "?")
        }
        return String(decoding: code, as: UTF8.self)
    }
}
