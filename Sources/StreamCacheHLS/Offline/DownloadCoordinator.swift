/// Hands runs to the download's jobs and turns finished files into progress events: the
/// ``DownloadSchedule`` behind an actor, and the bytes counted.
actor DownloadCoordinator {
    private var schedule: DownloadSchedule
    private let renditions: [PackageRendition]
    private var bytesOnDisk: Int64
    private var bytesThisRun: Int64 = 0
    private var filesDone: Int
    private let emit: @Sendable (DownloadEvent) -> Void

    init(
        schedule: DownloadSchedule,
        renditions: [PackageRendition],
        bytesOnDisk: Int64,
        emit: @escaping @Sendable (DownloadEvent) -> Void
    ) {
        self.schedule = schedule
        self.renditions = renditions
        self.bytesOnDisk = bytesOnDisk
        self.filesDone = schedule.states.filter { $0 == .done }.count
        self.emit = emit
    }

    var isComplete: Bool { schedule.isComplete }

    /// The next run, with its items; `nil` when nothing waits.
    func nextRun() -> [ItemFetcher.Entry]? {
        schedule.nextRun().map { run in run.map { ($0, schedule.items[$0]) } }
    }

    /// Records a file made durable, and reports progress.
    func finished(_ index: Int, bytes: Int64) {
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

    var progress: DownloadProgress {
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
