import Foundation
import StreamCache

/// What the ``TestOrigin`` serves: files of a directory, or byte arrays held in memory.
final class OriginContent: Sendable {
    private let directory: String?
    /// Serves the directory's VOD media playlists and static MPDs as live streams.
    private let live: LiveSchedule?
    private let memory = Locked<(resources: [String: (bytes: [UInt8], version: Int)], versions: Int)>(([:], 0))
    private let redirects = Locked<[String: (location: String, status: Int)]>([:])

    init(directory: String?, live: LiveSchedule? = nil) {
        self.directory = directory.map { ($0 as NSString).standardizingPath }
        self.live = live
    }

    /// Sets (or replaces, with a new ETag) the bytes served at `path`.
    func set(_ bytes: [UInt8], at path: String) {
        memory.withLock { memory in
            memory.versions += 1
            memory.resources[path] = (bytes, memory.versions)
        }
    }

    /// Makes `path` answer with a redirect to `location` (absolute or relative).
    func setRedirect(_ path: String, to location: String, status: Int) {
        redirects.withLock { $0[path] = (location, status) }
    }

    /// The redirect configured for `path`, if any.
    func redirect(at path: String) -> (location: String, status: Int)? {
        redirects.withLock { $0[path] }
    }

    /// The resource at a request path, if any.
    func resource(at path: String) -> OriginResource? {
        if let entry = memory.withLock({ $0.resources[path] }) {
            return OriginResource(
                length: Int64(entry.bytes.count),
                etag: "\"m\(entry.version)-\(entry.bytes.count)\"",
                lastModified: Date(timeIntervalSince1970: 1_700_000_000 + Double(entry.version)),
                contentType: OriginResource.mimeType(for: path),
                source: .memory(entry.bytes)
            )
        }
        guard let directory, let relative = path.removingPercentEncoding, !relative.contains("\0") else { return nil }
        let components = relative.split(separator: "/")
        guard !components.contains(where: { $0 == ".." || $0 == "." }) else { return nil }
        let filePath = directory + "/" + components.joined(separator: "/")
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: filePath),
            attributes[.type] as? FileAttributeType == .typeRegular,
            let size = (attributes[.size] as? NSNumber)?.int64Value,
            let modified = attributes[.modificationDate] as? Date
        else { return nil }
        let mtime = modified.timeIntervalSince1970
        if let live, let view = Self.liveView(live, of: filePath, type: OriginResource.mimeType(for: path), size: size)
        {
            let bytes = Array(view.text.utf8)
            return OriginResource(
                length: Int64(bytes.count),
                etag: "\"live-\(String(Int64(mtime * 1e6), radix: 16))-\(view.listed)\"",
                lastModified: Date(timeIntervalSince1970: mtime.rounded(.down) + Double(view.listed)),
                contentType: OriginResource.mimeType(for: path),
                source: .memory(bytes)
            )
        }
        return OriginResource(
            length: size,
            etag: "\"f\(String(size, radix: 16))-\(String(Int64(mtime * 1e6), radix: 16))\"",
            lastModified: Date(timeIntervalSince1970: mtime.rounded(.down)),
            contentType: OriginResource.mimeType(for: path),
            source: .file(filePath)
        )
    }

    /// The live view of the playlist or MPD at `filePath` (`type` its media type, `size` its
    /// bytes); `nil` for any other file, or one served as it is.
    private static func liveView(
        _ live: LiveSchedule,
        of filePath: String,
        type: String,
        size: Int64
    ) -> (text: String, listed: Int)? {
        guard size <= 16 << 20, let text = FileManager.default.contents(atPath: filePath) else { return nil }
        switch type {
        case "application/vnd.apple.mpegurl": return live.view(of: Array(text))
        case "application/dash+xml": return live.mpdView(of: Array(text))
        default: return nil
        }
    }
}

/// One resource the origin can send.
struct OriginResource: Sendable {
    enum Source: Sendable {
        case memory([UInt8])
        case file(String)
    }

    let length: Int64
    let etag: String
    let lastModified: Date
    let contentType: String
    let source: Source

    /// Opens a reader of the resource's bytes.
    func reader() throws -> OriginResourceReader {
        switch source {
        case .memory(let bytes): return OriginResourceReader(bytes: bytes)
        case .file(let path): return try OriginResourceReader(path: path)
        }
    }

    static func mimeType(for path: String) -> String {
        switch (path as NSString).pathExtension.lowercased() {
        case "mpd": "application/dash+xml"
        case "mp3": "audio/mpeg"
        case "mp4", "m4v": "video/mp4"
        case "m4a": "audio/mp4"
        case "m3u8": "application/vnd.apple.mpegurl"
        case "ts": "video/mp2t"
        case "aac": "audio/aac"
        case "vtt": "text/vtt"
        case "txt": "text/plain"
        case "json": "application/json"
        default: "application/octet-stream"
        }
    }
}

/// Reads chunks of a resource at offsets.
final class OriginResourceReader {
    private let bytes: [UInt8]?
    private let descriptor: Int32

    init(bytes: [UInt8]) {
        self.bytes = bytes
        descriptor = -1
    }

    init(path: String) throws {
        bytes = nil
        descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// Up to `count` bytes at `offset`, into `buffer`'s writable space; returns how many.
    func read(at offset: Int64, count: Int, into pointer: UnsafeMutableRawBufferPointer) -> Int {
        if let bytes {
            let available = max(0, min(count, bytes.count - Int(offset)))
            bytes.withUnsafeBytes { source in
                pointer.baseAddress!.copyMemory(from: source.baseAddress! + Int(offset), byteCount: available)
            }
            return available
        }
        let result = pread(descriptor, pointer.baseAddress!, count, off_t(offset))
        return max(0, result)
    }
}
