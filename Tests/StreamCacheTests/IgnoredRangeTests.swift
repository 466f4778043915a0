import Foundation
import Testing

@testable import StreamCache

/// An origin known to ignore `Range` sends every byte from the first to every request: a second
/// reader of a new resource of it waits for the answer already asked for rather than ask too.
/// One not known to (the first resource of an origin) gets a request of its own at once, as
/// ``ResourceStateMachineModelTests`` shows, so a seek costs no wait.
@Suite struct IgnoredRangeTests {
    private func newMachine(ignoresRange: Bool) -> ResourceStateMachine {
        var configuration = CacheConfiguration()
        configuration.firstFetchSpan = 1000
        var machine = ResourceStateMachine(
            info: ContentInfo(),
            recorded: RangeSet(),
            freshUntil: nil,
            now: .now,
            settings: ResourceStateMachine.Settings(configuration)
        )
        machine.ignoresRange = ignoresRange
        return machine
    }

    @Test func aWholeBodyForARangeTellsTheOriginIgnoresIt() {
        var machine = newMachine(ignoresRange: false)
        let reader = machine.addReader(offset: 0, end: nil)
        guard case .startFetch(let fetch) = machine.read(reader, at: 0, now: .now) else {
            Issue.record("no fetch started")
            return
        }
        let action = machine.answered(fetch.fetch, .full(info: ContentInfo(length: 3000)), sentIfRange: false, now: .now)
        #expect(action.ignoresRange && machine.ignoresRange)
    }

    @Test func aRangeAnsweredOrANewVersionForIfRangeTellsNothing() {
        var partial = newMachine(ignoresRange: false)
        let reader = partial.addReader(offset: 0, end: nil)
        guard case .startFetch(let fetch) = partial.read(reader, at: 0, now: .now) else {
            Issue.record("no fetch started")
            return
        }
        let info = ContentInfo(length: 3000, etag: "\"a\"")
        let answer = partial.answered(fetch.fetch, .partial(range: ByteRange(0, 1000), info: info), sentIfRange: false, now: .now)
        #expect(!answer.ignoresRange && !partial.ignoresRange)

        // A cached version, a request with `If-Range`, and a whole new version in answer.
        var cached = ResourceStateMachine(
            info: info,
            recorded: RangeSet([ByteRange(0, 1000)]),
            freshUntil: .now + .seconds(60),
            now: .now,
            settings: ResourceStateMachine.Settings(CacheConfiguration())
        )
        let later = cached.addReader(offset: 1000, end: nil)
        guard case .startFetch(let next) = cached.read(later, at: 1000, now: .now) else {
            Issue.record("no fetch for the missing bytes")
            return
        }
        #expect(next.ifRange == "\"a\"")
        let replaced = cached.answered(
            next.fetch,
            .full(info: ContentInfo(length: 5000, etag: "\"b\"")),
            sentIfRange: true,
            now: .now
        )
        #expect(!replaced.ignoresRange && !cached.ignoresRange)
    }

    @Test func aSecondReaderWaitsForTheFirstAnswerOfAnOriginThatIgnoresRange() {
        var machine = newMachine(ignoresRange: true)
        let first = machine.addReader(offset: 0, end: nil)
        guard case .startFetch(let fetch) = machine.read(first, at: 0, now: .now) else {
            Issue.record("no fetch started")
            return
        }
        // Past the first request: with an origin that honours ranges, a fetch of its own.
        let seek = machine.addReader(offset: 500_000, end: nil)
        guard case .wait = machine.read(seek, at: 500_000, now: .now) else {
            Issue.record("a second request before the first answer")
            return
        }
        // The whole body comes: the seeking reader waits for it to reach its byte.
        let info = ContentInfo(length: 2_000_000)
        _ = machine.answered(fetch.fetch, .full(info: info), sentIfRange: false, now: .now)
        switch machine.read(seek, at: 500_000, now: .now) {
        case .wait, .waitForStream: break
        case let other: Issue.record("the seeking reader did not wait for the whole body: \(other)")
        }
    }

    @Test func aRangeAnsweredAfterAllLetsTheWaitingReaderAskForItsOwn() {
        var machine = newMachine(ignoresRange: true)
        let first = machine.addReader(offset: 0, end: nil)
        guard case .startFetch(let fetch) = machine.read(first, at: 0, now: .now) else {
            Issue.record("no fetch started")
            return
        }
        let seek = machine.addReader(offset: 500_000, end: nil)
        _ = machine.read(seek, at: 500_000, now: .now)
        let info = ContentInfo(length: 2_000_000, etag: "\"a\"")
        _ = machine.answered(fetch.fetch, .partial(range: ByteRange(0, 1000), info: info), sentIfRange: false, now: .now)
        guard case .startFetch(let own) = machine.read(seek, at: 500_000, now: .now) else {
            Issue.record("the seeking reader did not ask for its bytes")
            return
        }
        #expect(own.first == 500_000)
    }
}
