import StreamCacheMediaModel

/// The one rule that picks the video a package keeps, from playlists' variants and MPDs'
/// representations alike: of those the resolution bound, the codecs and the video range allow,
/// the highest bitrate (`.highest`), the highest at or below the bound (`.atMost`), the lowest
/// at or above it (`.atLeast`), or the first listed (`.firstListed`). When none fits, none is taken: the download stops and says what
/// there is, rather than keep a video the selection ruled out.
package enum VideoChoice {
    /// What the rule reads of a variant or a representation.
    package struct Candidate {
        package let bandwidth: Int64
        package let resolution: Resolution?
        package let codecs: String?
        package let videoRange: String?

        package init(
            bandwidth: Int64,
            resolution: Resolution? = nil,
            codecs: String? = nil,
            videoRange: String? = nil
        ) {
            self.bandwidth = bandwidth
            self.resolution = resolution
            self.codecs = codecs
            self.videoRange = videoRange
        }
    }

    /// The item `criteria` choose of `items`, each read as `candidate` says; `nil` when none fits.
    package static func choose<Item>(
        _ items: [Item],
        criteria: MediaSelectionCriteria,
        as candidate: (Item) -> Candidate
    ) -> Item? {
        let allowed = items.filter { item in
            let read = candidate(item)
            if let limit = criteria.maxResolution, let size = read.resolution,
                size.width > limit.width || size.height > limit.height
            {
                return false
            }
            return criteria.allows(codecs: read.codecs, videoRange: read.videoRange)
        }
        switch criteria.bitrate {
        case .highest:
            return allowed.max { candidate($0).bandwidth < candidate($1).bandwidth }
        case .atMost(let limit):
            return allowed.filter { candidate($0).bandwidth <= limit }.max {
                candidate($0).bandwidth < candidate($1).bandwidth
            }
        case .atLeast(let limit):
            return allowed.filter { candidate($0).bandwidth >= limit }.min {
                candidate($0).bandwidth < candidate($1).bandwidth
            }
        case .firstListed:
            return allowed.first
        }
    }

    /// `items` as the error that says none fits lists them: `1.2 Mbit/s 1280x720 avc1.64001f, …`.
    package static func listing<Item>(_ items: [Item], as candidate: (Item) -> Candidate) -> String {
        guard !items.isEmpty else { return "none" }
        return items.map { item in
            let read = candidate(item)
            return Bitrate.text(read.bandwidth) + (read.resolution.map { " \($0)" } ?? "")
                + (read.codecs.map { " \($0)" } ?? "") + (read.videoRange.map { " \($0)" } ?? "")
        }.joined(separator: ", ")
    }
}
