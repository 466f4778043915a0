import Foundation
import Testing

@testable import StreamCache

/// A reader of a resource nothing is known of, whose process finds another process's claim on
/// it, waits for that process's first answer head (an origin that ignores `Range` sends every
/// byte from the start to each request), at most `headWait`, then asks the origin itself.
@Suite struct FirstHeadWaitTests {
    private func newMachine() -> ResourceStateMachine {
        ResourceStateMachine(
            info: ContentInfo(),
            recorded: ByteRangeSet(),
            freshUntil: nil,
            now: .now,
            settings: ResourceStateMachine.Settings(CacheConfiguration())
        )
    }

    @Test func aReaderWaitsForAnotherProcesssHeadThenAsksItself() {
        var machine = newMachine()
        let start = ContinuousClock.now
        // Another process asked for 500,000 on; this reader wants the bytes before. Each look
        // at the index (every 100 ms, as the session does) finds no head yet.
        let claimed = ResourceStateMachine.Shared(
            recorded: ByteRangeSet(),
            foreign: ByteRangeSet([ByteRange(500_000, 1_548_576)])
        )
        func read(_ reader: Int, after milliseconds: Int) -> ResourceStateMachine.ReadAction {
            let now = start + .milliseconds(milliseconds)
            machine.refreshed(claimed, generation: machine.generation, now: now)
            return machine.read(reader, at: 0, now: now)
        }
        let reader = machine.addReader(offset: 0, end: nil)
        guard case .awaitOtherProcess = read(reader, after: 0) else {
            Issue.record("the reader asked the origin before the other process's head")
            return
        }
        guard case .awaitOtherProcess = read(reader, after: 1_900) else {
            Issue.record("the reader stopped waiting before the bound")
            return
        }
        guard case .startFetch(let fetch) = read(reader, after: 2_000) else {
            Issue.record("the reader waited past the bound")
            return
        }
        #expect(fetch.first == 0)
    }

    @Test func theHeadThatArrivesEndsTheWait() {
        var machine = newMachine()
        let start = ContinuousClock.now
        machine.refreshed(
            .init(recorded: ByteRangeSet(), foreign: ByteRangeSet([ByteRange(500_000, 1_548_576)])),
            generation: machine.generation,
            now: start
        )
        let reader = machine.addReader(offset: 0, end: nil)
        _ = machine.read(reader, at: 0, now: start)
        // The other process's answer: the origin sends whole bodies, and it streams this one.
        let head = ContentInfo(length: 2_000_000, byteRangeAccess: false)
        machine.refreshed(
            .init(
                recorded: ByteRangeSet([ByteRange(0, 100_000)]),
                foreignStream: 100_000,
                stored: .init(info: head, freshUntil: nil)
            ),
            generation: machine.generation,
            now: start + .milliseconds(300)
        )
        #expect(machine.info.length == 2_000_000)
        guard case .deliver(let span, _) = machine.read(reader, at: 0, now: start + .milliseconds(300)) else {
            Issue.record("the recorded bytes were not delivered")
            return
        }
        #expect(span == ByteRange(0, 100_000))
        // Past them, the other process's stream brings the rest: no request of this one.
        guard case .awaitOtherProcess = machine.read(reader, at: 100_000, now: start + .seconds(5)) else {
            Issue.record("a second request to an origin that sends whole bodies")
            return
        }
    }
}
