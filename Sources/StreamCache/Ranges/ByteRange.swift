/// A half-open range of byte offsets in a resource, `lowerBound..<upperBound`, with 64-bit offsets.
public struct ByteRange: Hashable, Sendable, CustomStringConvertible {
    /// The first offset in the range.
    public var lowerBound: Int64
    /// The offset just past the last byte of the range.
    public var upperBound: Int64

    /// Creates a range; `upperBound` must not be less than `lowerBound`.
    public init(_ lowerBound: Int64, _ upperBound: Int64) {
        precondition(lowerBound <= upperBound, "ByteRange bounds out of order")
        self.lowerBound = lowerBound
        self.upperBound = upperBound
    }

    /// Creates the range of `length` bytes starting at `offset`.
    public init(offset: Int64, length: Int64) {
        self.init(offset, offset + length)
    }

    /// The number of bytes in the range.
    public var count: Int64 { upperBound - lowerBound }

    /// Whether the range holds no bytes.
    public var isEmpty: Bool { lowerBound == upperBound }

    /// Whether `offset` lies in the range.
    public func contains(_ offset: Int64) -> Bool { offset >= lowerBound && offset < upperBound }

    /// Whether every byte of `other` lies in this range.
    public func contains(_ other: ByteRange) -> Bool {
        other.lowerBound >= lowerBound && other.upperBound <= upperBound
    }

    /// The bytes both ranges hold, or `nil` if they share none.
    public func intersection(_ other: ByteRange) -> ByteRange? {
        let low = max(lowerBound, other.lowerBound)
        let high = min(upperBound, other.upperBound)
        return low < high ? ByteRange(low, high) : nil
    }

    /// `a-b` with an inclusive end, as HTTP writes ranges.
    public var description: String { isEmpty ? "\(lowerBound)-(empty)" : "\(lowerBound)-\(upperBound - 1)" }
}
