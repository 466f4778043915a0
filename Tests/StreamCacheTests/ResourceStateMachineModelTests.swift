import Foundation
import StreamCacheTesting
import Testing

@testable import StreamCache

/// The session's state machine against a naive model (``ResourceSimulation``): 10,000 seeded
/// random lives of a resource. A failure names its seed; `STREAMCACHE_MODEL_SEED=N` replays one.
@Suite struct ResourceStateMachineModelTests {
    static let sequences: UInt64 = 10_000
    static let events = 150

    /// Four slices of the seeds, each a test case of its own.
    static let slices: [ClosedRange<UInt64>] = (0..<4).map { slice in
        let size = sequences / 4
        return (UInt64(slice) * size + 1)...(UInt64(slice + 1) * size)
    }

    /// The lives run as ``HeavyWork``, one slice after another, off the cooperative pool.
    @Test(arguments: slices)
    func randomLivesKeepEveryRule(seeds: ClosedRange<UInt64>) async {
        if let seed = ProcessInfo.processInfo.environment["STREAMCACHE_MODEL_SEED"].flatMap(UInt64.init) {
            guard seeds.contains(seed) else { return }
            var simulation = ResourceSimulation(seed: seed)
            _ = simulation.run(events: Self.events)
            return
        }
        let failures = await HeavyWork.run {
            var failures = 0
            for seed in seeds {
                var simulation = ResourceSimulation(seed: seed)
                if !simulation.run(events: Self.events) { failures += 1 }
                if failures >= 3 { break }
            }
            return failures
        }
        #expect(failures == 0, "\(failures) of the lives with seeds \(seeds) broke a rule")
    }

    /// The same rules for the first resource of an origin the engine has not met (a second
    /// reader waits for the first answer's head): 2,500 more lives, their own seeds.
    @Test func randomLivesOfAnOriginNotMetKeepEveryRule() async {
        let failures = await HeavyWork.run {
            var failures = 0
            for seed in (Self.sequences + 1)...(Self.sequences + Self.sequences / 4) {
                var simulation = ResourceSimulation(seed: seed, originUnmet: true)
                if !simulation.run(events: Self.events) { failures += 1 }
                if failures >= 3 { break }
            }
            return failures
        }
        #expect(failures == 0, "\(failures) of the lives of an origin not met broke a rule")
    }

    /// The fetch that `reader`'s read at byte 0 starts; `nil`, with an issue recorded, if none.
    private func startedFetch(
        _ machine: inout ResourceStateMachine,
        reader: Int,
        now: ContinuousClock.Instant
    ) -> ResourceStateMachine.FetchRequest? {
        guard case .startFetch(let fetch) = machine.read(reader, at: 0, now: now) else {
            Issue.record("no fetch started")
            return nil
        }
        return fetch
    }

    /// A machine of a new resource, joining fetches up to 100 bytes ahead, asking `firstFetchSpan`
    /// bytes first.
    private func newMachine(firstFetchSpan: Int64) -> ResourceStateMachine {
        var configuration = CacheConfiguration()
        configuration.joinDistance = 100
        configuration.firstFetchSpan = firstFetchSpan
        return ResourceStateMachine(
            info: ContentInfo(),
            recorded: ByteRangeSet(),
            freshUntil: nil,
            now: .now,
            settings: ResourceStateMachine.Settings(configuration)
        )
    }

    @Test func aReaderInsideARequestWaitsForItAndRequestsStaySmallWithCompany() {
        var machine = newMachine(firstFetchSpan: 1000)
        let first = machine.addReader(offset: 0, end: nil)
        guard case .startFetch(let a) = machine.read(first, at: 0, now: .now) else {
            Issue.record("no fetch started")
            return
        }
        #expect(a.first == 0 && a.last == 999)
        // 600 bytes ahead of the fetch, beyond the join distance, but asked for already: the
        // reader waits for those bytes rather than have the origin send them twice.
        let second = machine.addReader(offset: 600, end: nil)
        guard case .wait = machine.read(second, at: 600, now: .now) else {
            Issue.record("a second fetch for bytes already asked for")
            return
        }
        // Past the request, a fetch of its own.
        let third = machine.addReader(offset: 5000, end: nil)
        guard case .startFetch(let c) = machine.read(third, at: 5000, now: .now) else {
            Issue.record("no fetch for a reader past the request")
            return
        }
        #expect(c.first == 5000)
        // The first request done: with another fetch under way the next one asks for no more.
        let info = ContentInfo(length: 1 << 30, etag: "\"a\"")
        _ = machine.answered(a.fetch, .partial(range: ByteRange(0, 1000), info: info), sentIfRange: false, now: .now)
        _ = machine.received(a.fetch, count: 1000, now: .now)
        _ = machine.wrote(a.fetch, now: .now)
        guard case .request(let next) = machine.bodyEnded(a.fetch) else {
            Issue.record("the first fetch asked for nothing more")
            return
        }
        #expect(next.first == 1000 && next.last == 1999)
    }

