import ArgumentParser
import Foundation
import StreamCache
import StreamCacheOffline

extension StreamCacheCommand {
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ls",
            abstract: "List cached resources with their cached ranges (reads only; never evicts).",
            discussion: """
                HLS segments are shown under the playlist beside them, as a count and a total; \
                --segments lists them one by one.
                """
        )

        @Argument(help: "Only resources whose URL starts with this.")
        var prefix: String?

        @Flag(name: .long, help: "Print one JSON object: the totals and the resources.")
        var json = false

        @Flag(name: .long, help: "List HLS segments one by one instead of grouping them under their playlist.")
        var segments = false

        @OptionGroup var cache: CacheOptions

        func run() async throws {
            let directory = cache.directory
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), !isDirectory.boolValue
            {
                throw StreamCacheError(.storage, "cache directory \(directory.path) is a file, not a directory")
            }
            // A folder this user cannot read would look empty: say so instead of listing nothing.
            if access(directory.path, F_OK) == 0, access(directory.path, R_OK | X_OK) != 0 {
                throw StreamCacheError(
                    .storage,
                    "cannot read cache directory \(directory.path): \(String(cString: strerror(errno)))"
                )
            }
            var resources: [(ResourceRecord, ByteRangeSet)] = []
            if directory.hasIndex {
                do {
                    // Read-only: listing works on a cache the user may not write.
                    let index = try CacheIndex(readingAt: directory.indexPath)
                    // Another process may be creating this cache right now: no tables yet, nothing cached.
                    if try await index.hasTables() { resources = try await index.allResources() }
                } catch let error as StreamCacheError
                    where error.kind == .damagedIndex && access(directory.path, W_OK) == 0
                {
                    let aside = try directory.setDamagedIndexAside()
                    Warning.print("\(error.message); moved it to \(aside) and started an empty cache")
                }
            }
            if let prefix { resources = resources.filter { $0.0.url.hasPrefix(prefix) } }
            let settings = (try? CacheSettings.load(from: directory)) ?? CacheSettings()
            let totals = ListingTotals(resources: resources, maxSize: settings.effectiveMaxSize, directory: directory)
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                encoder.dateEncodingStrategy = .iso8601
                let listing = Listing(
                    totals: totals,
                    resources: resources.map { ResourceListing(record: $0.0, ranges: $0.1) }
                )
                print(String(decoding: try encoder.encode(listing), as: UTF8.self))
                return
            }
            print(totals.summary)
            let listed = ListingGroups.segmentOwners(resources, in: directory)
            for entry in ListingGroups.make(resources, groupingSegments: !segments, listed: listed) {
                print(entry.record.url)
                if entry.record.key
                    != CacheConfiguration.canonicalKey(URL(string: entry.record.url) ?? URL(fileURLWithPath: "/"))
                {
                    // A key rule leaves parameters out: the key, then the URL used last.
                    print("  key \(entry.record.key)")
                }
                print("  " + Self.line(entry.record, entry.ranges))
                if entry.segmentCount > 0 {
                    print(
                        "  + \(entry.segmentCount) segment(s), \(ByteCount.format(entry.segmentBytes)) cached "
                            + "(--segments lists them)"
                    )
                }
            }
        }

        /// Why the cache keeps none of a resource's bytes, if it does not: the origin said so.
        static func notStoredReason(_ info: ContentInfo) -> String? {
            if info.stored.vary.contains("*") { return "Vary: *" }
            return info.stored.cacheControl.noStore ? "Cache-Control: no-store" : nil
        }

        /// `2026-11-24T19:48:09Z`: Foundation's Swift formatter, made once (an
        /// `ISO8601DateFormatter` per line would be most of what `ls` does).
        static let timestamp = Date.ISO8601FormatStyle()

        static func padded(_ text: String, to width: Int) -> String {
            String(repeating: " ", count: max(0, width - text.count)) + text
        }

        /// `[####....]  PERCENT%  CACHED of LENGTH  TYPE  last used …`.
        static func line(_ record: ResourceRecord, _ ranges: ByteRangeSet) -> String {
            let length = record.info.length
            let percent = length.map { $0 > 0 ? Double(ranges.count) * 100 / Double($0) : 100 } ?? 0
            return "\(RangeBar.render(ranges, length: length)) \(Self.padded(ByteSize.oneDecimal(percent), to: 5))%  "
                + "\(ByteCount.format(ranges.count)) of \(length.map(ByteCount.format) ?? "unknown size")"
                + "  \(record.info.contentType ?? "-")  last used \(record.lastAccess.formatted(Self.timestamp))"
                + (record.pinned ? "  pinned" : "")
                + (record.info.byteRangeAccess ? "" : "  origin ignores ranges")
                + (Self.notStoredReason(record.info).map { "  not stored: \($0)" } ?? "")
        }
    }
}

