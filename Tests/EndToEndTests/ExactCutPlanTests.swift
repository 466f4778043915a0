import Testing

@testable import streamcache

/// Where an exact cut re-encodes and where it copies (``ExactCut/plan(_:from:to:)``): the frames
/// before the first keyframe inside the section and from the last one on are re-encoded, the
/// whole groups between copied; a cut whose copy would take a frame of a group outside it is
/// re-encoded whole.
@Suite struct ExactCutPlanTests {
    /// 10 frames a second, a group of 10 frames a second, stored as an encoder with reordering
    /// stores them (I P B B P B B P B B), decode times 0.2 s before the first presentation time.
    static func closedGroups(seconds: Int) -> [PackageMuxer.Packet] {
        var packets: [PackageMuxer.Packet] = []
        for group in 0..<seconds {
            let base = group * 10
            var order = [base]
            for step in stride(from: 3, through: 9, by: 3) { order += [base + step, base + step - 2, base + step - 1] }
            for frame in order {
                let decoded = packets.count
                packets.append(
                    PackageMuxer.Packet(
                        time: Double(frame) / 10,
                        decodeTime: Double(decoded - 2) / 10,
                        isKey: frame == base
                    )
                )
            }
        }
        return packets
    }

    @Test func theEdgesAreReencodedAndTheWholeGroupsBetweenCopied() throws {
        let plan = try #require(ExactCut.plan(Self.closedGroups(seconds: 30), from: 5.35, to: 12.65))
        // 5.4…5.9 before the keyframe at 6; the groups of 6…11 s; 12.0…12.6 after the one at 12.
        #expect(plan.headFrames == 6)
        #expect(plan.copyStart == 6)
        #expect(plan.copiedPackets == 60)
        #expect(plan.tailStart == 12)
        #expect(plan.tailFrames == 7)
        #expect(abs(plan.reorderDelay - 0.2) < 1e-9)
    }

    @Test func aSectionFromAKeyframeHasNoHeadAndOneToTheEndNoTail() throws {
        let plan = try #require(ExactCut.plan(Self.closedGroups(seconds: 30), from: 6, to: nil))
        #expect(plan.headFrames == 0)
        #expect(plan.copyStart == 6)
        #expect(plan.copiedPackets == 240)
        #expect(plan.tailStart == nil && plan.tailFrames == 0)
    }

    @Test func aSectionWithoutAWholeGroupIsReencodedWhole() {
        #expect(ExactCut.plan(Self.closedGroups(seconds: 30), from: 5.35, to: 6.65) == nil)
        #expect(ExactCut.plan(Self.closedGroups(seconds: 30), from: 5.35, to: 5.95) == nil)
        #expect(ExactCut.plan(Self.closedGroups(seconds: 30), from: 31, to: nil) == nil)
    }

    /// Open groups: the two frames before each keyframe are stored after it, and refer to it.
    @Test func openGroupsAreReencodedWhole() {
        var packets = Self.closedGroups(seconds: 30)
        for keyIndex in packets.indices.filter({ packets[$0].isKey && packets[$0].time > 0 }) {
            let leading = packets[keyIndex - 2..<keyIndex]
            packets.removeSubrange(keyIndex - 2..<keyIndex)
            packets.insert(contentsOf: leading, at: keyIndex - 1)
        }
        #expect(packets.count == 300)
        #expect(ExactCut.plan(packets, from: 5.35, to: 12.65) == nil)
    }
}
