import Testing

@testable import streamcache

/// Where a part of a join starts (``KeyframeRuns``): at the keyframe at or before its
/// section's start within the stretch of the timeline that holds it, never at one before a gap.
@Suite struct KeyframeRunsTests {
    /// Two stretches of 10 frames a second, a keyframe a second: 10 to 20 s and 40.023 to 48 s.
    static let runs: KeyframeRuns = {
        var packets: [PackageMuxer.Packet] = []
        for frame in 100..<200 {
            let time = Double(frame) / 10
            packets.append(PackageMuxer.Packet(time: time, decodeTime: time, isKey: frame % 10 == 0))
        }
        for frame in 0..<80 {
            let time: Double = 40.023 + Double(frame) / 10
            packets.append(PackageMuxer.Packet(time: time, decodeTime: time, isKey: frame % 10 == 0))
        }
        return KeyframeRuns(packets)
    }()

    @Test func aStartInsideAStretchTakesTheKeyframeBeforeIt() {
        #expect(Self.runs.runs.count == 2)
        #expect(Self.runs.keyframe(before: 15.5) == 15)
        #expect(abs(Self.runs.keyframe(before: 42.5) - 42.023) < 1e-9)
    }

    @Test func aStartBeforeAStretchsFirstKeyframeTakesThatKeyframe() {
        // In the gap, and just before the first frame after it: not the keyframe at 19 s.
        #expect(Self.runs.keyframe(before: 30) == 40.023)
        #expect(Self.runs.keyframe(before: 40) == 40.023)
    }
}
