/// Where a check of a version compares the origin's bytes with the cached ones, when no strong
/// validator can say they are one version: the first cached bytes (a whole small file), then a
/// few pieces spread over the rest of what is cached, its last bytes among them, so a change
/// anywhere in a file of the same length is likely met.
struct VersionSamples: Equatable, Sendable {
    /// The first sample: what the conditional request asks for along with its condition.
    let first: ByteRange
    /// The samples after it, in order, none overlapping `first`.
    let spread: [ByteRange]

    /// The most bytes the first sample holds: a file this small is compared whole.
    static let firstSpan: Int64 = 64 << 10
    /// The bytes each spread sample holds.
    static let spreadSpan: Int64 = 16 << 10
    /// How many spread samples a check takes at most: each is one more request.
    static let spreadCount = 3

    /// The samples of `cached`, which must not be empty.
    init(of cached: ByteRangeSet) {
        let head = cached.ranges[0]
        first = ByteRange(head.lowerBound, min(head.upperBound, head.lowerBound + Self.firstSpan))
        var rest = cached
        rest.remove(ByteRange(0, first.upperBound))
        let total = rest.count
        guard total > 0 else {
            spread = []
            return
        }
        if total <= Self.spreadSpan * Int64(Self.spreadCount) {
            // Little is left: all of it, a request a cached range.
            spread = Array(rest.ranges.prefix(Self.spreadCount))
            return
        }
        // Samples ending at 1/3, 2/3 and the whole of the cached bytes after the first, counted
        // through the cached ranges in order.
        var samples: [ByteRange] = []
        for part in 1...Self.spreadCount {
            let target = total * Int64(part) / Int64(Self.spreadCount)
            var passed: Int64 = 0
            for range in rest.ranges {
                guard passed + range.count >= target else {
                    passed += range.count
                    continue
                }
                let end = range.lowerBound + (target - passed)
                let sample = ByteRange(max(range.lowerBound, end - Self.spreadSpan), end)
                if samples.last.map({ $0.upperBound <= sample.lowerBound }) ?? true { samples.append(sample) }
                break
            }
        }
        spread = samples
    }
}