/// What `ls` counts over the resources it lists.
struct ListingTotals: Encodable {
    let directory: String
    let resources: Int
    let complete: Int
    let pinned: Int
    let cachedBytes: Int64
    let maxSize: Int64

    init(resources: [(ResourceRecord, ByteRangeSet)], maxSize: Int64, directory: CacheDirectory) {
        self.directory = directory.path
        self.resources = resources.count
        complete = resources.filter { $0.0.info.isComplete(with: $0.1) }.count
        pinned = resources.filter { $0.0.pinned }.count
        cachedBytes = resources.reduce(0) { $0 + $1.1.count }
        self.maxSize = maxSize
    }

    /// `N resources (C complete, P pinned), SIZE cached of a BUDGET budget in DIR`.
    var summary: String {
        "\(resources) resource(s) (\(complete) complete, \(pinned) pinned), \(ByteCount.format(cachedBytes)) cached "
            + "of a \(ByteCount.format(maxSize)) budget in \(directory)"
    }
}

/// `ls --json`: the totals, then every resource.
struct Listing: Encodable {
    let totals: ListingTotals
    let resources: [ResourceListing]
}

/// Resources as `ls` shows them: HLS segments counted under the playlist in their folder.
struct ListingGroups {
    let record: ResourceRecord
    let ranges: ByteRangeSet
    var segmentCount = 0
    var segmentBytes: Int64 = 0

    static let segmentExtensions: Set<String> = [
        "ts", "m4s", "mp4", "m4a", "m4v", "aac", "mp3", "vtt", "webvtt", "key", "cmfv", "cmfa",
    ]

    /// The media playlist that lists each segment URL (and key and map URI), from the cached
    /// playlists themselves; read from their data files, as `ls` only reads.
    static func segmentOwners(
        _ resources: [(ResourceRecord, ByteRangeSet)],
        in directory: CacheDirectory
    ) -> [String: String] {
        var owners: [String: String] = [:]
        for (record, ranges) in resources where isPlaylist(record.url) && record.info.isComplete(with: ranges) {
            guard let bytes = FileManager.default.contents(atPath: directory.dataPath(id: record.id)),
                bytes.count <= ManifestKind.largestDocument,
                case .media(let playlist)? = try? Playlist(parsing: [UInt8](bytes), url: record.url),
                let base = URL(string: record.url)
            else { continue }
            for segment in playlist.segments {
                var uris = [segment.uri] + segment.keys.compactMap { $0.uri }
                if let map = segment.map { uris.append(map.uri) }
                for uri in uris {
                    guard let url = URL(string: uri, relativeTo: base)?.absoluteString else { continue }
                    owners[url] = owners[url] ?? record.url
                }
            }
        }
        return owners
    }

    static func isPlaylist(_ url: String) -> Bool {
        let suffix = path(url).utf8.suffix(5)
        return suffix.count == 5 && zip(suffix, ".m3u8".utf8).allSatisfy { $0 | 0x20 == $1 }
    }

    /// The URL without its query.
    static func path(_ url: String) -> Substring {
        Substring(url.utf8[..<(url.utf8.firstIndex(of: UInt8(ascii: "?")) ?? url.utf8.endIndex)])
    }

    /// The URL's path up to its last `/`, without it.
    static func folder(_ url: String) -> String {
        let path = path(url)
        return String(path.utf8[..<(path.utf8.lastIndex(of: UInt8(ascii: "/")) ?? path.utf8.startIndex)]) ?? ""
    }

