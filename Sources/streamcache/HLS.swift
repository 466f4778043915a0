import ArgumentParser

extension StreamCacheCommand {
    /// `streamcache hls …`: HLS playlists.
    struct HLS: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "hls",
            abstract: "Work with HLS playlists.",
            subcommands: [HLSInspect.self]
        )
    }
}
