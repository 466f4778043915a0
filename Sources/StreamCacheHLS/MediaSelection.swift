import StreamCacheOfflineCore

/// The variant and renditions an offline download fetches, resolved from a multivariant
/// playlist and ``MediaSelectionCriteria`` before any segment is fetched (AVFoundation's
/// `willDownloadVariants`).
public struct MediaSelection: Hashable, Sendable {
    public var variant: Variant
    /// Audio renditions of the variant's `AUDIO` group (those without a URI are in the variant's
    /// own stream and need no download).
    public var audio: [Rendition]
    /// Subtitle renditions of the variant's `SUBTITLES` group.
    public var subtitles: [Rendition]

    /// Chooses from `playlist` what `criteria` asks for.
    ///
    /// - Throws: ``OfflineError`` `noMatchingVariant` (listing the variants there are) or
    ///   `noMatchingRendition` (listing the languages there are).
    public static func resolve(
        _ playlist: MultivariantPlaylist,
        criteria: MediaSelectionCriteria
    ) throws(OfflineError) -> MediaSelection {
        if criteria.audioOnly { return try resolveAudio(playlist, criteria: criteria) }
        let variant =
            if let index = criteria.formats?.video {
                try FormatChoice.pick([index], of: playlist.variants, kind: .video)[0]
            } else {
                try chooseVariant(playlist.variants, criteria: criteria)
            }
        return try resolve(playlist, variant: variant, criteria: criteria)
    }

    /// The renditions `criteria` choose for `variant` of `playlist` (its bitrate and filters are
    /// not looked at).
    static func resolve(
        _ playlist: MultivariantPlaylist,
        variant: Variant,
        criteria: MediaSelectionCriteria
    ) throws(OfflineError) -> MediaSelection {
        let audio = try chooseRenditions(
            playlist.renditions.filter { $0.type == "AUDIO" },
            of: variant.audio,
            named: criteria.formats?.audio ?? [],
            languages: criteria.audio,
            kind: .audio
        )
        let subtitles = try chooseRenditions(
            playlist.renditions.filter { $0.type == "SUBTITLES" },
            of: variant.subtitles,
            named: criteria.formats?.subtitles ?? [],
            languages: criteria.subtitles,
            kind: .subtitles
        )
        return MediaSelection(variant: variant, audio: audio, subtitles: subtitles)
    }

    /// Audio alone: the best audio-only variant the criteria allow, with its audio renditions;
    /// else the audio rendition the criteria choose for the variant they choose, as a variant of
    /// its own; else that variant, whose audio is in its own stream (its video comes too).
    private static func resolveAudio(
        _ playlist: MultivariantPlaylist,
        criteria: MediaSelectionCriteria
    ) throws(OfflineError) -> MediaSelection {
        var rest = criteria
        rest.audioOnly = false
        rest.subtitles = .none
        let audioVariants = playlist.variants.filter(\.isAudioOnly)
        if !audioVariants.isEmpty, rest.formats?.video == nil {
            var onlyAudio = playlist
            onlyAudio.variants = audioVariants
            rest.maxResolution = nil
            return try resolve(onlyAudio, criteria: rest)
        }
        let selection = try resolve(playlist, criteria: rest)
        guard let rendition = selection.audio.first(where: { $0.uri != nil }), let uri = rendition.uri else {
            return selection
        }
        var attributes = AttributeList()
        // A rendition says no bitrate: a typical audio one stands in for the size estimate.
        attributes.setUnquoted("BANDWIDTH", to: "128000")
        let codecs = (selection.variant.codecs ?? "").split(separator: ",")
            .map { String($0).trimmingSpaces() }.filter(Variant.isAudioCodec)
        if !codecs.isEmpty { attributes.setQuoted("CODECS", to: codecs.joined(separator: ",")) }
        return MediaSelection(variant: Variant(attributes: attributes, uri: uri), audio: [], subtitles: [])
    }

