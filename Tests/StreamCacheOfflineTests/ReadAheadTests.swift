import StreamCache
import Testing

@testable import StreamCacheOfflineCore

/// Which part a job with no file of its own reads ahead in: the back half of the widest part no
/// reader has, once the ends of the runs just handed out are known (or their wait is over), never
/// under twice the smallest part, never in a run whose own job brings it soon, and nothing in a
/// run that failed or finished.
@Suite struct ReadAheadTests {
    static let mib: Int64 = 1 << 20

    /// A coordinator with two whole-file runs handed out (`a.ts`, `b.ts`), their ends unknown.
    static func coordinatorWithTwoRunsInFlight(
        firstBytesWait: Duration = DownloadCoordinator.firstBytesWait
    ) async -> DownloadCoordinator {
        let items = ["a.ts", "b.ts"].enumerated().map { index, name in
            PackageItem(
                kind: .segment,
                rendition: 0,
                path: "video/\(name)",
                url: "http://origin.test/\(name)",
                offset: nil,
                length: nil,
                start: Double(index) * 10,
                duration: 10,
                decryption: nil
            )
        }
        let rendition = PackageRendition(kind: .video, folder: "video", language: nil, url: "", duration: 20)
        let coordinator = DownloadCoordinator(
            schedule: DownloadSchedule(items: items, done: [false, false], runLimit: 8 * mib),
            renditions: [rendition],
            bytesOnDisk: 0,
            firstBytesWait: firstBytesWait,
            emit: { _ in }
        )
        #expect(await coordinator.nextRun()?.first?.item.url == "http://origin.test/a.ts")
        #expect(await coordinator.nextRun()?.first?.item.url == "http://origin.test/b.ts")
        return coordinator
    }

    /// Two runs in flight whose ends are known, `a` and `b` bytes, and the moment they were.
    static func runsOfKnownEnds(
        _ a: Int64,
        _ b: Int64,
        firstBytesWait: Duration = DownloadCoordinator.firstBytesWait
    ) async -> (DownloadCoordinator, ContinuousClock.Instant) {
        let coordinator = await coordinatorWithTwoRunsInFlight(firstBytesWait: firstBytesWait)
        let start = ContinuousClock.now
        await coordinator.learnedEnd(of: 0, a)
        await coordinator.learnedEnd(of: 1, b)
        return (coordinator, start)
    }

    /// A moment past the wait for the first bytes of the runs handed out before it: their jobs
    /// have had none, so their origin is a distant one, read ahead in at once.
    static var pastFirstBytesWait: ContinuousClock.Instant { .now + DownloadCoordinator.firstBytesWait }

    @Test func aRunIsReadAheadInOnlyOnceEveryEndIsKnownThenByHalves() async {
        let coordinator = await Self.coordinatorWithTwoRunsInFlight()
        let later = Self.pastFirstBytesWait
        #expect(await coordinator.nextPartToReadAhead(now: later) == .later)
        await coordinator.learnedEnd(of: 0, 4 * Self.mib)
        // b, handed out just now, may be the wider.
        #expect(await coordinator.nextPartToReadAhead(now: later) == .later)
        await coordinator.learnedEnd(of: 1, 3 * Self.mib / 2)
        #expect(await coordinator.nextPartToReadAhead(now: later) == Self.readA(2, 4))
        // The widest parts left are as wide: the first, its job's own, is halved next.
        #expect(await coordinator.nextPartToReadAhead(now: later) == Self.readA(1, 2))
        // A learnt end is not learnt again differently.
        await coordinator.learnedEnd(of: 0, 1)
        #expect(await coordinator.nextPartToReadAhead(now: later) == Self.readA(3, 4))
        // Parts of 1 MiB are not halved, and b is too short to read ahead in.
        #expect(await coordinator.nextPartToReadAhead(now: later) == .done)
    }

    /// A job whose own pace brings the part sooner than another request would save time (a
    /// local origin) keeps its run to itself: a cut there would have the origin send what it had
    /// in flight past it twice. A slow one's run is read ahead in.
    @Test func aFastJobsRunIsLeftToItAndASlowOnesIsReadAheadIn() async {
        let (coordinator, start) = await Self.runsOfKnownEnds(8 * Self.mib, 8 * Self.mib)
        // a: 6 MiB in 6 ms; b: 8 KiB in 6 ms.
        await coordinator.received(64 << 10, in: 0, now: start + .milliseconds(1))
        await coordinator.received(6 << 20, in: 0, now: start + .milliseconds(7))
        await coordinator.received(64 << 10, in: 1, now: start + .milliseconds(1))
        await coordinator.received(8 << 10, in: 1, now: start + .milliseconds(7))
        let now = start + .milliseconds(8)
        #expect(await coordinator.nextPartToReadAhead(now: now) == Self.readB(4, 8))
        #expect(await coordinator.nextPartToReadAhead(now: now) == Self.readB(2, 4))
    }

