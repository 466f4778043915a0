import Foundation
import StreamCache
import StreamCacheTesting
import Testing

/// What a server may send of a resource without a read (``ServableFile``): the bytes written,
/// while the origin's confirmation of the version is fresh, from the file of the version that
/// is current, and only while the resource's session is open.
@Suite(.timeLimit(.minutes(2))) struct ServableFileTests {
    let old = TestData.bytes(count: 600_000, seed: 730)
    let new = TestData.bytes(count: 600_000, seed: 731)

    /// The bytes of `range` in `servable`'s cache file.
    func bytes(of servable: ServableFile, _ range: ByteRange) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: Int(range.count))
        let count = try bytes.withUnsafeMutableBytes { try servable.file.read(into: $0, at: range.lowerBound) }
        return Array(bytes[..<count])
    }

    @Test func whatWasReadIsServableUntilTheVersionIsDueForRevalidation() async throws {
        let fixture = try await EngineFixture.make()
        defer { Task { await fixture.tearDown() } }
        fixture.origin.setResource(old, at: "/a.mp3")
        let url = fixture.origin.url("/a.mp3")
        let engine = try fixture.engine { $0.revalidationInterval = .seconds(2) }
        #expect(engine.publishedFile(url) == nil)

        // The origin confirmed the version between these two moments (a loaded machine may take
        // longer than the interval between them, so the checks name their moment).
        let before = ContinuousClock.now
        #expect(try await readAll(engine, url, length: 200_000) == Array(old[..<200_000]))
        let after = ContinuousClock.now
        let servable = try #require(engine.publishedFile(url))
        #expect(servable.info.length == 600_000)
        #expect(servable.covers(ByteRange(0, 200_000), at: before))
        #expect(!servable.covers(ByteRange(0, 200_001), at: before), "a byte not yet fetched")
        #expect(try bytes(of: servable, ByteRange(1_000, 5_000)) == Array(old[1_000..<5_000]))
        #expect(!servable.covers(ByteRange(0, 100), at: after + .seconds(2)), "fresh after the interval")

        // Due for revalidation, the origin has another version: the new one is servable, in a new file.
        try await Task.sleep(for: .milliseconds(2_100))
        fixture.origin.setResource(new, at: "/a.mp3")
        let again = ContinuousClock.now
        #expect(try await readAll(engine, url) == new)
        let replaced = try #require(engine.publishedFile(url))
        #expect(replaced.file !== servable.file)
        #expect(replaced.info.etag != servable.info.etag)
        #expect(replaced.covers(ByteRange(0, 600_000), at: again))
        #expect(try bytes(of: replaced, ByteRange(0, 600_000)) == new)
        await engine.shutdown()
        #expect(engine.publishedFile(url) == nil, "servable after shutdown")
    }

    @Test func aClosedSessionIsNotServableAndItsNextReadMakesItServableAgain() async throws {
        let fixture = try await EngineFixture.make()
        defer { Task { await fixture.tearDown() } }
        fixture.origin.setResource(old, at: "/a.mp3")
        let url = fixture.origin.url("/a.mp3")
        // A linger long enough that a busy test run still finds the session open right after a
        // read, short enough to see it close.
        let engine = try fixture.engine { $0.idleLinger = .seconds(2) }
        #expect(try await readAll(engine, url) == old)
        #expect(engine.publishedFile(url) != nil)

        var closed = false
        for _ in 0..<500 where !closed {
            try await Task.sleep(for: .milliseconds(20))
            closed = engine.publishedFile(url) == nil
        }
        #expect(closed, "still servable after the session closed")
        // Confirmed a moment ago: a cached read of the reopened session is servable without asking again.
        let requests = fixture.origin.statistics.requests.count
        #expect(try await readAll(engine, url, length: 10) == Array(old[..<10]))
        #expect(fixture.origin.statistics.requests.count == requests)
        #expect(engine.publishedFile(url)?.covers(ByteRange(0, 600_000)) == true)
        await engine.shutdown()
    }
}
