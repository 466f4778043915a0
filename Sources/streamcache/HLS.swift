import ArgumentParser

extension StreamCacheCommand {
    /// `streamcache hls …`: HLS playlists.
    struct HLS: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "hls",
            abstract: "Download HLS assets for offline playback, list and delete them, inspect playlists.",
            subcommands: [HLSDownload.self, HLSList.self, HLSRemove.self, HLSInspect.self]
        )
    }
}
