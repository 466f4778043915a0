import Foundation
import StreamCacheOfflineCore

/// One rendition of a live recording: its package playlist so far, where the origin's numbering
/// stands, and what was lost.
///
/// Each reload of the origin's playlist gives the segments past the last one taken
/// (``newSegments(in:startingAt:)``); a segment numbered past the next expected one means the
/// ones between left the window unfetched, and a numbering that falls far behind means the origin
/// started counting again (a new *epoch*, whose file names differ).
struct TrackRecording {
    let url: URL
    var playlist: RecordedPlaylist
    var planner: SegmentPlanner
    /// The origin's media sequence number of the last segment taken (to fetch, listed or lost).
    var lastSequence: Int64?
    var epoch: Int
    var lost: RecordingState.Track
    /// The next segment listed follows lost media.
    var afterLoss = false
    /// The origin's playlist ended and every segment in it was taken.
    var finished = false

    init(url: URL, playlist: RecordedPlaylist, planner: SegmentPlanner, lost: RecordingState.Track) {
        self.url = url
        self.playlist = playlist
        self.lost = lost
        // A restarted recording goes on after its last listed segment: named `[e<epoch>-]s<n>.ext`.
        let last = playlist.playlist.segments.last.flatMap { Self.numbering(ofFileName: $0.uri) }
        epoch = last?.epoch ?? 0
        lastSequence = last?.sequence
        var planner = planner
        planner.naming = .recorded(epoch: epoch)
        self.planner = planner
        // What the origin dropped while no recording ran is found as any gap is
        // (``unseenSegments(in:startingAt:)``): a restart that lost nothing adds no discontinuity.
    }

    /// The segments of `origin` to take now, each with its media sequence number: those after
    /// the last one taken or, for a track that has taken none, from `start` (the oldest listed
    /// when `start` is no longer listed). Counts the segments skipped as lost.
    mutating func newSegments(in origin: MediaPlaylist, startingAt start: Int64) -> [(Int64, Segment)] {
        let taken = unseenSegments(in: origin, startingAt: start)
        if let last = taken.last { lastSequence = last.0 }
        return taken
    }

    private mutating func unseenSegments(in origin: MediaPlaylist, startingAt start: Int64) -> [(Int64, Segment)] {
        let first = origin.mediaSequence
        let numbered = origin.segments.enumerated().map { (first + Int64($0.offset), $0.element) }
        guard let lastSequence else { return numbered.filter { $0.0 >= start } }
        let lastListed = first + Int64(origin.segments.count) - 1
        if !origin.segments.isEmpty, lastListed + Int64(max(origin.segments.count, 3)) < lastSequence {
            // Numbered far behind what was taken: the origin counts again from a new start (a
            // copy served stale by a cache lags by less than a window).
            epoch += 1
            planner.naming = .recorded(epoch: epoch)
            self.lastSequence = nil
            afterLoss = true
            return numbered
        }
        if first > lastSequence + 1 {
            let missing = first - lastSequence - 1
            lost.lostSegments += Int(missing)
            lost.lostSeconds += Double(missing) * Double(origin.targetDuration ?? 0)
            afterLoss = true
        }
        return numbered.filter { $0.0 > lastSequence }
    }

    /// Lists `segment` (pointing at its file), the next one taken, or counts it lost (`nil`).
    mutating func took(_ segment: Segment?, duration: Double) {
        guard let segment else {
            lost.lostSegments += 1
            lost.lostSeconds += duration
            afterLoss = true
            return
        }
        playlist.append(segment, afterLoss: afterLoss)
        afterLoss = false
    }

    /// The origin's media sequence number of the last segment listed, in the current epoch.
    var lastListed: Int64? {
        guard let last = playlist.playlist.segments.last.flatMap({ Self.numbering(ofFileName: $0.uri) }),
            last.epoch == epoch
        else { return nil }
        return last.sequence
    }

    /// The origin's media sequence number of the first segment listed, in the current epoch.
    var firstListed: Int64? {
        playlist.playlist.segments.lazy.compactMap { Self.numbering(ofFileName: $0.uri) }.first { $0.epoch == epoch }?
            .sequence
    }

    /// Lists only the segments numbered from `sequence` on (of the current epoch).
    mutating func cut(before sequence: Int64) {
        let dropped = playlist.playlist.segments.prefix { segment in
            guard let numbering = Self.numbering(ofFileName: segment.uri), numbering.epoch == epoch else { return true }
            return numbering.sequence < sequence
        }
        playlist.dropFirst(dropped.count)
    }

    /// Lists only the segments numbered up to `sequence` (of the current epoch).
    mutating func cut(after sequence: Int64) {
        let kept = playlist.playlist.segments.prefix { segment in
            guard let numbering = Self.numbering(ofFileName: segment.uri), numbering.epoch == epoch else { return true }
            return numbering.sequence <= sequence
        }
        playlist.keepFirst(kept.count)
    }

    /// The epoch and media sequence number a recorded segment's file name carries.
    static func numbering(ofFileName name: String) -> (epoch: Int, sequence: Int64)? {
        var stem = Substring(name.prefix { $0 != "." })
        var epoch = 0
        if stem.hasPrefix("e"), let dash = stem.firstIndex(of: "-"),
            let number = Int(stem.dropFirst().prefix(upTo: dash))
        {
            epoch = number
            stem = stem[stem.index(after: dash)...]
        }
        guard stem.hasPrefix("s"), let sequence = Int64(stem.dropFirst()) else { return nil }
        return (epoch, sequence)
    }
}
