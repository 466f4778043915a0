import Foundation
import StreamCacheDASHModel
import StreamCacheOfflineCore

/// One representation of a DASH live recording: the segments it has taken, by where they start
/// on the period's timeline, and what was lost.
///
/// Each reload's window gives the segments past the last one taken (``take(_:)``). Segments are
/// told apart by their times, never by their numbers alone: one that starts before the last
/// taken ends (a timeline that rewrites the past) is not taken, so nothing is spliced, and a
/// `$Number$` that goes backwards while times go on ends the recording, since its URLs no longer
/// name the segments its times say.
struct RepresentationRecording {
    /// A segment taken: fetched, being fetched, or tried again after a reload.
    struct Taken: Equatable {
        let segment: LiveSegment
        /// Where the package keeps it, relative to its folder.
        let path: String
        var attempts = 0
        var isDone = false
    }

    let id: String
    let folder: String
    var taken: [Taken] = []
    var lost = RecordingState.Track()

    /// Where the last segment taken ends, in seconds of the period.
    var end: Double? { taken.last?.segment.end }
    /// Seconds of media in the package.
    var recordedSeconds: Double { taken.filter(\.isDone).reduce(0) { $0 + $1.segment.duration } }

    /// How far apart two segments may be and still follow each other: rounding in the MPD.
    static let tolerance = 0.005

    /// Takes the segments of `window` past the last one taken and not before `origin`, each named
    /// by its start in milliseconds after `origin`; counts a hole before the first as lost.
    ///
    /// - Returns: how many were taken.
    /// - Throws: ``OfflineError`` `manifest` when the numbering went backwards.
    mutating func take(_ window: LiveWindow, origin: Double) throws(OfflineError) -> Int {
        let last = taken.last?.segment
        let new = window.segments.filter { segment in
            guard segment.start >= origin - Self.tolerance else { return false }
            guard let last else { return true }
            return segment.start >= last.end - Self.tolerance
        }
        guard let first = new.first else { return 0 }
        if let last {
            if window.isNumbered, last.number >= 0, first.number <= last.number {
                throw OfflineError(
                    .manifest,
                    "representation \(id) went back in its $Number$: the segment at \(Self.text(first.start)) s is "
                        + "number \(first.number), after number \(last.number) at \(Self.text(last.start)) s"
                )
            }
            let hole = first.start - last.end
            if hole > Self.tolerance {
                lost.lostSegments += 1
                lost.lostSeconds += hole
            }
        }
        for segment in new {
            let milliseconds = Int64(((segment.start - origin) * 1000).rounded())
            taken.append(Taken(segment: segment, path: "\(folder)/\(milliseconds).m4s"))
        }
        return new.count
    }

    /// Marks a segment lost after its last attempt: its time is a hole in the package.
    mutating func lose(at index: Int) {
        lost.lostSegments += 1
        lost.lostSeconds += taken[index].segment.duration
        taken.remove(at: index)
    }

    private static func text(_ seconds: Double) -> String { String(format: "%.3f", seconds) }
}
