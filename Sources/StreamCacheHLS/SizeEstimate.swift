import StreamCacheOfflineCore

/// The size a package is expected to have, worked out before its segments are fetched.
///
/// A playlist's `BANDWIDTH` is a peak and often far from what the segments hold, so it is the
/// last resort. Per rendition, in order of trust:
/// 1. byte ranges the playlist gives are exact;
/// 2. the lengths of a sample of its segments, spread over its duration, give bytes per second
///    for the segments not sampled (every segment is sampled when there are few);
/// 3. the variant's `AVERAGE-BANDWIDTH`, else `BANDWIDTH`, × duration, for the video rendition.
///
/// Keys count 16 bytes (an AES-128 key); init sections count their length when sampled.
struct SizeEstimate {
    /// Segments sampled per rendition at most.
    static let samplesPerRendition = 12

    let items: [PackageItem]
    let renditions: Int

    /// The origin URLs whose length the estimate asks for: every init section and up to
    /// ``samplesPerRendition`` segments of each rendition, of the items without a byte range.
    var probes: [String] {
        var urls: [String] = []
        var seen: Set<String> = []
        func add(_ url: String) {
            if seen.insert(url).inserted { urls.append(url) }
        }
        for rendition in 0..<renditions {
            let unknown = items.filter { $0.rendition == rendition && $0.length == nil }
            for item in unknown where item.kind == .initialization { add(item.url) }
            let segments = unknown.filter { $0.kind == .segment }
            for position in Self.spread(segments.count, Self.samplesPerRendition) { add(segments[position].url) }
        }
        return urls
    }

    /// The expected bytes, given the `lengths` learnt (by origin URL) and each rendition's
    /// `fallback` bit rate; `nil` when nothing says for any rendition.
    func bytes(lengths: [String: Int64], fallback: (Int) -> Int64?) -> Int64? {
        var total: Int64?
        for rendition in 0..<renditions {
            let own = items.filter { $0.rendition == rendition }
            if let bytes = Self.bytes(of: own, lengths: lengths, bitsPerSecond: fallback(rendition)) {
                total = (total ?? 0) + bytes
            }
        }
        return total
    }

    private static func bytes(of items: [PackageItem], lengths: [String: Int64], bitsPerSecond: Int64?) -> Int64? {
        var known: Int64 = 0
        var sampledBytes: Int64 = 0
        var sampledSeconds = 0.0
        var sampledCount = 0
        var unknown: [PackageItem] = []
        for item in items {
            if item.kind == .key {
                known += 16
            } else if let length = item.length {
                known += length
            } else if let length = lengths[item.url] {
                known += length
                if item.kind == .segment {
                    sampledBytes += length
                    sampledSeconds += item.duration
                    sampledCount += 1
                }
            } else if item.kind == .segment {
                unknown.append(item)
            }
        }
        guard !unknown.isEmpty else { return items.isEmpty ? nil : known }
        let seconds = unknown.reduce(0) { $0 + $1.duration }
        if sampledCount > 0 {
            let rest =
                sampledSeconds > 0
                ? Double(sampledBytes) / sampledSeconds * seconds
                : Double(sampledBytes) / Double(sampledCount) * Double(unknown.count)
            return known + Int64(rest)
        }
        guard let bitsPerSecond, bitsPerSecond > 0 else { return nil }
        return known + Int64(Double(bitsPerSecond) * seconds / 8)
    }

    /// Up to `samples` positions of `0..<count`, evenly spread, the first and the last included.
    static func spread(_ count: Int, _ samples: Int) -> [Int] {
        guard count > samples else { return Array(0..<count) }
        guard samples > 1 else { return samples == 1 ? [0] : [] }
        return (0..<samples).map { $0 * (count - 1) / (samples - 1) }
    }
}
