import StreamCacheTesting
import Testing

@testable import StreamCache

/// The bytes a session keeps in memory for readers at the edge of a fetch, against a model of
/// the file: whatever it hands out for an offset is what was written there, of the same version.
@Suite struct RecentBytesTests {
    /// Each seed's life is ``HeavyWork`` (a byte-by-byte model of the file); it returns what
    /// went wrong.
    @Test(arguments: 0..<20)
    func handsOutOnlyWhatWasWrittenThereInThatVersion(seed: UInt64) async {
        let problems = await HeavyWork.run(priority: .normal) { Self.life(seed: seed) }
        #expect(problems.isEmpty, "\(problems.prefix(3))")
    }

    private static func life(seed: UInt64) -> [String] {
        var problems: [String] = []
        var random = SeededRandom(seed: seed)
        var recent = RecentBytes(limit: 3000)
        // What the cache file of each version holds, offset by offset.
        var files: [Int: [Int64: UInt8]] = [:]
        var generation = 0
        var position: Int64 = 0
        for step in 0..<300 {
            if Int.random(in: 0..<40, using: &random) == 0 {
                generation += 1
                position = 0
            }
            let count = Int.random(in: 1...900, using: &random)
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
            for (index, byte) in bytes.enumerated() { files[generation, default: [:]][position + Int64(index)] = byte }
            recent.add(bytes, at: position, generation: generation)
            position += Int64(count)

            let asked = Int64.random(in: 0..<position + 100, using: &random)
            let range = ByteRange(asked, asked + Int64.random(in: 1...2000, using: &random))
            let askedGeneration = Int.random(in: max(0, generation - 1)...generation, using: &random)
            guard let handed = recent.bytes(startingAt: range, generation: askedGeneration) else { continue }
            if handed.isEmpty || Int64(handed.count) > range.count {
                problems.append("seed \(seed), step \(step): \(handed.count) bytes for \(range.count) asked")
            }
            let file = files[askedGeneration] ?? [:]
            let expected = (0..<handed.count).map { file[asked + Int64($0)] }
            if expected != handed.map({ Optional($0) }) {
                problems.append("seed \(seed), step \(step): bytes at \(asked) of version \(askedGeneration)")
            }
        }
        return problems
    }

    @Test func keepsTheNewestChunksUpToItsLimitAndForgetsAllWhenAsked() {
        var recent = RecentBytes(limit: 250)
        for index in 0..<4 {
            recent.add([UInt8](repeating: UInt8(index), count: 100), at: Int64(index) * 100, generation: 1)
        }
        #expect(recent.bytes(startingAt: ByteRange(150, 160), generation: 1) == nil)
        #expect(
            recent.bytes(startingAt: ByteRange(250, 400), generation: 1).map(Array.init)
                == [UInt8](repeating: 2, count: 50)
        )
        #expect(recent.bytes(startingAt: ByteRange(350, 360), generation: 2) == nil)
        recent.removeAll()
        #expect(recent.bytes(startingAt: ByteRange(350, 360), generation: 1) == nil)
    }
}
