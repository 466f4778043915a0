import Foundation
import StreamCache
import StreamCacheDASHModel
import StreamCacheOffline

/// What `download -F` prints: every track a download can choose, one line each, with the id
/// `-f` takes (``FormatChoice``), its bitrate, resolution, codecs, language and size estimate.
enum FormatList {
    static let header = ["ID", "KIND", "RESOLUTION", "BITRATE", "CODECS", "LANGUAGE", "SIZE", "NAME"]

    /// The rows of an HLS multivariant playlist: its variants, then its audio and subtitle
    /// renditions; sizes from `seconds`, the duration of a media playlist (`nil`: live or unknown).
    static func rows(of playlist: MultivariantPlaylist, seconds: Double?) -> [[String]] {
        var rows: [[String]] = []
        for (index, variant) in playlist.variants.enumerated() {
            rows.append([
                FormatChoice.id(.video, index), "variant", variant.resolution.map { "\($0)" } ?? "-",
                Bitrate.text(variant.bandwidth), variant.codecs ?? "-", "-",
                size(bandwidth: variant.bandwidth, seconds: seconds),
                [variant.audio.map { "audio=\($0)" }, variant.subtitles.map { "subtitles=\($0)" }]
                    .compactMap { $0 }.joined(separator: " "),
            ])
        }
        for kind in [FormatChoice.Kind.audio, .subtitles] {
            let type = kind == .audio ? "AUDIO" : "SUBTITLES"
            for (index, rendition) in playlist.renditions.filter({ $0.type == type }).enumerated() {
                var name = "\"\(rendition.name)\" group=\(rendition.groupId)"
                if rendition.isDefault { name += " default" }
                if rendition.uri == nil { name += " (in the variant's stream)" }
                rows.append([
                    FormatChoice.id(kind, index), kind.word, "-", "-", "-", rendition.language ?? "-", "-", name,
                ])
            }
        }
        return rows
    }

    /// The rows of a DASH MPD: its video, audio and text representations, each kind numbered in
    /// document order within its period (as `-f` counts them: `v1` is the first video of every
    /// period), the period named where there are several.
    static func rows(of presentation: MediaPresentation, url: URL) -> [[String]] {
        let entries = DASHDescription.entries(presentation, url: url)
        let severalPeriods = Set(entries.map(\.representation.period)).count > 1
        var rows: [[String]] = []
        for kind in FormatChoice.Kind.allCases {
            let type = ["v": "video", "a": "audio", "s": "text"][String(kind.rawValue)]
            var counted: [Int: Int] = [:]
            for entry in entries where entry.representation.contentType == type {
                let representation = entry.representation
                let index = counted[representation.period, default: 0]
                counted[representation.period] = index + 1
                let seconds: Double? =
                    switch entry.segments {
                    case .success(let segments) where segments.sidx == nil:
                        segments.media.reduce(0) { $0 + $1.duration }
                    default: presentation.isDynamic ? nil : representation.periodDuration
                    }
                let resolution = representation.width.flatMap { width in
                    representation.height.map { "\(width)x\($0)" }
                }
                rows.append([
                    FormatChoice.id(kind, index), kind.word, resolution ?? "-",
                    Bitrate.text(representation.bandwidth), representation.codecs ?? "-",
                    representation.language ?? "-", size(bandwidth: representation.bandwidth, seconds: seconds),
                    "id=\(representation.id)"
                        + (representation.roles.isEmpty ? "" : " role=" + representation.roles.joined(separator: ","))
                        + (severalPeriods ? " period=\(representation.period + 1)" : ""),
                ])
            }
        }
        return rows
    }

    /// `~SIZE` (``ByteCount/format(_:)``) for `bandwidth` bits per second over `seconds`; `-`
    /// unknown.
    static func size(bandwidth: Int64, seconds: Double?) -> String {
        guard let seconds, seconds > 0, bandwidth > 0 else { return "-" }
        let bytes = Double(bandwidth) * seconds / 8
        return "~" + ByteSize.text(Int64(bytes))
    }

    /// The table as text, a line on how to choose after it.
    static func text(_ rows: [[String]]) -> String {
        (TextColumns.lines([header] + rows)
            + ["choose with -f, e.g. -f v1+a1 (a kind not named is chosen as without -f)"])
            .joined(separator: "\n") + "\n"
    }

    /// The table as JSON: one object a row, keyed by the header in lower case.
    static func json(_ rows: [[String]]) throws -> Data {
        let objects = rows.map { row in
            Dictionary(uniqueKeysWithValues: zip(header.map { $0.lowercased() }, row))
        }
        return try JSONSerialization.data(
            withJSONObject: objects,
            options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        )
    }
}

extension FormatChoice.Kind {
    /// What the table calls the kind.
    var word: String {
        switch self {
        case .video: "video"
        case .audio: "audio"
        case .subtitles: "subtitles"
        }
    }
}
