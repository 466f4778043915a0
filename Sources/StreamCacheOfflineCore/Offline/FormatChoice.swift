/// Tracks named by the ids `download -F` lists, as yt-dlp's `-f` takes them (`v2+a1+s3`): `v`
/// numbers the variants of a multivariant playlist or the video representations of an MPD, `a` the
/// audio renditions or representations, `s` the subtitle ones, each from 1 in document order.
/// A kind not named is chosen by the other criteria (its default audio, no subtitles).
public struct FormatChoice: Hashable, Sendable {
    /// The kinds of track an id names, by its letter.
    public enum Kind: Character, Sendable, CaseIterable {
        case video = "v"
        case audio = "a"
        case subtitles = "s"
    }

    /// The video variant or representation, from 0; `nil`: chosen by the criteria.
    public var video: Int?
    /// Audio renditions or representations, from 0; empty: chosen by the criteria.
    public var audio: [Int] = []
    /// Subtitle renditions or representations, from 0; empty: chosen by the criteria.
    public var subtitles: [Int] = []

    public init(video: Int? = nil, audio: [Int] = [], subtitles: [Int] = []) {
        self.video = video
        self.audio = audio
        self.subtitles = subtitles
    }

    /// Parses ids joined by `+` (or `,`): one `v` id at most, any number of `a` and `s` ids.
    public init?(parsing text: String) {
        let ids = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "+" || $0 == "," })
        guard !ids.isEmpty, ids.count <= 64 else { return nil }
        for id in ids {
            guard let letter = id.first.flatMap({ Kind(rawValue: Character($0.lowercased())) }),
                id.count <= 6, let number = Int(id.dropFirst()), number >= 1
            else { return nil }
            switch letter {
            case .video:
                guard video == nil else { return nil }
                video = number - 1
            case .audio: if !audio.contains(number - 1) { audio.append(number - 1) }
            case .subtitles: if !subtitles.contains(number - 1) { subtitles.append(number - 1) }
            }
        }
    }

    /// The id of the track of `kind` at `index` (from 0) in document order: `v1`, `a2`.
    public static func id(_ kind: Kind, _ index: Int) -> String { "\(kind.rawValue)\(index + 1)" }

    /// The tracks of `listed` (one kind's, in document order) that `indexes` name.
    ///
    /// - Throws: ``OfflineError`` `noMatchingVariant` naming an id past the end and the ids there are.
    package static func pick<Track>(
        _ indexes: [Int],
        of listed: [Track],
        kind: Kind
    ) throws(OfflineError) -> [Track] {
        try indexes.map { index throws(OfflineError) in
            guard listed.indices.contains(index) else {
                let range = listed.isEmpty ? "none" : "\(id(kind, 0))…\(id(kind, listed.count - 1))"
                throw OfflineError(
                    .noMatchingVariant,
                    "no format \(id(kind, index)); the \(kind.name) formats are \(range) (see download -F)"
                )
            }
            return listed[index]
        }
    }
}

extension FormatChoice.Kind {
    /// The kind in words.
    package var name: String {
        switch self {
        case .video: "video"
        case .audio: "audio"
        case .subtitles: "subtitle"
        }
    }
}
