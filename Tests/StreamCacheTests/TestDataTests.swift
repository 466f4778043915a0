import Foundation
import StreamCacheTesting
import Testing

/// The test bytes every test compares against: the same bytes for a seed as they always were,
/// and a comparison that says equal only when equal.
@Suite struct TestDataTests {
    /// The bytes as they were first written, a byte at a time.
    private static func reference(count: Int, seed: UInt64) -> [UInt8] {
        var state = seed &+ 0x9E37_79B9_7F4A_7C15
        var result: [UInt8] = []
        while result.count < count {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            var word = (state ^ (state >> 29)) &* 0xBF58_476D_1CE4_E5B9
            for _ in 0..<8 where result.count < count {
                result.append(UInt8(truncatingIfNeeded: word))
                word >>= 8
            }
        }
        return result
    }

    @Test func aSeedGivesTheBytesItAlwaysGave() {
        for count in Array(0...17) + [1_003, 65_536] {
            #expect(TestData.bytes(count: count, seed: 7) == Self.reference(count: count, seed: 7), "\(count) bytes")
        }
        #expect(TestData.bytes(count: 64, seed: 1) != TestData.bytes(count: 64, seed: 2))
    }

    @Test func mismatchNamesTheFirstDifferenceOrNone() {
        let data = TestData.bytes(count: 1_000, seed: 4)
        #expect(TestData.mismatch(data, data) == nil)
        #expect(TestData.mismatch(data[10..<20], Array(data[10..<20])) == nil)
        var changed = data
        changed[500] &+= 1
        #expect(TestData.mismatch(changed, data)?.hasPrefix("byte 500 is") == true)
        #expect(TestData.mismatch(data.dropLast(), data) == "999 bytes, expected 1000 (equal up to byte 999)")
    }
}
