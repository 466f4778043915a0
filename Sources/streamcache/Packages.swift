import ArgumentParser

extension StreamCacheCommand {
    /// `streamcache packages …` (and its older name, `streamcache hls …`): offline packages of
    /// HLS and DASH streams.
    struct Packages: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "packages",
            abstract: "Offline packages (HLS and DASH): download, list and delete them; inspect playlists and MPDs.",
            discussion: "'streamcache hls ...' is the same group under its older name.",
            subcommands: [OfflineDownload.self, PackageList.self, PackageRemove.self, ManifestInspect.self],
            aliases: ["hls"]
        )
    }
}
