import StreamCache
import Testing

/// A naive model: the set of offsets itself.
private struct OffsetModel {
    var offsets = Set<Int64>()

    mutating func insert(_ range: ByteRange) {
        for offset in range.lowerBound..<range.upperBound { offsets.insert(offset) }
    }
    mutating func remove(_ range: ByteRange) {
        for offset in range.lowerBound..<range.upperBound { offsets.remove(offset) }
    }
}

private struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return state ^ (state >> 31)
    }
}

@Suite struct ByteRangeSetTests {
    @Test(arguments: 0..<40)
    func matchesNaiveModel(seed: Int) {
        var random = SeededGenerator(state: UInt64(seed))
        var set = ByteRangeSet()
        var model = OffsetModel()
        for _ in 0..<60 {
            let start = Int64.random(in: 0..<200, using: &random)
            let range = ByteRange(start, start + Int64.random(in: 0..<30, using: &random))
            if Int.random(in: 0..<4, using: &random) == 0 {
                set.remove(range)
                model.remove(range)
            } else {
                set.insert(range)
                model.insert(range)
            }
            #expect(set.count == Int64(model.offsets.count))
            // Merged, sorted, non-adjacent.
            for (a, b) in zip(set.ranges, set.ranges.dropFirst()) { #expect(a.upperBound < b.lowerBound) }
            #expect(set.ranges.allSatisfy { !$0.isEmpty })
        }
        for offset in Int64(-2)..<240 { #expect(set.contains(offset) == model.offsets.contains(offset)) }
        let probe = ByteRange(Int64.random(in: 0..<100, using: &random), Int64.random(in: 100..<240, using: &random))
        let gaps = set.gaps(in: probe)
        for offset in probe.lowerBound..<probe.upperBound {
            let inGap = gaps.contains { $0.contains(offset) }
            #expect(inGap == !model.offsets.contains(offset))
        }
        for offset in Int64(0)..<240 {
            let expected = model.offsets.filter { $0 >= offset }.min()
            #expect(set.firstOffset(atOrAfter: offset) == expected)
        }
        #expect(set.contains(probe) == gaps.isEmpty)
    }

    @Test func handlesSixtyFourBitOffsets() {
        var set = ByteRangeSet()
        let big: Int64 = 5 << 32
        set.insert(ByteRange(big, big + 10))
        set.insert(ByteRange(big + 10, big + 20))
        #expect(set.ranges == [ByteRange(big, big + 20)])
        #expect(set.gaps(in: ByteRange(big - 5, big + 25)) == [ByteRange(big - 5, big), ByteRange(big + 20, big + 25)])
        #expect(set.clamped(below: big + 15).count == 15)
    }

    @Test func unionMergesTouchingRanges() {
        let a = ByteRangeSet([ByteRange(0, 10), ByteRange(20, 30)])
        let b = ByteRangeSet([ByteRange(10, 20), ByteRange(40, 41)])
        #expect(a.union(b).ranges == [ByteRange(0, 30), ByteRange(40, 41)])
    }
}
