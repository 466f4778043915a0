import StreamCache
import Testing

@testable import StreamCacheOfflineCore

/// Which part a job with no file of its own reads ahead in: the back half of the widest part no
/// reader has, once the ends of the runs just handed out are known (or their wait is over), never
/// under twice the smallest part, and nothing in a run that failed or finished.
@Suite struct ReadAheadTests {
    static let mib: Int64 = 1 << 20

    /// A coordinator with two whole-file runs handed out (`a.ts`, `b.ts`), their ends unknown.
    static func coordinatorWithTwoRunsInFlight() async -> DownloadCoordinator {
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
            emit: { _ in }
        )
        #expect(await coordinator.nextRun()?.first?.item.url == "http://origin.test/a.ts")
        #expect(await coordinator.nextRun()?.first?.item.url == "http://origin.test/b.ts")
        return coordinator
    }

    @Test func aRunIsReadAheadInOnlyOnceEveryEndIsKnownThenByHalves() async {
        let coordinator = await Self.coordinatorWithTwoRunsInFlight()
        #expect(await coordinator.nextPartToReadAhead() == .later)
        await coordinator.learnedEnd(of: 0, 4 * Self.mib)
        // b, handed out just now, may be the wider.
        #expect(await coordinator.nextPartToReadAhead() == .later)
        await coordinator.learnedEnd(of: 1, 3 * Self.mib / 2)
        #expect(await coordinator.nextPartToReadAhead() == Self.readA(2, 4))
        // The widest parts left are as wide: the first, its job's own, is halved next.
        #expect(await coordinator.nextPartToReadAhead() == Self.readA(1, 2))
        // A learnt end is not learnt again differently.
        await coordinator.learnedEnd(of: 0, 1)
        #expect(await coordinator.nextPartToReadAhead() == Self.readA(3, 4))
        // Parts of 1 MiB are not halved, and b is too short to read ahead in.
        #expect(await coordinator.nextPartToReadAhead() == .done)
    }

    /// Whichever job learns its run's end first, the first part read ahead is in the run where
    /// the widest part is: jobs sent to the first run known left the wider one to its own job.
    @Test func theWiderRunIsReadAheadInFirstWhicheverEndIsKnownFirst() async {
        let coordinator = await Self.coordinatorWithTwoRunsInFlight()
        await coordinator.learnedEnd(of: 0, 2 * Self.mib)
        #expect(await coordinator.nextPartToReadAhead() == .later)
        await coordinator.learnedEnd(of: 1, 8 * Self.mib)
        #expect(await coordinator.nextPartToReadAhead() == Self.readB(4, 8))
        #expect(await coordinator.nextPartToReadAhead() == Self.readB(2, 4))
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
