import Foundation
import StreamCacheTesting
import Testing

@testable import StreamCache

/// A reader that leaves while its fetch's request waits for its answer (a player that seeks,
/// ffmpeg that hangs up mid-read): a request that was sent is answered and its bytes kept for
/// the grace, since the origin sends them all the same; one not sent yet is given up.
@Suite struct AbandonedRequestTests {
    typealias Machine = ResourceStateMachine

    /// The reader's fetch, claimed (sent) when `sent`.
    private func fetchOfLeavingReader(
        _ machine: inout Machine,
        sent: Bool,
        now: Machine.Instant
    ) -> (
        reader: Int, request: Machine.FetchRequest
    )? {
        let reader = machine.addReader(offset: 0, end: nil)
        guard case .startFetch(let request) = machine.read(reader, at: 0, now: now) else {
            Issue.record("no fetch started")
            return nil
        }
        guard sent else { return (reader, request) }
        guard
            let granted = machine.claimed(
                request.fetch,
                .granted(last: request.last),
                shared: .init(recorded: ByteRangeSet()),
                generation: machine.generation,
                now: now
            )
        else {
            Issue.record("the claim was refused")
            return nil
        }
        return (reader, granted)
    }

    @Test func aRequestNotSentIsGivenUpWithItsReader() throws {
        var machine = Machine.ofNewResource()
        let start = ContinuousClock.now
        let (reader, request) = try #require(fetchOfLeavingReader(&machine, sent: false, now: start))
        #expect(machine.removeReader(reader, now: start) == [request.fetch])
        #expect(machine.orphanedRequestsEnd == nil)
    }

    @Test func aSentRequestsAnswerIsReadAndWrittenAfterItsReaderLeft() throws {
        var machine = Machine.ofNewResource()
        let start = ContinuousClock.now
        let (reader, request) = try #require(fetchOfLeavingReader(&machine, sent: true, now: start))
        #expect(machine.removeReader(reader, now: start).isEmpty, "a sent request was given up")
        #expect(machine.orphanedRequestsEnd == start + machine.settings.orphanGrace)

        let later = start + .milliseconds(500)
        #expect(machine.overdueRequests(now: later).isEmpty)
        let answer = OriginAnswer.partial(range: ByteRange(0, 1000), info: ContentInfo(length: 5000, etag: "\"a\""))
        let action = machine.answered(request.fetch, answer, sentIfRange: false, now: later)
        #expect(action.readBody, "the answer the origin sends anyway was dropped")
        #expect(
            machine.received(request.fetch, count: 1000, now: later)
                == .write([.init(skip: 0, count: 1000, offset: 0)], endsFetch: false)
        )
        _ = machine.wrote(request.fetch, now: later)
        #expect(machine.written == ByteRangeSet([ByteRange(0, 1000)]))
        // Nobody wants more: no further request.
        guard case .finish = machine.bodyEnded(request.fetch) else {
            Issue.record("an abandoned fetch asked for more")
            return
        }
    }

    @Test func aSentRequestWhoseAnswerComesAfterTheGraceIsDropped() throws {
        var machine = Machine.ofNewResource()
        let start = ContinuousClock.now
        let (reader, request) = try #require(fetchOfLeavingReader(&machine, sent: true, now: start))
        machine.removeReader(reader, now: start)
        let grace = machine.settings.orphanGrace
        #expect(machine.overdueRequests(now: start + grace - .milliseconds(1)).isEmpty)
        #expect(machine.overdueRequests(now: start + grace) == [request.fetch])

        // An answer that comes later all the same is not read.
        let answer = OriginAnswer.partial(range: ByteRange(0, 1000), info: ContentInfo(length: 5000, etag: "\"a\""))
        #expect(!machine.answered(request.fetch, answer, sentIfRange: false, now: start + grace).readBody)
    }

    @Test func aReaderThatComesBackWithinTheGraceKeepsTheRequest() throws {
        var machine = Machine.ofNewResource()
        let start = ContinuousClock.now
        let (reader, request) = try #require(fetchOfLeavingReader(&machine, sent: true, now: start))
        machine.removeReader(reader, now: start)
        let back = machine.addReader(offset: 100, end: 400)
        let later = start + .seconds(1)
        guard case .wait = machine.read(back, at: 100, now: later) else {
            Issue.record("the returning reader did not wait for the request on its way")
            return
        }
        #expect(machine.overdueRequests(now: start + .seconds(60)).isEmpty)
        #expect(machine.orphanedRequestsEnd == nil)
    }

    /// Through the engine and a real origin: a reader that leaves before the answer's head comes,
    /// and another that asks for the same bytes, cost the origin one request.
    @Test func aReaderThatLeavesBeforeTheAnswerCostsNoSecondRequest() async throws {
        let fixture = try await EngineFixture.make(conditions: OriginConditions(latency: .milliseconds(400)))
        let data = TestData.bytes(count: 300_000, seed: 4411)
        fixture.origin.setResource(data, at: "/left.bin")
        let url = fixture.origin.url("/left.bin")
        let engine = try fixture.engine { $0.firstFetchSpan = 64 << 10 }

        let leaving = Task { try await readAll(engine, url, offset: 0, length: 64 << 10) }
        try await Task.sleep(for: .milliseconds(150))
        leaving.cancel()
        _ = try? await leaving.value
        #expect(try await readAll(engine, url, offset: 0, length: 64 << 10) == slice(data, 0, 64 << 10))

        // Received, answered or not: from an origin across a network, the answer of each
        // request sent is on its way.
        #expect(fixture.origin.statistics.receivedPaths.filter { $0 == "/left.bin" }.count == 1)
        await engine.shutdown()
        await fixture.tearDown()
    }
}
