import Foundation
import StreamCache
import StreamCacheTesting
import Testing

/// Every misbehaviour of the origin gives correct bytes or a clean failure, and leaves a cache
/// whose every byte is right.
@Suite(.timeLimit(.minutes(3))) struct CacheEngineFaultTests {
    static let faults: [OriginFault] = [
        .ignoreRange, .wrongRangeStart, .shortBody, .resetAfter(100_000), .status(503), .status(404),
        .changingETag, .noValidators,
    ]

    @Test(arguments: faults)
    func faultGivesCorrectBytesOrACleanError(fault: OriginFault) async throws {
        let fixture = try await EngineFixture.make()
        let data = TestData.bytes(count: 2_000_000, seed: 20)
        fixture.origin.setResource(data, at: "/ep.mp3")
        let url = fixture.origin.url("/ep.mp3")
        // Some bytes cached while the origin was well, so warm and cold parts mix.
        let engine = try fixture.engine { $0.maxAttempts = 2 }
        #expect(try await readAll(engine, url, offset: 300_000, length: 200_000) == slice(data, 300_000, 200_000))
        await engine.shutdown()

        fixture.origin.setConditions(OriginConditions(faults: [fault]))
        for (offset, length) in [(0, 1_000_000), (250_000, 400_000), (1_500_000, 500_000)] {
            let faulty = try fixture.engine {
                $0.maxAttempts = 2; $0.revalidationInterval = .zero
            }
            do {
                let bytes = try await readAll(faulty, url, offset: Int64(offset), length: Int64(length))
                #expect(bytes == slice(data, offset, length), "wrong bytes under \(fault)")
            } catch let error as StreamCacheError {
                #expect(!error.message.isEmpty && !error.message.contains("\n"))
            }
            await faulty.shutdown()
        }

        fixture.origin.setConditions(OriginConditions())
        let healthy = try fixture.engine()
        #expect(try await readAll(healthy, url) == data, "the cache kept a wrong byte after \(fault)")
        await healthy.shutdown()
        await fixture.tearDown()
    }

    @Test func faultsThatCannotGiveRightBytesFail() async throws {
        for fault in [OriginFault.wrongRangeStart, .status(404)] {
            let fixture = try await EngineFixture.make(conditions: OriginConditions(faults: [fault]))
            fixture.origin.setResource(TestData.bytes(count: 100_000, seed: 21), at: "/ep.mp3")
            let engine = try fixture.engine { $0.maxAttempts = 2 }
            await #expect(throws: StreamCacheError.self) {
                _ = try await readAll(engine, fixture.origin.url("/ep.mp3"), offset: 10, length: 1000)
            }
            await engine.shutdown()
            await fixture.tearDown()
        }
    }
}
