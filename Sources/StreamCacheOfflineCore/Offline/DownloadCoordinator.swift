import StreamCache

/// Hands runs to the download's jobs and turns finished files into progress events: the
/// ``DownloadSchedule`` behind an actor, and the bytes counted.
package actor DownloadCoordinator {
    private var schedule: DownloadSchedule
    private let renditions: [PackageRendition]
    private var bytesOnDisk: Int64
    private var bytesThisRun: Int64 = 0
    private var filesDone: Int
    private let emit: @Sendable (DownloadEvent) -> Void
    /// The runs handed out and not finished, by the index of their last file, for the jobs left
    /// with no run to read ahead in (``nextPartToReadAhead()``).
    private var inFlight: [Int: RunInFlight] = [:]

    /// A run handed out: its URL, its first byte, its end once known (from the plan, or from
    /// the answer its own job gets), and where each reader of it (its own job's and those
    /// reading ahead) starts.
    private struct RunInFlight {
        package let url: String
        package let first: Int64
        package var end: Int64?
        package var starts: [Int64]
        /// When it was handed out.
        package let handedOut: ContinuousClock.Instant
        /// When its own job's first bytes from the origin came, and how many it has had since:
        /// its pace.
        package var firstBytesAt: ContinuousClock.Instant?
        package var bytesSinceFirst: Int64 = 0
        /// No part of it is left to read ahead.
        package var isShared = false

        /// Whether another job reading the back half of a part `width` wide would save its own
        /// job less than ``DownloadCoordinator/leastGain``; `nil` while its pace is watched.
        ///
        /// The other job's request saves half the part's time at the job's pace, less the
        /// round trip the job's own first bytes took. A job with no byte `firstBytesWait` after
        /// its run was handed out talks to a distant origin, whose pace would be learnt too late
        /// to matter: its run is read ahead in at once.
        package func bringsSoon(_ width: Int64, now: ContinuousClock.Instant, firstBytesWait: Duration) -> Bool? {
            guard let firstBytesAt else { return now < handedOut + firstBytesWait ? nil : false }
            let watched = firstBytesAt.duration(to: now)
            // Bytes come in bursts: a first one and a pause say nothing of the pace yet.
            guard watched >= DownloadCoordinator.paceWait,
                bytesSinceFirst > 0 || watched >= DownloadCoordinator.stillWait
            else { return nil }
            let pace = Double(bytesSinceFirst) / watched.inSeconds
            let saved = Double(width) / 2 / pace - handedOut.duration(to: firstBytesAt).inSeconds
            return saved < DownloadCoordinator.leastGain.inSeconds
        }

        /// The widest part no reader has yet: where it starts (an index of `starts`) and its
        /// width; 0 wide while the end is unknown.
        package var widestPart: (index: Int, width: Int64) {
            guard let end else { return (0, 0) }
            let bounds = starts + [end]
            var widest = (index: 0, width: bounds[1] - bounds[0])
            for part in starts.indices where bounds[part + 1] - bounds[part] > widest.width {
                widest = (part, bounds[part + 1] - bounds[part])
            }
            return widest
        }
    }

    /// The fewest bytes a job reads ahead in another's run: below that, a request's round trip
    /// costs more than a second connection saves.
    package static let smallestPart: Int64 = 1 << 20

    /// How long after a run is handed out its end is waited for before others are read ahead in
    /// without it: its widest part may be the widest of all, and jobs that went to the others
    /// first would leave it to its own job. A body whose length no answer gives is never
    /// waited for longer.
    package static let endWait: Duration = .seconds(1)

    /// How long a job's pace is watched, from its first bytes from the origin, before a part of
    /// its run is read ahead in (``RunInFlight/bringsSoon(_:now:firstBytesWait:)``).
    package static let paceWait: Duration = .milliseconds(5)

    /// How long a job that has had nothing since its first bytes is watched before it counts as
    /// slow.
    package static let stillWait: Duration = .milliseconds(100)

    /// How long after a run is handed out its job's first bytes from the origin are waited for
    /// by default: a local origin's come within it (through the cache's claim and request), a
    /// distant one's run is read ahead in without its pace.
    package static let firstBytesWait: Duration = .milliseconds(15)

    /// This download's wait for a job's first bytes: none where the origin is known to be
    /// distant.
    private let waitForFirstBytes: Duration

    /// The least time a part read ahead must save its run's own job. A job faster than that
    /// has its origin send what it had in flight past the cut twice, for less: on a local
    /// origin, the whole file.
    package static let leastGain: Duration = .milliseconds(250)

    init(
        schedule: DownloadSchedule,
        renditions: [PackageRendition],
        bytesOnDisk: Int64,
        firstBytesWait: Duration = DownloadCoordinator.firstBytesWait,
        emit: @escaping @Sendable (DownloadEvent) -> Void
    ) {
        waitForFirstBytes = firstBytesWait
        self.schedule = schedule
        self.renditions = renditions
        self.bytesOnDisk = bytesOnDisk
        self.filesDone = schedule.states.filter { $0 == .done }.count
        self.emit = emit
    }

    package var isComplete: Bool { schedule.isComplete }

    /// The next run, with its items; `nil` when nothing waits.
    package func nextRun() -> [ItemFetcher.Entry]? {
        guard let run = schedule.nextRun() else { return nil }
        let entries: [ItemFetcher.Entry] = run.map { ($0, schedule.items[$0]) }
        let first = entries[0].item.range?.lowerBound ?? 0
        inFlight[run[run.count - 1]] = RunInFlight(
            url: entries[0].item.url,
            first: first,
            end: entries[entries.count - 1].item.range?.upperBound,
            starts: [first],
            handedOut: .now
        )
        return entries
    }

    /// What a job with no run of its own does next.
    package enum ReadAheadTurn: Equatable {
        /// Read `part` of the file at `url`, claimed for it.
        case read(url: String, part: ByteRange)
        /// Runs are in flight whose end their jobs have yet to learn, or whose jobs' pace is
        /// being watched: ask again in a moment.
        case later
        /// No run has a part left to read ahead in.
        case done
    }

    /// Claims the back half of the widest part no reader has yet, in the run in flight where it
    /// is widest, once every run handed out less than ``endWait`` ago has its end known. A run
    /// whose widest part is under twice ``smallestPart`` is left alone from then on; one whose
    /// own job brings it soon (``RunInFlight/bringsSoon(_:now:firstBytesWait:)``) is left alone for now.
    package func nextPartToReadAhead(now: ContinuousClock.Instant = .now) -> ReadAheadTurn {
        // Runs whose jobs bring their parts soon at the pace seen so far: asked about again
        // later, as an origin that let a burst through may slow down.
        var soon: Set<Int> = []
        while true {
            let open = inFlight.filter { !$0.value.isShared && !soon.contains($0.key) }
            if open.values.contains(where: { $0.end == nil && now < $0.handedOut + Self.endWait }) { return .later }
            let known = open.filter { $0.value.end != nil }
            guard let (key, run) = known.max(by: { $0.value.widestPart.width < $1.value.widestPart.width }) else {
                return open.isEmpty && soon.isEmpty ? .done : .later
            }
            let (widest, width) = run.widestPart
            guard width >= 2 * Self.smallestPart else {
                inFlight[key]?.isShared = true
                continue
            }
            switch run.bringsSoon(width, now: now, firstBytesWait: waitForFirstBytes) {
            case nil:
                return .later
            case true?:
                soon.insert(key)
                continue
            case false?:
                break
            }
            let start = run.starts[widest]
            inFlight[key]?.starts.insert(start + width / 2, at: widest + 1)
            return .read(url: run.url, part: ByteRange(start + width / 2, start + width))
        }
    }

    /// Forgets run `key`, which failed: nothing is read ahead in it.
    package func abandoned(_ key: Int) {
        inFlight[key] = nil
    }

    /// Records `count` bytes that run `key`'s own job has received from the origin, for its
    /// pace.
    package func received(_ count: Int, in key: Int, now: ContinuousClock.Instant = .now) {
        guard var run = inFlight[key] else { return }
        if run.firstBytesAt == nil {
            run.firstBytesAt = now
        } else {
            run.bytesSinceFirst += Int64(count)
        }
        inFlight[key] = run
    }

    /// Records where run `key` ends, as the answer to its own job said; the plan did not.
    package func learnedEnd(of key: Int, _ end: Int64) {
        guard inFlight[key]?.end == nil else { return }
        inFlight[key]?.end = end
    }

    /// Records a file made durable, and reports progress.
    package func finished(_ index: Int, bytes: Int64) {
        inFlight[index] = nil
        let completed = schedule.finished(index)
        bytesOnDisk += bytes
        bytesThisRun += bytes
        filesDone += 1
        emit(.progress(progress))
        if let completed {
            emit(
                .mediaSelectionCompleted(
                    kind: renditions[completed].kind.rawValue,
                    language: renditions[completed].language
                )
            )
        }
    }

    package var progress: DownloadProgress {
        DownloadProgress(
            loaded: schedule.loadedTimeRanges(renditions: renditions),
            expected: DownloadSchedule.expectedTimeRange(renditions: renditions),
            fraction: schedule.fraction,
            bytes: bytesOnDisk,
            bytesThisRun: bytesThisRun,
            filesDone: filesDone,
            files: schedule.items.count
        )
    }
}
