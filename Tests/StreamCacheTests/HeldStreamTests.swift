import Foundation
import Testing

@testable import StreamCache

/// A whole body (an origin that ignores `Range`) that this process's readers no longer want is
/// held for one to come back; a reader of another process that waits for it says so in the index
/// (a want), and the body reads on for it while the want stands, rather than end with the grace
/// and have that process ask the origin for every byte again.
@Suite struct HeldStreamTests {
    @Test func aHeldBodyReadsOnWhileAnotherProcessWantsIt() {
        var machine = ResourceStateMachine.ofNewResource()
        let start = ContinuousClock.now
        let reader = machine.addReader(offset: 0, end: 100)
        guard case .startFetch(let fetch) = machine.read(reader, at: 0, now: start) else {
            Issue.record("no fetch started")
            return
        }
        _ = machine.answered(fetch.fetch, .full(info: ContentInfo(length: 3000)), sentIfRange: false, now: start)
        _ = machine.received(fetch.fetch, count: 500, now: start)
        _ = machine.wrote(fetch.fetch, now: start)
        machine.removeReader(reader)
        #expect(machine.waitsForReader(fetch.fetch, now: start) == true, "not held for a returning reader")

        // The index shows another process's reader waiting for the stream: it reads on.
        let later = start + .milliseconds(500)
        machine.refreshed(
            .init(recorded: ByteRangeSet(), othersWantStream: true),
            generation: machine.generation,
            now: later
        )
        #expect(machine.waitsForReader(fetch.fetch, now: later) == nil, "held while another process waits")
        #expect(
            machine.received(fetch.fetch, count: 200, now: later)
                == .write([.init(skip: 0, count: 200, offset: 500)], endsFetch: false)
        )
        _ = machine.wrote(fetch.fetch, now: later)

        // Not said again within `wantHold`: held once more, for the grace.
        let lapsed = later + machine.settings.wantHold
        #expect(machine.waitsForReader(fetch.fetch, now: lapsed) == true)
        #expect(machine.waitsForReader(fetch.fetch, now: lapsed + machine.settings.orphanGrace) == false)
    }
}
