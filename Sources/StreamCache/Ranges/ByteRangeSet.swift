/// A set of byte offsets kept as sorted, merged, non-overlapping, non-adjacent ``ByteRange``s.
///
/// This is what StreamCache knows to be present in a cache file.
public struct ByteRangeSet: Hashable, Sendable, CustomStringConvertible {
    /// The ranges, sorted, with gaps between any two of them.
    public private(set) var ranges: [ByteRange]

    /// Creates an empty set.
    public init() { ranges = [] }

    /// Creates a set holding the union of `ranges`, in any order, overlapping or not.
    public init<S: Sequence>(_ ranges: S) where S.Element == ByteRange {
        self.init()
        for range in ranges { insert(range) }
    }

    /// Whether the set holds no bytes.
    public var isEmpty: Bool { ranges.isEmpty }

    /// The number of bytes in the set.
    public var count: Int64 { ranges.reduce(0) { $0 + $1.count } }

    /// Index of the first range whose upper bound is at or past `offset`.
    ///
    /// - Complexity: O(log *n*).
    private func firstIndex(endingAtOrAfter offset: Int64) -> Int {
        var low = 0
        var high = ranges.count
        while low < high {
            let mid = (low + high) / 2
            if ranges[mid].upperBound < offset { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// Adds every byte of `range`, merging with ranges it overlaps or touches.
    ///
    /// - Complexity: O(log *n*) to find the place, plus the ranges merged away.
    public mutating func insert(_ range: ByteRange) {
        guard !range.isEmpty else { return }
        let first = firstIndex(endingAtOrAfter: range.lowerBound)
        var last = first
        var merged = range
        while last < ranges.count && ranges[last].lowerBound <= range.upperBound {
            merged = ByteRange(
                min(merged.lowerBound, ranges[last].lowerBound),
                max(merged.upperBound, ranges[last].upperBound)
            )
            last += 1
        }
        ranges.replaceSubrange(first..<last, with: [merged])
    }

    /// Removes every byte of `range`.
    public mutating func remove(_ range: ByteRange) {
        guard !range.isEmpty else { return }
        var result: [ByteRange] = []
        result.reserveCapacity(ranges.count + 1)
        for existing in ranges {
            if existing.upperBound <= range.lowerBound || existing.lowerBound >= range.upperBound {
                result.append(existing)
                continue
            }
            if existing.lowerBound < range.lowerBound {
                result.append(ByteRange(existing.lowerBound, range.lowerBound))
            }
            if existing.upperBound > range.upperBound {
                result.append(ByteRange(range.upperBound, existing.upperBound))
            }
        }
        ranges = result
    }

    /// The union of this set and `other`.
    public func union(_ other: ByteRangeSet) -> ByteRangeSet {
        var result = self
        for range in other.ranges { result.insert(range) }
        return result
    }

    /// Whether `offset` is in the set.
    public func contains(_ offset: Int64) -> Bool {
        range(containing: offset) != nil
    }

    /// Whether every byte of `range` is in the set.
    public func contains(_ range: ByteRange) -> Bool {
        if range.isEmpty { return true }
        return self.range(containing: range.lowerBound)?.contains(range) ?? false
    }

    /// The stored range holding `offset`, if any.
    public func range(containing offset: Int64) -> ByteRange? {
        let index = firstIndex(endingAtOrAfter: offset + 1)
        guard index < ranges.count, ranges[index].contains(offset) else { return nil }
        return ranges[index]
    }

    /// The lowest offset at or after `offset` that is in the set, if any.
    public func firstOffset(atOrAfter offset: Int64) -> Int64? {
        let index = firstIndex(endingAtOrAfter: offset + 1)
        guard index < ranges.count else { return nil }
        return max(ranges[index].lowerBound, offset)
    }

    /// The parts of `range` that are not in the set, in order.
    public func gaps(in range: ByteRange) -> [ByteRange] {
        var gaps: [ByteRange] = []
        var cursor = range.lowerBound
        var index = firstIndex(endingAtOrAfter: range.lowerBound + 1)
        while cursor < range.upperBound {
            guard index < ranges.count, ranges[index].lowerBound < range.upperBound else {
                gaps.append(ByteRange(cursor, range.upperBound))
                break
            }
            let present = ranges[index]
            if present.lowerBound > cursor { gaps.append(ByteRange(cursor, present.lowerBound)) }
            cursor = max(cursor, present.upperBound)
            index += 1
        }
        return gaps
    }

    /// The part of the set below `limit`.
    public func clamped(below limit: Int64) -> ByteRangeSet {
        var result = self
        result.remove(ByteRange(max(0, limit), Int64.max))
        return result
    }

    /// The ranges as `a-b` with inclusive ends, comma separated.
    public var description: String { "[" + ranges.map(\.description).joined(separator: ", ") + "]" }
}
