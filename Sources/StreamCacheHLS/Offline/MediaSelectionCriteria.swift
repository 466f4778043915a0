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
    }

    /// Which renditions of a group to download, by language.
    public enum Languages: Hashable, Sendable {
        /// None.
        case none
        /// The rendition marked `DEFAULT=YES` (the first of the group if none is).
        case `default`
        /// Every rendition of the group.
        case all
        /// The renditions in these languages (`en` matches `en-US`), in this order.
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

    public var bitrate: Bitrate
    /// Variants larger than this (width or height) are not chosen; `nil`: any size.
    public var maxResolution: Resolution?
    public var audio: Languages
    public var subtitles: Languages

    /// The defaults: the highest-bandwidth variant, its default audio, no subtitles.
    public init(
        bitrate: Bitrate = .highest,
        maxResolution: Resolution? = nil,
        audio: Languages = .default,
        subtitles: Languages = .none
    ) {
        self.bitrate = bitrate
        self.maxResolution = maxResolution
        self.audio = audio
        self.subtitles = subtitles
    }
}
