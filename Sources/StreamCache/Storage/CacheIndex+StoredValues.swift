import Foundation

/// Every value read back from the index passes here, so that a valid database with values the
/// index never writes (edited by hand, damaged, from another program) cannot crash a command or
/// reach the network: a length or offset out of bounds is unknown, a text that cannot be a header
/// field value is none, and ranges that contradict their resource's length make the length unknown
/// (the origin is asked again) rather than serve a resource cut short.
extension CacheIndex {
    /// The largest offset or length the index holds (2^62 bytes, beyond any file system); larger
    /// values, and negative ones, are damage.
    package static let largestOffset: Int64 = 1 << 62

    /// A stored length, if it is one the index could have written.
    static func storedLength(_ value: Int64?) -> Int64? {
        guard let value, value >= 0, value <= largestOffset else { return nil }
        return value
    }

    /// A stored range `start..<end`, if it is one the index could have written.
    static func storedRange(_ start: Int64?, _ end: Int64?) -> ByteRange? {
        guard let start, let end, start >= 0, start < end, end <= largestOffset else { return nil }
        return ByteRange(start, end)
    }

    /// A stored text that is sent in a header field (an ETag, a date, a MIME type), if it can be
    /// one: no line break, no NUL, no other control character but a tab.
    static func storedFieldValue(_ text: String?) -> String? {
        guard let text, !text.utf8.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) else { return nil }
        return text
    }

    /// Whether `name` is a field name (an RFC 9110 token).
    static func isFieldName(_ name: String) -> Bool {
        !name.isEmpty
            && name.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || "!#$%&'*+-.^_`|~".utf8.contains(byte)
            }
    }

    /// `record` and `ranges` made consistent: when a range reaches past the recorded length, the
    /// length is unknown (the next read asks the origin), and the cached byte count is what the
    /// ranges hold.
    static func checked(_ record: ResourceRecord, _ ranges: ByteRangeSet) -> (ResourceRecord, ByteRangeSet) {
        var record = record
        if let length = record.info.length, let last = ranges.ranges.last, last.upperBound > length {
            record.info.length = nil
        }
        record.cachedBytes = ranges.count
        return (record, ranges)
    }
}
