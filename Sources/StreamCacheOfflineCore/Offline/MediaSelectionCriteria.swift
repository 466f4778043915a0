import StreamCacheMediaModel

/// What to download of a multivariant playlist: one variant and its media selections, as
/// AVAssetDownloadTask's options say it (`AVAssetDownloadTaskMinimumRequiredMediaBitrateKey`,
/// media selections).
public struct MediaSelectionCriteria: Hashable, Sendable {
    /// How to choose the variant by bitrate (`BANDWIDTH`).
    public enum Bitrate: Hashable, Sendable {
        /// The highest.
        case highest
        /// The highest at or below this many bits per second.
        case atMost(Int64)
        /// The lowest at or above this many bits per second.
        case atLeast(Int64)
        /// The first listed: where a player starts (AVPlayer starts with a multivariant
        /// playlist's first variant).
        case firstListed
    }

    /// Which renditions of a group to download, by language.
    public enum Languages: Hashable, Sendable {
        /// None.
        case none
        /// The rendition marked `DEFAULT=YES` (the first of the group if none is).
        case `default`
        /// Every rendition of the group.
        case all
        /// The renditions in these languages (`en`, `eng` and `en-US` are one, ``LanguageTags``), in
        /// this order.
        case only([String])

        /// Parses `none`, `default`, `all` or a comma-separated list of language tags.
        public init?(parsing text: String) {
            switch text.lowercased() {
            case "none": self = .none
            case "default": self = .default
            case "all": self = .all
            default:
                let tags = text.split(separator: ",").map { String($0).trimmingSpaces() }
                guard !tags.isEmpty, tags.allSatisfy({ !$0.isEmpty && $0.allSatisfy(Self.isTagCharacter) }) else {
                    return nil
                }
                self = .only(tags)
            }
        }

        private static func isTagCharacter(_ character: Character) -> Bool {
            character.isASCII && (character.isLetter || character.isNumber || character == "-")
        }
    }

    /// The dynamic ranges a device shows (`VIDEO-RANGE`), as Apple's variant qualifiers filter them.
    public enum VideoRanges: Hashable, Sendable {
        /// Any range.
        case any
        /// `SDR` only: variants marked `PQ` or `HLG` (HDR) are not chosen.
        case sdrOnly
    }

    public var bitrate: Bitrate
    /// Variants larger than this (width or height) are not chosen; `nil`: any size.
    public var maxResolution: Resolution?
    /// Variants whose `CODECS` hold one of these (by prefix: `hvc1` matches `hvc1.2.4.L123.B0`)
    /// are not chosen: a codec the device cannot decode, as `["hvc1", "hev1", "dvh1"]` skips HEVC
    /// and Dolby Vision.
    public var excludedCodecs: [String]
    /// Which video ranges may be chosen.
    public var videoRanges: VideoRanges
    public var audio: Languages
    public var subtitles: Languages
    /// Tracks named by their ids (`download -f v2+a1`), before every other criterion.
    public var formats: FormatChoice?
    /// Audio alone (`download -x`): no video track where the stream has its audio apart (an
    /// audio-only variant, an audio rendition, audio representations), and no subtitles.
    public var audioOnly = false

    /// The defaults: the highest-bandwidth variant of any codec and range, its default audio, no
    /// subtitles.
    public init(
        bitrate: Bitrate = .highest,
        maxResolution: Resolution? = nil,
        excludedCodecs: [String] = [],
        videoRanges: VideoRanges = .any,
        audio: Languages = .default,
        subtitles: Languages = .none
    ) {
        self.bitrate = bitrate
        self.maxResolution = maxResolution
        self.excludedCodecs = excludedCodecs
        self.videoRanges = videoRanges
        self.audio = audio
        self.subtitles = subtitles
    }
}

extension MediaSelectionCriteria {
    /// Whether a variant with these `CODECS` and `VIDEO-RANGE` may be chosen (a variant that
    /// does not say may).
    package func allows(codecs: String?, videoRange: String?) -> Bool {
        if videoRanges == .sdrOnly, let range = videoRange?.uppercased(), range == "PQ" || range == "HLG" {
            return false
        }
        guard let codecs, !excludedCodecs.isEmpty else { return true }
        let listed = codecs.split(separator: ",").map { String($0).trimmingSpaces().lowercased() }
        return !listed.contains { codec in excludedCodecs.contains { codec.hasPrefix($0.lowercased()) } }
    }
}