    /// A job that started fast (an origin letting a burst through) is left its run only while
    /// its pace says it brings it soon: once it slows, its run is read ahead in.
    @Test func aFastStartThatSlowsDownIsReadAheadInOnceItSlows() async {
        let (coordinator, start) = await Self.runsOfKnownEnds(8 * Self.mib, 3 * Self.mib / 2)
        await coordinator.received(64 << 10, in: 0, now: start + .milliseconds(1))
        await coordinator.received(6 << 20, in: 0, now: start + .milliseconds(7))
        #expect(await coordinator.nextPartToReadAhead(now: start + .milliseconds(8)) == .later)
        // Nothing more for two seconds: 3 MiB a second, four of them left to a second job.
        #expect(await coordinator.nextPartToReadAhead(now: start + .seconds(2)) == Self.readA(4, 8))
    }

    /// Where the manifest's fetch said the origin is distant, a run is read ahead in without
    /// waiting for its job's first bytes.
    @Test func aDistantOriginsRunIsReadAheadInAtOnce() async {
        let (coordinator, _) = await Self.runsOfKnownEnds(4 * Self.mib, 3 * Self.mib / 2, firstBytesWait: .zero)
        #expect(await coordinator.nextPartToReadAhead() == Self.readA(2, 4))
    }

    /// A job's pace is watched for a moment from its first bytes before its run is read ahead in.
    @Test func aJobsPaceIsWatchedBeforeItsRunIsReadAheadIn() async {
        let (coordinator, start) = await Self.runsOfKnownEnds(4 * Self.mib, 3 * Self.mib / 2)
        await coordinator.received(64 << 10, in: 0, now: start + .milliseconds(1))
        #expect(await coordinator.nextPartToReadAhead(now: start + .milliseconds(3)) == .later)
        // A first burst and a pause: no pace yet, until the pause has lasted.
        #expect(await coordinator.nextPartToReadAhead(now: start + .milliseconds(8)) == .later)
        let still = start + .milliseconds(1) + DownloadCoordinator.stillWait
        #expect(await coordinator.nextPartToReadAhead(now: still) == Self.readA(2, 4))
    }

    /// A slow job's second bytes give its pace, and its run is read ahead in.
    @Test func aSlowJobsRunIsReadAheadInOnceItsPaceIsSeen() async {
        let (coordinator, start) = await Self.runsOfKnownEnds(4 * Self.mib, 3 * Self.mib / 2)
        await coordinator.received(64 << 10, in: 0, now: start + .milliseconds(1))
        await coordinator.received(8 << 10, in: 0, now: start + .milliseconds(7))
        #expect(await coordinator.nextPartToReadAhead(now: start + .milliseconds(8)) == Self.readA(2, 4))
    }

    /// Whichever job learns its run's end first, the first part read ahead is in the run where
    /// the widest part is: jobs sent to the first run known left the wider one to its own job.
    @Test func theWiderRunIsReadAheadInFirstWhicheverEndIsKnownFirst() async {
        let coordinator = await Self.coordinatorWithTwoRunsInFlight()
        await coordinator.learnedEnd(of: 0, 2 * Self.mib)
        #expect(await coordinator.nextPartToReadAhead() == .later)
        await coordinator.learnedEnd(of: 1, 8 * Self.mib)
        let later = Self.pastFirstBytesWait
        #expect(await coordinator.nextPartToReadAhead(now: later) == Self.readB(4, 8))
        #expect(await coordinator.nextPartToReadAhead(now: later) == Self.readB(2, 4))
    }

    /// A run whose end stays unknown (a body no answer gives the length of) holds the others
    /// back for ``DownloadCoordinator/endWait`` after it was handed out, no longer.
    @Test func anEndStillUnknownIsWaitedForOnlyUntilTheDeadline() async {
        let coordinator = await Self.coordinatorWithTwoRunsInFlight()
        await coordinator.learnedEnd(of: 0, 4 * Self.mib)
        let justBefore = ContinuousClock.now + DownloadCoordinator.endWait - .milliseconds(100)
        #expect(await coordinator.nextPartToReadAhead(now: justBefore) == .later)
        let past = ContinuousClock.now + DownloadCoordinator.endWait
        #expect(await coordinator.nextPartToReadAhead(now: past) == Self.readA(2, 4))
    }

    /// Reading `a.ts` from MiB `first` to MiB `end`.
    static func readA(_ first: Int64, _ end: Int64) -> DownloadCoordinator.ReadAheadTurn {
        .read(url: "http://origin.test/a.ts", part: ByteRange(first * mib, end * mib))
    }

    /// Reading `b.ts` from MiB `first` to MiB `end`.
    static func readB(_ first: Int64, _ end: Int64) -> DownloadCoordinator.ReadAheadTurn {
        .read(url: "http://origin.test/b.ts", part: ByteRange(first * mib, end * mib))
    }

    @Test func nothingIsReadAheadInARunThatFailedOrFinished() async {
        let coordinator = await Self.coordinatorWithTwoRunsInFlight()
        await coordinator.abandoned(0)
        #expect(await coordinator.nextPartToReadAhead() == .later)
        await coordinator.finished(1, bytes: 8 * Self.mib)
        #expect(await coordinator.nextPartToReadAhead() == .done)
    }
}
