/// Which files of a package are done, being fetched or waiting, and which to fetch next: the
/// state of one download, without I/O.
///
/// Files are handed out in the plan's order (presentation time across renditions), and byte
/// ranges of one origin file that follow each other go out together as one run, up to
/// `runLimit` bytes, so they cost one request.
package struct DownloadSchedule: Sendable {
    package enum ItemState: Hashable, Sendable {
        case waiting, fetching, done
    }

    package let items: [PackageItem]
    private(set) var states: [ItemState]
    /// The most bytes one run asks for, unless a single item is larger.
    package let runLimit: Int64
    /// For an item that is a byte range, the item holding the bytes right after it in the same file.
    private let successor: [Int?]
    private var remainingPerRendition: [Int: Int] = [:]
    /// Where to look for the next waiting item: every item before it is fetching or done.
    private var cursor = 0
    /// Seconds of segments in all, and done.
    private var totalDuration = 0.0
    private var doneDuration = 0.0
    /// The time ranges of each rendition's done segments, sorted and merged.
    private var donePerRendition: [Int: [ClosedRange<Double>]] = [:]

    package init(items: [PackageItem], done: [Bool], runLimit: Int64) {
        precondition(done.count == items.count)
        self.items = items
        self.runLimit = runLimit
        states = done.map { $0 ? .done : .waiting }
        var byStart: [String: Int] = [:]
        for (index, item) in items.enumerated() {
            if let offset = item.offset { byStart["\(offset) \(item.url)"] = index }
        }
        successor = items.map { item in
            guard let offset = item.offset, let length = item.length else { return nil }
            return byStart["\(offset + length) \(item.url)"]
        }
        for (index, item) in items.enumerated() {
            if !done[index] { remainingPerRendition[item.rendition, default: 0] += 1 }
            guard item.kind == .segment else { continue }
            totalDuration += item.duration
            if done[index] { noteDone(item) }
        }
    }

    /// Counts a segment's time as done.
    private mutating func noteDone(_ item: PackageItem) {
        guard item.kind == .segment else { return }
        doneDuration += item.duration
        Self.insert(item.start...(item.start + item.duration), into: &donePerRendition[item.rendition, default: []])
    }

    /// Adds `range` to sorted, merged `ranges`, merging it with those it touches.
    package static func insert(_ range: ClosedRange<Double>, into ranges: inout [ClosedRange<Double>]) {
        let tolerance = 1e-6
        // The first range that ends at or after the new one's start (binary search).
        var low = 0
        var high = ranges.count
        while low < high {
            let middle = (low + high) / 2
            if ranges[middle].upperBound + tolerance < range.lowerBound { low = middle + 1 } else { high = middle }
        }
        var merged = range
        var end = low
        while end < ranges.count, ranges[end].lowerBound <= merged.upperBound + tolerance {
            merged = min(merged.lowerBound, ranges[end].lowerBound)...max(merged.upperBound, ranges[end].upperBound)
            end += 1
        }
        ranges.replaceSubrange(low..<end, with: [merged])
    }

    package var isComplete: Bool { remainingPerRendition.isEmpty }

    /// The next run to fetch (item indices, in byte order), now marked fetching; `nil` when
    /// nothing waits.
    package mutating func nextRun() -> [Int]? {
        while cursor < states.count, states[cursor] != .waiting { cursor += 1 }
        guard cursor < states.count else { return nil }
        var run = [cursor]
        var bytes = items[cursor].length ?? 0
        states[cursor] = .fetching
        while let next = successor[run[run.count - 1]], states[next] == .waiting,
            let length = items[next].length, bytes + length <= runLimit
        {
            states[next] = .fetching
            run.append(next)
            bytes += length
        }
        return run
    }

    /// Records that item `index` is durable under its final name.
    ///
    /// - Returns: the rendition it completed, if it was that rendition's last item.
    package mutating func finished(_ index: Int) -> Int? {
        guard states[index] != .done else { return nil }
        states[index] = .done
        noteDone(items[index])
        let rendition = items[index].rendition
        let remaining = (remainingPerRendition[rendition] ?? 1) - 1
        remainingPerRendition[rendition] = remaining == 0 ? nil : remaining
        return remaining == 0 ? rendition : nil
    }

    /// Puts items that were being fetched back in the queue.
    package mutating func giveBack(_ indices: [Int]) {
        for index in indices where states[index] == .fetching {
            states[index] = .waiting
            cursor = min(cursor, index)
        }
    }

    /// The part of the segments' total duration that is done, 0 to 1 (1 with no segments).
    package var fraction: Double {
        // Exactly 1 when done, whatever order the durations were added in.
        if isComplete { return 1 }
        return totalDuration > 0 ? min(1, doneDuration / totalDuration) : 0
    }

    /// The time ranges, in seconds, that play from disk: the segments done in every rendition
    /// that carries video or audio (subtitles do not stop playback).
    package func loadedTimeRanges(renditions: [PackageRendition]) -> [ClosedRange<Double>] {
        var result: [ClosedRange<Double>]?
        for rendition in Self.playing(renditions) {
            let ranges = donePerRendition[rendition] ?? []
            result = result.map { Self.intersect($0, ranges) } ?? ranges
        }
        return result ?? []
    }

    /// The time range loaded once every file is done: as far as every playing rendition goes.
    package static func expectedTimeRange(renditions: [PackageRendition]) -> ClosedRange<Double> {
        0...(playing(renditions).map { renditions[$0].duration }.min() ?? 0)
    }

    /// The renditions that carry video or audio (all of them if none does).
    private static func playing(_ renditions: [PackageRendition]) -> [Int] {
        let playing = renditions.indices.filter { renditions[$0].kind != .subtitles }
        return playing.isEmpty ? Array(renditions.indices) : playing
    }

    /// The intersection of two sorted lists of disjoint ranges.
    package static func intersect(_ a: [ClosedRange<Double>], _ b: [ClosedRange<Double>]) -> [ClosedRange<Double>] {
        var result: [ClosedRange<Double>] = []
        var i = 0
        var j = 0
        while i < a.count && j < b.count {
            let low = max(a[i].lowerBound, b[j].lowerBound)
            let high = min(a[i].upperBound, b[j].upperBound)
            if low < high { result.append(low...high) }
            if a[i].upperBound < b[j].upperBound { i += 1 } else { j += 1 }
        }
        return result
    }
}
