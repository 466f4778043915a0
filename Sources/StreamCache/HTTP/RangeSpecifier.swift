/// One range of a `Range: bytes=…` header, as RFC 9110 §14.1.1 writes them: `a-b`, `a-` or `-n`.
public enum RangeSpecifier: Hashable, Sendable {
    /// `first-last` (inclusive) or `first-` (`last == nil`).
    case from(first: Int64, last: Int64?)
    /// `-count`: the last `count` bytes.
    case suffix(count: Int64)

    /// Parses a `Range` header value.
    ///
    /// - Returns: the ranges in order, or `nil` if the value is not a syntactically valid byte
    ///   range set (which a server ignores, answering `200`). Numbers too large for 64 bits are
    ///   clamped, so `bytes=99999999999999999999-` is a valid but unsatisfiable range.
    public static func parse(_ value: String) -> [RangeSpecifier]? {
        var value = value
        // Byte by byte: the proxy parses one per request, on its event loop.
        return value.withUTF8 { parse($0) }
    }

    /// `bytes=`, compared without case.
    private static let prefix = Array("bytes=".utf8)

    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> [RangeSpecifier]? {
        let (start, end) = trimmed(bytes, 0, bytes.count)
        let prefix = Self.prefix
        guard end - start >= prefix.count,
            prefix.indices.allSatisfy({ bytes[start + $0] | (prefix[$0] == 61 ? 0 : 0x20) == prefix[$0] })
        else { return nil }
        var result: [RangeSpecifier] = []
        var specStart = start + prefix.count
        for index in specStart...end where index == end || bytes[index] == UInt8(ascii: ",") {
            let (first, last) = trimmed(bytes, specStart, index)
            specStart = index + 1
            if first == last { continue }
            guard let dash = (first..<last).first(where: { bytes[$0] == UInt8(ascii: "-") }) else { return nil }
            if dash == first {
                guard let count = number(bytes, dash + 1, last) else { return nil }
                result.append(.suffix(count: count))
            } else {
                guard let from = number(bytes, first, dash) else { return nil }
                if dash + 1 == last {
                    result.append(.from(first: from, last: nil))
                } else {
                    guard let to = number(bytes, dash + 1, last), to >= from else { return nil }
                    result.append(.from(first: from, last: to))
                }
            }
        }
        return result.isEmpty ? nil : result
    }

    /// `[start, end)` without the spaces and tabs at either end.
    private static func trimmed(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> (Int, Int) {
        func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        var start = start
        var end = end
        while start < end, isBlank(bytes[start]) { start += 1 }
        while end > start, isBlank(bytes[end - 1]) { end -= 1 }
        return (start, end)
    }

    /// The bytes this specifier selects in a resource of `length` bytes, end clamped to the length.
    ///
    /// - Returns: `nil` if it is unsatisfiable (starts at or past the end, or selects nothing).
    public func resolve(length: Int64) -> ByteRange? {
        switch self {
        case .from(let first, let last):
            guard first < length else { return nil }
            return ByteRange(first, min(last.map { $0 + 1 } ?? length, length))
        case .suffix(let count):
            guard count > 0, length > 0 else { return nil }
            return ByteRange(max(0, length - count), length)
        }
    }

    /// The decimal number in `[start, end)`, `nil` unless it is all digits.
    private static func number(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> Int64? {
        guard start < end else { return nil }
        var value: Int64 = 0
        for index in start..<end {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            // Saturate: a number past 2^62 is larger than any real resource.
            value = value < Int64(1) << 58 ? value * 10 + Int64(digit) : Int64(1) << 62
        }
        return value
    }
}

/// The text helpers the header parsers need, without Foundation.
extension StringProtocol {
    func trimming(_ set: String) -> String {
        var scalars = Substring(self)
        while let first = scalars.first, set.contains(first) { scalars = scalars.dropFirst() }
        while let last = scalars.last, set.contains(last) { scalars = scalars.dropLast() }
        return String(scalars)
    }
}
