import ArgumentParser
import Foundation
import StreamCache

extension StreamCacheCommand {
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ls",
            abstract: "List cached resources with their cached ranges."
        )

        @Flag(name: .long, help: "Print one JSON document instead of text.")
        var json = false

        @OptionGroup var cache: CacheOptions

        func run() async throws {
            try cache.directory.prepare()
            let index = try CacheIndex(path: cache.directory.indexPath)
            let resources = try await index.allResources()
            if json {
                let entries = resources.map { ResourceListing(record: $0.0, ranges: $0.1) }
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                encoder.dateEncodingStrategy = .iso8601
                print(String(decoding: try encoder.encode(entries), as: UTF8.self))
                return
            }
            if resources.isEmpty {
                print("cache is empty (\(cache.directory.path))")
                return
            }
            for (record, ranges) in resources {
                let length = record.info.length
                let percent = length.map { $0 > 0 ? Double(ranges.count) * 100 / Double($0) : 100 } ?? 0
                print(record.url)
                print(
                    "  \(RangeBar.render(ranges, length: length)) \(String(format: "%5.1f%%", percent))  "
                        + "\(ByteCount.format(ranges.count)) of \(length.map(ByteCount.format) ?? "unknown size")"
                        + "  \(record.info.contentType ?? "-")  last used \(ISO8601DateFormatter().string(from: record.lastAccess))"
                        + (record.pinned ? "  pinned" : "")
                )
            }
            let total = resources.reduce(Int64(0)) { $0 + $1.1.count }
            print("\(resources.count) resource(s), \(ByteCount.format(total)) cached in \(cache.directory.path)")
        }
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

    init(record: ResourceRecord, ranges: RangeSet) {
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
    static func render(_ ranges: RangeSet, length: Int64?, width: Int = 40) -> String {
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