    /// The resources, each segment counted under the media playlist that lists it (`listed`:
    /// segment URL → playlist URL), or else under a playlist in its folder.
    static func make(
        _ resources: [(ResourceRecord, ByteRangeSet)],
        groupingSegments: Bool,
        listed: [String: String] = [:]
    ) -> [ListingGroups] {
        var entries = resources.map { ListingGroups(record: $0.0, ranges: $0.1) }
        guard groupingSegments else { return entries }
        let positionOf = Dictionary(
            entries.enumerated().map { ($1.record.url, $0) },
            uniquingKeysWith: { first, _ in first }
        )
        var playlistOfFolder: [String: Int] = [:]
        for (position, entry) in entries.enumerated() where isPlaylist(entry.record.url) {
            let folder = folder(entry.record.url)
            playlistOfFolder[folder] = playlistOfFolder[folder] ?? position
        }
        /// The playlist in the folder of a URL whose extension is a segment's.
        func playlistInFolder(of url: String) -> Int? {
            let name = path(url)
            let ext = name[(name.lastIndex(of: ".").map(name.index(after:)) ?? name.startIndex)...].lowercased()
            return segmentExtensions.contains(ext) ? playlistOfFolder[folder(url)] : nil
        }
        var grouped = Set<Int>()
        for (position, entry) in entries.enumerated() where !isPlaylist(entry.record.url) {
            guard
                let owner = listed[entry.record.url].flatMap({ positionOf[$0] })
                    ?? (playlistOfFolder.isEmpty ? nil : playlistInFolder(of: entry.record.url))
            else { continue }
            entries[owner].segmentCount += 1
            entries[owner].segmentBytes += entry.ranges.count
            grouped.insert(position)
        }
        return entries.enumerated().filter { !grouped.contains($0.offset) }.map(\.element)
    }
}

/// One resource in `ls --json`.
struct ResourceListing: Encodable {
    struct Range: Encodable {
        let offset: Int64
        let length: Int64
    }

    let url: String
    let key: String
    let length: Int64?
    let cachedBytes: Int64
    let complete: Bool
    let ranges: [Range]
    let contentType: String?
    let etag: String?
    let lastModified: String?
    let byteRangeAccess: Bool
    let created: Date
    let lastAccess: Date
    let pinned: Bool

    init(record: ResourceRecord, ranges: ByteRangeSet) {
        url = record.url
        key = record.key
        length = record.info.length
        cachedBytes = ranges.count
        complete = record.info.isComplete(with: ranges)
        self.ranges = ranges.ranges.map { Range(offset: $0.lowerBound, length: $0.count) }
        contentType = record.info.contentType
        etag = record.info.etag
        lastModified = record.info.lastModified
        byteRangeAccess = record.info.byteRangeAccess
        created = record.createdAt
        lastAccess = record.lastAccess
        pinned = record.pinned
    }

    func encode(to encoder: Encoder) throws {
        enum Keys: String, CodingKey {
            case url, key, length, cachedBytes, complete, ranges, contentType, etag, lastModified, byteRangeAccess,
                created, lastAccess, pinned
        }
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(url, forKey: .url)
        try container.encode(key, forKey: .key)
        try container.encode(length, forKey: .length)
        try container.encode(cachedBytes, forKey: .cachedBytes)
        try container.encode(complete, forKey: .complete)
        try container.encode(ranges, forKey: .ranges)
        try container.encode(contentType, forKey: .contentType)
        try container.encode(etag, forKey: .etag)
        try container.encode(lastModified, forKey: .lastModified)
        try container.encode(byteRangeAccess, forKey: .byteRangeAccess)
        try container.encode(created, forKey: .created)
        try container.encode(lastAccess, forKey: .lastAccess)
        try container.encode(pinned, forKey: .pinned)
    }
}

/// The `[####....##..]` picture of which parts of a resource are cached.
enum RangeBar {
    /// `#` for a fully cached cell, `+` for a partly cached one, `.` for an empty one.
    static func render(_ ranges: ByteRangeSet, length: Int64?, width: Int = 40) -> String {
        guard let length, length > 0 else {
            return "[" + String(repeating: ranges.isEmpty ? "." : "?", count: width) + "]"
        }
        var cells = ""
        for cell in 0..<Int64(width) {
            let cellRange = ByteRange(cell * length / Int64(width), (cell + 1) * length / Int64(width))
            if cellRange.isEmpty {
                cells.append(ranges.contains(min(cellRange.lowerBound, length - 1)) ? "#" : ".")
                continue
            }
            let missing = ranges.gaps(in: cellRange).reduce(Int64(0)) { $0 + $1.count }
            cells.append(missing == 0 ? "#" : missing == cellRange.count ? "." : "+")
        }
        return "[" + cells + "]"
    }
}