    /// The renditions of `all` (one type's, in document order) for a variant of `group`: those
    /// `named` by their ids, else those `languages` ask for.
    ///
    /// - Throws: ``OfflineError`` `noMatchingRendition` for a named rendition of another group.
    private static func chooseRenditions(
        _ all: [Rendition],
        of group: String?,
        named: [Int],
        languages: MediaSelectionCriteria.Languages,
        kind: FormatChoice.Kind
    ) throws(OfflineError) -> [Rendition] {
        guard !named.isEmpty else {
            return try chooseRenditions(all.filter { $0.groupId == group }, languages: languages, what: kind.name)
        }
        let picked = try FormatChoice.pick(named, of: all, kind: kind)
        for (index, rendition) in zip(named, picked) where rendition.groupId != group {
            throw OfflineError(
                .noMatchingRendition,
                "format \(FormatChoice.id(kind, index)) is in group \(rendition.groupId), and the variant plays "
                    + (group.map { "group \($0)" } ?? "no \(kind.name) group")
            )
        }
        return picked
    }

    private static func chooseVariant(
        _ variants: [Variant],
        criteria: MediaSelectionCriteria
    ) throws(OfflineError) -> Variant {
        let read = { (variant: Variant) in
            VideoChoice.Candidate(
                bandwidth: variant.bandwidth,
                resolution: variant.resolution,
                codecs: variant.codecs,
                videoRange: variant.attributes["VIDEO-RANGE"]
            )
        }
        guard let chosen = VideoChoice.choose(variants.filter { !$0.uri.isEmpty }, criteria: criteria, as: read) else {
            throw OfflineError(
                .noMatchingVariant,
                "no variant matches the selection; the variants are: " + VideoChoice.listing(variants, as: read)
            )
        }
        return chosen
    }

    private static func chooseRenditions(
        _ group: [Rendition],
        languages: MediaSelectionCriteria.Languages,
        what: String
    ) throws(OfflineError) -> [Rendition] {
        switch languages {
        case .none:
            return []
        case .all:
            return group
        case .default:
            return (group.first { $0.isDefault } ?? group.first).map { [$0] } ?? []
        case .only(let tags):
            var chosen: [Rendition] = []
            for tag in tags {
                guard let rendition = group.first(where: { matches($0, tag) }) else {
                    let present = group.map(\.languageOrName)
                    throw OfflineError(
                        .noMatchingRendition,
                        "no \(what) in '\(tag)'; the variant has "
                            + (present.isEmpty ? "no \(what) renditions" : present.joined(separator: ", "))
                    )
                }
                if !chosen.contains(rendition) { chosen.append(rendition) }
            }
            return chosen
        }
    }

    /// `en`, `eng` and `en-US` each match `en`, `eng` and `en-US` (``LanguageTags``).
    private static func matches(_ rendition: Rendition, _ tag: String) -> Bool {
        guard let language = rendition.language else { return false }
        return LanguageTags.sameLanguage(language, tag)
    }
}

extension Rendition {
    /// `LANGUAGE`, else `NAME`.
    public var languageOrName: String { language ?? name }
}

extension Variant {
    /// Whether `CODECS` names audio codecs only and no `RESOLUTION` is given: an audio-only
    /// variant.
    var isAudioOnly: Bool {
        guard resolution == nil, let codecs, !codecs.isEmpty else { return false }
        return codecs.split(separator: ",").allSatisfy { Self.isAudioCodec(String($0).trimmingSpaces()) }
    }

    /// Whether a `CODECS` entry is an audio codec (AAC, AC-3, E-AC-3, Opus, FLAC, MP3, ALAC, DTS).
    static func isAudioCodec(_ codec: String) -> Bool {
        let lowered = codec.lowercased()
        return ["mp4a", "ac-3", "ec-3", "opus", "flac", "fla", "mp3", "alac", "dts", "ac-4"].contains {
            lowered.hasPrefix($0)
        }
    }
}
