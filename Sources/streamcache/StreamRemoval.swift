import Foundation
import StreamCache
import StreamCacheOffline

/// What `rm PLAYLIST` removes: the playlist, and the playlists, segments, keys and maps it lists
/// (through its variants and renditions too) on its own origin that no other cached playlist
/// lists and that are not pinned. A playlist names any URL it likes: what it lists elsewhere is
/// another origin's, and a pinned resource stays until it is unpinned.
struct StreamRemoval {
    /// The cached playlists by key, each with the keys of what it lists.
    private var listed: [String: [String]] = [:]
    /// The cached resources by key: their origin (scheme, host and port), and whether pinned.
    private var resources: [String: (origin: String, pinned: Bool)] = [:]

    /// Reads every complete cached playlist (`.m3u8` in its path) from its data file.
    init(_ resources: [(ResourceRecord, ByteRangeSet)], directory: CacheDirectory, configuration: CacheConfiguration) {
        for (record, _) in resources {
            self.resources[record.key] = (Self.origin(of: record.url), record.pinned)
        }
        for (record, ranges) in resources
        where ListingGroups.isPlaylist(record.url) && record.info.isComplete(with: ranges) {
            guard let bytes = FileManager.default.contents(atPath: directory.dataPath(id: record.id)),
                bytes.count <= ManifestKind.largestDocument,
                let playlist = try? Playlist(parsing: [UInt8](bytes), url: record.url),
                let base = URL(string: record.url)
            else { continue }
            listed[record.key] = playlist.listedURIs.compactMap { uri in
                URL(string: uri, relativeTo: base).map { configuration.cacheKey($0.absoluteURL) }
            }
        }
    }

    /// The keys to remove with the playlist under `key`: it, and whatever it lists, directly or
    /// through the playlists it lists, that no playlist outside those lists.
    func keys(removedWith key: String) -> Set<String> {
        var stream: Set<String> = [key]
        var pending = [key]
        while let next = pending.popLast() {
            for listedKey in listed[next] ?? [] where stream.insert(listedKey).inserted {
                pending.append(listedKey)
            }
        }
        let elsewhere = Set(listed.filter { !stream.contains($0.key) }.values.joined())
        let origin = resources[key]?.origin
        let ours = stream.subtracting(elsewhere).filter { listedKey in
            guard let resource = resources[listedKey] else { return false }
            return resource.origin == origin && !resource.pinned
        }
        return ours.union([key])
    }

    /// `scheme://host:port` of `url`, lowercased (the port the scheme's when none is given).
    private static func origin(of url: String) -> String {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased() else {
            return url
        }
        let port = components.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\((components.host ?? "").lowercased()):\(port)"
    }
}
