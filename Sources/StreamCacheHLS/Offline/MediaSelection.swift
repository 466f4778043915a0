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
        var candidates = variants.filter { !$0.uri.isEmpty }
        if let limit = criteria.maxResolution {
            candidates = candidates.filter { variant in
                guard let size = variant.resolution else { return true }
                return size.width <= limit.width && size.height <= limit.height
            }
        }
        candidates = candidates.filter { criteria.allows(codecs: $0.codecs, videoRange: $0.attributes["VIDEO-RANGE"]) }
        let chosen: Variant?
        switch criteria.bitrate {
        case .highest:
            chosen = candidates.max { $0.bandwidth < $1.bandwidth }
        case .atMost(let limit):
            chosen = candidates.filter { $0.bandwidth <= limit }.max { $0.bandwidth < $1.bandwidth }
        case .atLeast(let limit):
            chosen = candidates.filter { $0.bandwidth >= limit }.min { $0.bandwidth < $1.bandwidth }
        }
        guard let chosen else {
            let listed = variants.map { variant in
                Bitrate.text(variant.bandwidth) + (variant.resolution.map { " \($0)" } ?? "")
                    + (variant.codecs.map { " \($0)" } ?? "")
                    + (variant.attributes["VIDEO-RANGE"].map { " \($0)" } ?? "")
            }
            throw OfflineError(
                .noMatchingVariant,
                "no variant matches the selection; the variants are: "
                    + (listed.isEmpty ? "none" : listed.joined(separator: ", "))
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
