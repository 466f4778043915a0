import ArgumentParser

extension StreamCacheCommand {
    /// `streamcache hls …`: HLS playlists.
    struct HLS: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "hls",
            abstract: "Offline packages (HLS and DASH): download, list and delete them; inspect playlists and MPDs.",
            subcommands: [OfflineDownload.self, HLSList.self, HLSRemove.self, HLSInspect.self]
        )
    }
}
