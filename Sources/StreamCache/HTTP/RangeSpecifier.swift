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
        let trimmed = value.trimming(" \t")
        guard trimmed.lowercased().hasPrefix("bytes=") else { return nil }
        let specs = trimmed.dropFirst(6).split(separator: ",", omittingEmptySubsequences: false)
        var result: [RangeSpecifier] = []
        for raw in specs {
            let spec = raw.trimming(" \t")
            if spec.isEmpty { continue }
            guard let dash = spec.firstIndex(of: "-") else { return nil }
            let left = spec[..<dash]
            let right = spec[spec.index(after: dash)...]
            if left.isEmpty {
                guard let count = number(right) else { return nil }
                result.append(.suffix(count: count))
            } else {
                guard let first = number(left) else { return nil }
                if right.isEmpty {
                    result.append(.from(first: first, last: nil))
                } else {
                    guard let last = number(right), last >= first else { return nil }
                    result.append(.from(first: first, last: last))
                }
            }
        }
        return result.isEmpty ? nil : result
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

    private static func number<S: StringProtocol>(_ text: S) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        // Saturate: a number past 2^62 is larger than any real resource.
        if text.count > 18 { return Int64(1) << 62 }
        return Int64(text)
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
