import StreamCache
import StreamCacheTesting
import Testing

@testable import StreamCacheOfflineCore

/// The download schedule against a naive model, over seeded random plans and random orders of
/// jobs taking, finishing and giving back runs: every file done exactly once, runs contiguous
/// and bounded, progress that never goes back, loaded time ranges as the model computes them.
@Suite struct DownloadScheduleTests {
    @Test(arguments: 0..<200)
    func randomPlansAndJobOrdersKeepTheInvariants(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        let (items, renditions) = Self.randomPlan(&random)
        let alreadyDone = items.map { _ in random.chance(0.2) }
        let limit = Int64(random.next(in: 1...6)) * 1000
        var schedule = DownloadSchedule(items: items, done: alreadyDone, runLimit: limit)
        var done = alreadyDone
        var inFlight: [[Int]] = []
        var completedRenditions: [Int] = []
        var lastFraction = schedule.fraction
        let jobs = random.next(in: 1...5)
        var steps = 0
        while !schedule.isComplete {
            steps += 1
            guard steps < 10_000 else {
                Issue.record("seed \(seed): the schedule never completed")
                return
            }
            if inFlight.count < jobs, let run = schedule.nextRun() {
                // A run: files not done, not handed out already, each the next bytes of the one before.
                #expect(run.allSatisfy { !done[$0] && !inFlight.joined().contains($0) }, "seed \(seed)")
                for (a, b) in zip(run, run.dropFirst()) {
                    #expect(items[a].url == items[b].url && items[a].offset! + items[a].length! == items[b].offset!)
                }
                let bytes = run.reduce(Int64(0)) { $0 + (items[$1].length ?? 0) }
                #expect(run.count == 1 || bytes <= limit, "seed \(seed): a run of \(bytes) bytes")
                // The first file of a run is the earliest waiting one.
                let waiting = items.indices.filter { !done[$0] && !inFlight.joined().contains($0) }
                #expect(run.first == waiting.first, "seed \(seed)")
                inFlight.append(run)
                continue
            }
            guard !inFlight.isEmpty else {
                Issue.record("seed \(seed): nothing in flight and nothing handed out, yet not complete")
                return
            }
            let job = random.next(in: 0...(inFlight.count - 1))
            var run = inFlight.remove(at: job)
            // A job finishes some leading files of its run; a failed one gives the rest back.
            let finished = random.chance(0.7) ? run.count : random.next(in: 0...run.count)
            for index in run.prefix(finished) {
                #expect(!done[index], "seed \(seed): file \(index) finished twice")
                done[index] = true
                if let rendition = schedule.finished(index) { completedRenditions.append(rendition) }
                let fraction = schedule.fraction
                #expect(fraction >= lastFraction, "seed \(seed): progress went back")
                lastFraction = fraction
                let loaded = schedule.loadedTimeRanges(renditions: renditions)
                #expect(loaded == Self.modelLoaded(items, done: done, renditions: renditions), "seed \(seed)")
            }
            run.removeFirst(finished)
            schedule.giveBack(run)
        }
        #expect(done.allSatisfy { $0 }, "seed \(seed)")
        #expect(schedule.fraction == 1)
        let expectedCompletions = Set(items.indices.filter { !alreadyDone[$0] }.map { items[$0].rendition })
        #expect(completedRenditions.sorted() == expectedCompletions.sorted(), "seed \(seed)")
        #expect(
            schedule.loadedTimeRanges(renditions: renditions)
                == (DownloadSchedule.expectedTimeRange(renditions: renditions).upperBound > 0
                    ? [DownloadSchedule.expectedTimeRange(renditions: renditions)] : []),
            "seed \(seed)"
        )
    }

    /// Two or three renditions of 2 s segments (some byte ranges of one file, some files of
    /// their own), keys and init sections before the segments that need them, sorted as a plan is.
    static func randomPlan(_ random: inout SeededRandom) -> ([PackageItem], [PackageRendition]) {
        var items: [PackageItem] = []
        var renditions: [PackageRendition] = []
        let kinds: [PackageRendition.Kind] = [.video, .audio, .subtitles]
        for rendition in 0..<random.next(in: 2...3) {
            let count = random.next(in: 1...12)
            let singleFile = random.chance(0.5)
            var offset: Int64 = 0
            if random.chance(0.3) {
                items.append(
                    PackageItem(
                        kind: .initialization,
                        rendition: rendition,
                        path: "r\(rendition)/init",
                        url: "u\(rendition)",
                        offset: singleFile ? 0 : nil,
                        length: singleFile ? 500 : nil,
                        start: 0,
                        duration: 0
                    )
                )
                if singleFile { offset = 500 }
            }
            if random.chance(0.2) {
                items.append(
                    PackageItem(
                        kind: .key,
                        rendition: rendition,
                        path: "r\(rendition)/key",
                        url: "k\(rendition)",
                        offset: nil,
                        length: nil,
                        start: 0,
                        duration: 0
                    )
                )
            }
            for segment in 0..<count {
                let length = Int64(random.next(in: 200...3000))
                items.append(
                    PackageItem(
                        kind: .segment,
                        rendition: rendition,
                        path: "r\(rendition)/\(segment)",
                        url: singleFile ? "u\(rendition)" : "u\(rendition)-\(segment)",
                        offset: singleFile ? offset : nil,
                        length: singleFile ? length : nil,
                        start: Double(segment) * 2,
                        duration: 2
                    )
                )
                offset += length
            }
            renditions.append(
                PackageRendition(
                    kind: kinds[rendition],
                    folder: "r\(rendition)",
                    language: nil,
                    url: "p\(rendition)",
                    duration: Double(count) * 2
                )
            )
        }
        items.sort { ($0.start, $0.kind.rank, $0.rendition) < ($1.start, $1.kind.rank, $1.rendition) }
        return (items, renditions)
    }

    /// Loaded time ranges the slow way: a second is loaded when every video or audio rendition
    /// has the segment covering it (subtitles do not count).
    static func modelLoaded(
        _ items: [PackageItem],
        done: [Bool],
        renditions: [PackageRendition]
    ) -> [ClosedRange<Double>] {
        let playing = renditions.indices.filter { renditions[$0].kind != .subtitles }
        let end = Int(playing.map { renditions[$0].duration }.max() ?? 0)
        var ranges: [ClosedRange<Double>] = []
        for second in stride(from: 0, to: end, by: 2) {
            let loaded = playing.allSatisfy { rendition in
                items.indices.contains { index in
                    items[index].rendition == rendition && items[index].kind == .segment && done[index]
                        && items[index].start == Double(second)
                }
            }
            guard loaded else { continue }
            if let last = ranges.last, last.upperBound == Double(second) {
                ranges[ranges.count - 1] = last.lowerBound...Double(second + 2)
            } else {
                ranges.append(Double(second)...Double(second + 2))
            }
        }
        return ranges
    }
}

extension SeededRandom {
    mutating func next(in range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }
}