    /// A reader that reads ahead (a download's second connection on a file) inside a request
    /// but beyond the join distance gets a fetch of its own, and the fetch whose request it is
    /// in is cut where it starts: each byte is written once, over two connections.
    @Test func aReaderReadingAheadInsideARequestCutsItWithAFetchOfItsOwn() {
        var machine = newMachine(firstFetchSpan: 10_000)
        let first = machine.addReader(offset: 0, end: nil)
        guard let a = startedFetch(&machine, reader: first, now: .now) else { return }
        #expect(a.first == 0 && a.last == 9999)
        let ahead = machine.addReader(offset: 5000, end: nil, readsAhead: true)
        guard case .startFetch(let b) = machine.read(ahead, at: 5000, now: .now) else {
            Issue.record("a reader reading ahead waits for a request 5000 bytes off")
            return
        }
        #expect(b.first == 5000)
        // Within the join distance it still waits.
        let near = machine.addReader(offset: 50, end: nil, readsAhead: true)
        guard case .wait = machine.read(near, at: 50, now: .now) else {
            Issue.record("a reader reading ahead 50 bytes from a fetch did not wait for it")
            return
        }
        // The first fetch writes up to where the second starts, and ends there.
        let info = ContentInfo(length: 10_000, etag: "\"a\"")
        _ = machine.answered(a.fetch, .partial(range: ByteRange(0, 10_000), info: info), sentIfRange: false, now: .now)
        #expect(
            machine.received(a.fetch, count: 6000, now: .now)
                == .write([.init(skip: 0, count: 5000, offset: 0)], endsFetch: true)
        )
    }

    /// An origin that ignores `Range`: the whole body nobody wants more of is held for the
    /// grace, read on when a reader comes back (charged with what came meanwhile), and ended
    /// once the grace is over.
    @Test func aWholeBodyNobodyWantsIsHeldForAReturningReader() {
        var machine = newMachine(firstFetchSpan: 1000)
        let start = ContinuousClock.now
        let first = machine.addReader(offset: 0, end: 100)
        guard let fetch = startedFetch(&machine, reader: first, now: start) else { return }
        // Fresh for an hour: a reader that comes back is not sent to validate it first.
        let stored = StoredFields(
            fields: [HeaderField("Cache-Control", "max-age=3600")],
            receivedAt: Date().timeIntervalSince1970
        )
        let info = ContentInfo(length: 3000, etag: "\"a\"", stored: stored)
        _ = machine.answered(fetch.fetch, .full(info: info), sentIfRange: false, now: start)
        // Past the 100 bytes the reader asked for: kept, and not ended.
        #expect(
            machine.received(fetch.fetch, count: 500, now: start)
                == .write([.init(skip: 0, count: 500, offset: 0)], endsFetch: false)
        )
        _ = machine.wrote(fetch.fetch, now: start)
        #expect(machine.takeCharge(first) == 500)
        machine.removeReader(first)
        #expect(machine.waitsForReader(fetch.fetch, now: start + .seconds(1)) == true)
        // A chunk already on its way when the reader left is kept, for nobody yet.
        _ = machine.received(fetch.fetch, count: 200, now: start + .seconds(1))
        _ = machine.wrote(fetch.fetch, now: start + .seconds(1))

        // A player comes back for bytes the body has yet to bring: the body is read on, and
        // the reader is charged with the 200 bytes too.
        let back = machine.addReader(offset: 2000, end: nil)
        switch machine.read(back, at: 2000, now: start + .seconds(2)) {
        case .wait, .waitForStream: break
        case let other:
            Issue.record("a returning reader did not wait for the held body: \(other)")
            return
        }
        #expect(machine.waitsForReader(fetch.fetch, now: start + .seconds(2)) == nil)
        _ = machine.received(fetch.fetch, count: 300, now: start + .seconds(2))
        _ = machine.wrote(fetch.fetch, now: start + .seconds(2))
        #expect(machine.takeCharge(back) == 500)

        // Nobody again: held for the grace (3 s by default), then ended.
        machine.removeReader(back)
        #expect(machine.waitsForReader(fetch.fetch, now: start + .seconds(3)) == true)
        #expect(machine.waitsForReader(fetch.fetch, now: start + .seconds(5)) == true)
        #expect(machine.waitsForReader(fetch.fetch, now: start + .seconds(6)) == false)
    }

    /// An origin that ignores `Range` sent the whole resource and the reader took what it
    /// asked for: with every announced byte come, nothing is held for a returning reader, so
    /// the fetch ends and records its bytes at once (it held them for the grace, 3 s, with its
    /// origin connection and its claim).
    @Test func aWholeBodyThatHasComeIsNotHeld() {
        var machine = newMachine(firstFetchSpan: 1000)
        let start = ContinuousClock.now
        let reader = machine.addReader(offset: 0, end: 100)
        guard let fetch = startedFetch(&machine, reader: reader, now: start) else { return }
        let info = ContentInfo(length: 700, etag: "\"a\"")
        _ = machine.answered(fetch.fetch, .full(info: info), sentIfRange: false, now: start)
        _ = machine.received(fetch.fetch, count: 500, now: start)
        _ = machine.wrote(fetch.fetch, now: start)
        machine.removeReader(reader)
        // Bytes still to come: held for a reader.
        #expect(machine.waitsForReader(fetch.fetch, now: start) == true)
        _ = machine.received(fetch.fetch, count: 200, now: start)
        _ = machine.wrote(fetch.fetch, now: start)
        // None: read on to the end.
        #expect(machine.waitsForReader(fetch.fetch, now: start) == nil)
        guard case .finish = machine.bodyEnded(fetch.fetch) else {
            Issue.record("the body's end did not finish the fetch")
            return
        }
    }

    @Test func aFetchWritesOnlyAtItsNextByte() {
        // Requests of 200 bytes: a reader at 300 is past what the first fetch asked for.
        var machine = newMachine(firstFetchSpan: 200)
        let first = machine.addReader(offset: 0, end: 1000)
        guard case .startFetch(let a) = machine.read(first, at: 0, now: .now) else {
            Issue.record("no fetch started")
            return
        }
        let second = machine.addReader(offset: 300, end: 1000)
        // The first fetch has written nothing, is 300 bytes behind and asked for less: a second
        // fetch at 300.
        guard case .startFetch(let b) = machine.read(second, at: 300, now: .now) else {
            Issue.record("no second fetch")
            return
        }
        #expect(a.first == 0 && b.first == 300)
        let info = ContentInfo(length: 3000, etag: "\"a\"")
        // The origin ignores the range and sends the whole body from byte 0: every byte of it is
        // kept but those the second fetch asked for (300..<500), which are left to it.
        _ = machine.answered(a.fetch, .full(info: info), sentIfRange: false, now: .now)
        #expect(
            machine.received(a.fetch, count: 600, now: .now)
                == .write(
                    [
                        .init(skip: 0, count: 300, offset: 0),
                        .init(skip: 500, count: 100, offset: 500),
                    ],
                    endsFetch: false
                )
        )
    }

    /// A player that asks for a little and hangs up before the answer (ffprobe, then ffmpeg): a
    /// request of at most 256 KiB is on its way from an origin close by, so it is read and its
    /// bytes kept for the next reader, not asked for again.
    @Test func aSmallRequestLeftBeforeItsAnswerIsReadAndKept() {
        var machine = newMachine(firstFetchSpan: 64 << 10)
        let start = ContinuousClock.now
        let reader = machine.addReader(offset: 0, end: nil)
        guard let fetch = startedFetch(&machine, reader: reader, now: start) else { return }
        #expect(machine.removeReader(reader).isEmpty, "a request of 64 KiB was given up")
        let info = ContentInfo(length: 1_000_000, etag: "\"a\"")
        let action = machine.answered(
            fetch.fetch,
            .partial(range: ByteRange(0, 64 << 10), info: info),
            sentIfRange: false,
            now: start
        )
        #expect(action.readBody)
        #expect(
            machine.received(fetch.fetch, count: 64 << 10, now: start)
                == .write([.init(skip: 0, count: 64 << 10, offset: 0)], endsFetch: false)
        )
    }

    /// A larger request left before its answer is given up: most of it is not on its way yet.
    /// Its answer, should it come all the same, is not read.
    @Test func aLargeRequestLeftBeforeItsAnswerIsGivenUp() {
        var machine = newMachine(firstFetchSpan: 1 << 20)
        let start = ContinuousClock.now
        let reader = machine.addReader(offset: 0, end: nil)
        guard let fetch = startedFetch(&machine, reader: reader, now: start) else { return }
        #expect(machine.removeReader(reader) == [fetch.fetch])
        let info = ContentInfo(length: 4_000_000, etag: "\"a\"")
        let action = machine.answered(
            fetch.fetch,
            .partial(range: ByteRange(0, 1 << 20), info: info),
            sentIfRange: false,
            now: start
        )
        #expect(!action.readBody)
    }
}
