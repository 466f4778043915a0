import Foundation
import Testing

@testable import StreamCache

/// An origin known to ignore `Range` sends every byte from the first to every request: a second
/// reader of a new resource of it waits for the answer already asked for rather than ask too.
/// So does one of an origin not met yet (the first resource of an origin), until the first
/// answer's head says what the origin does. One known to honour `Range` gets a request of its
/// own at once, as ``ResourceStateMachineModelTests`` shows, so a seek costs no wait.
@Suite struct IgnoredRangeTests {
    private func newMachine(_ support: OriginRangeSupport.Support) -> ResourceStateMachine {
        var machine = ResourceStateMachine.ofNewResource()
        machine.originRangesAre(support)
        return machine
    }

    /// The engine's list is by origin (scheme, host in any case, port), and an origin that
    /// answers a range after a whole body is known to honour ranges (a CDN that sent one whole
    /// body on a miss of its own).
    @Test func originsAreNotedBySchemeHostAndPortAsTheirLastAnswerToARangeSays() throws {
        let origins = OriginRangeSupport()
        let episode = try #require(URL(string: "http://Media.Example.com:8080/ep1.mp3"))
        #expect(origins.support(of: episode) == .unknown)
        origins.note(episode, ignored: true)
        #expect(origins.support(of: try #require(URL(string: "http://media.example.com:8080/ep2.mp3"))) == .ignored)
        #expect(origins.support(of: try #require(URL(string: "http://media.example.com/ep2.mp3"))) == .unknown)
        #expect(origins.support(of: try #require(URL(string: "https://media.example.com:8080/ep2.mp3"))) == .unknown)
        origins.note(try #require(URL(string: "http://media.example.com:8080/ep3.mp3")), ignored: false)
        #expect(origins.support(of: episode) == .honoured)
    }

    /// A second reader of a resource of an origin not met yet waits for the first answer's head;
    /// a range in it lets the reader ask for its own bytes.
    @Test func aSecondReaderOfAnOriginNotMetWaitsForTheFirstAnswersHead() {
        guard case (var machine, let fetch, let seek, let seekRead)? = aFetchAndASeek(of: .unknown) else { return }
        guard case .wait = seekRead else {
            Issue.record("a second request before the first answer")
            return
        }
        let info = ContentInfo(length: 2_000_000, etag: "\"a\"")
        let answer = machine.answered(
            fetch,
            .partial(range: ByteRange(0, 1000), info: info),
            sentIfRange: false,
            now: .now
        )
        #expect(answer.ignoresRange == false && machine.rangeSupport == .honoured)
        guard case .startFetch(let own) = machine.read(seek, at: 500_000, now: .now) else {
            Issue.record("the seeking reader did not ask for its bytes")
            return
        }
        #expect(own.first == 500_000)
    }

    /// A first reader's fetch of an origin known to ignore `Range` (or as `support` says), and a
    /// reader at 500,000, past its request (1,000 bytes), that read once before any answer came.
    private func aFetchAndASeek(
        of support: OriginRangeSupport.Support = .ignored
    ) -> (ResourceStateMachine, fetch: Int, seek: Int, seekRead: ResourceStateMachine.ReadAction)? {
        var machine = newMachine(support)
        guard let fetch = machine.startFirstFetch() else { return nil }
        let seek = machine.addReader(offset: 500_000, end: nil)
        let action = machine.read(seek, at: 500_000, now: .now)
        return (machine, fetch.fetch, seek, action)
    }

    @Test func aWholeBodyForARangeTellsTheOriginIgnoresIt() {
        var machine = newMachine(.honoured)
        guard let fetch = machine.startFirstFetch() else { return }
        let action = machine.answered(
            fetch.fetch,
            .full(info: ContentInfo(length: 3000)),
            sentIfRange: false,
            now: .now
        )
        #expect(action.ignoresRange == true && machine.ignoresRange)
    }

    @Test func aRangeAnsweredSaysTheOriginHonoursItAndANewVersionForIfRangeSaysNothing() {
        var partial = newMachine(.honoured)
        guard let fetch = partial.startFirstFetch() else { return }
        let info = ContentInfo(length: 3000, etag: "\"a\"")
        let answer = partial.answered(
            fetch.fetch,
            .partial(range: ByteRange(0, 1000), info: info),
            sentIfRange: false,
            now: .now
        )
        #expect(answer.ignoresRange == false && !partial.ignoresRange)

        // A cached version, a request with `If-Range`, and a whole new version in answer.
        var cached = ResourceStateMachine(
            info: info,
            recorded: ByteRangeSet([ByteRange(0, 1000)]),
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
        #expect(replaced.ignoresRange == nil && !cached.ignoresRange)
    }

    @Test func aSecondReaderWaitsForTheFirstAnswerOfAnOriginThatIgnoresRange() {
        guard case (var machine, let fetch, let seek, let seekRead)? = aFetchAndASeek() else { return }
        // Past the first request: with an origin that honours ranges, a fetch of its own.
        guard case .wait = seekRead else {
            Issue.record("a second request before the first answer")
            return
        }
        // The whole body comes: the seeking reader waits for it to reach its byte.
        let info = ContentInfo(length: 2_000_000)
        _ = machine.answered(fetch, .full(info: info), sentIfRange: false, now: .now)
        switch machine.read(seek, at: 500_000, now: .now) {
        case .wait, .waitForStream: break
        case let other: Issue.record("the seeking reader did not wait for the whole body: \(other)")
        }
    }

    @Test func aRangeAnsweredAfterAllLetsTheWaitingReaderAskForItsOwn() {
        guard case (var machine, let fetch, let seek, _)? = aFetchAndASeek() else { return }
        let info = ContentInfo(length: 2_000_000, etag: "\"a\"")
        _ = machine.answered(fetch, .partial(range: ByteRange(0, 1000), info: info), sentIfRange: false, now: .now)
        guard case .startFetch(let own) = machine.read(seek, at: 500_000, now: .now) else {
            Issue.record("the seeking reader did not ask for its bytes")
            return
        }
        #expect(own.first == 500_000)
    }
}
