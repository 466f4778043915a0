import Foundation
import StreamCacheTesting
import Testing

@testable import StreamCache

/// A whole answer nobody reads any more is held for a reader to come (a player that hangs up and
/// asks again: ffprobe, then ffmpeg; a seek), and read on as soon as one asks for what it brings.
@Suite struct HeldBodyTests {
    /// The hold lasts a minute here, so a reader whose wake-up of the held answer were lost would
    /// wait that long; the answer reaches its bytes in about 1.5 s.
    @Test func aReaderThatComesBackWakesTheHeldAnswer() async throws {
        var conditions = OriginConditions(bytesPerSecond: 2 << 20)
        conditions.faults = [.ignoreRange]
        let fixture = try await EngineFixture.make(conditions: conditions)
        let data = TestData.bytes(count: 4_000_000, seed: 931)
        fixture.origin.setResource(data, at: "/held.bin")
        let url = fixture.origin.url("/held.bin")
        let engine = try fixture.engine { $0.orphanGrace = .seconds(60) }

        #expect(try await readAll(engine, url, offset: 0, length: 100_000) == slice(data, 0, 100_000))
        let started = ContinuousClock.now
        #expect(try await readAll(engine, url, offset: 3_000_000, length: 1000) == slice(data, 3_000_000, 1000))
        #expect(started.duration(to: .now) < .seconds(30), "the held answer was not woken by the reader")

        // That the origin sends the file once is `RangeIgnoringOriginTests`' to check, through `serve`.
        await engine.shutdown()
        await fixture.tearDown()
    }
}
