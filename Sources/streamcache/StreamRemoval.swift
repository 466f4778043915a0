import Foundation
import StreamCache
import StreamCacheHLS

/// What `rm PLAYLIST` removes: the playlist, and the playlists, segments, keys and maps it lists
/// (through its variants and renditions too) that no other cached playlist lists.
struct StreamRemoval {
    /// The cached playlists by key, each with the keys of what it lists.
    private var listed: [String: [String]] = [:]

    /// Reads every complete cached playlist (`.m3u8` in its path) from its data file.
    init(_ resources: [(ResourceRecord, ByteRangeSet)], directory: CacheDirectory, configuration: CacheConfiguration) {
        for (record, ranges) in resources
        where ListingGroups.isPlaylist(record.url) && record.info.isComplete(with: ranges) {
            guard let bytes = FileManager.default.contents(atPath: directory.dataPath(id: record.id)),
                bytes.count < 16 << 20,
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
        return stream.subtracting(elsewhere).union([key])
    }
}
