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
        try resolve(playlist, variant: try chooseVariant(playlist.variants, criteria: criteria), criteria: criteria)
    }

    /// The renditions `criteria` choose for `variant` of `playlist` (its bitrate and filters are
    /// not looked at).
    static func resolve(
        _ playlist: MultivariantPlaylist,
        variant: Variant,
        criteria: MediaSelectionCriteria
    ) throws(OfflineError) -> MediaSelection {
        let audio = try chooseRenditions(
            playlist.renditions.filter { $0.type == "AUDIO" && $0.groupId == variant.audio },
            languages: criteria.audio,
            what: "audio"
        )
        let subtitles = try chooseRenditions(
            playlist.renditions.filter { $0.type == "SUBTITLES" && $0.groupId == variant.subtitles },
            languages: criteria.subtitles,
            what: "subtitles"
        )
        return MediaSelection(variant: variant, audio: audio, subtitles: subtitles)
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
